package registry

import (
	"hash"
	"hash/fnv"
	"strconv"

	"github.com/heureka-project/heureka"
)

// Digests returns, per application, a hash of what peers must agree on:
// each instance's ID, status, override, lastDirtyTimestamp and metadata.
// Fields each peer sets for itself (timestamps of local changes and
// renewals) are left out, so peers in agreement have equal digests.
// Computed once per snapshot.
func (s *Snapshot) Digests() map[string]uint64 {
	s.digestOnce.Do(func() {
		s.digests = make(map[string]uint64, len(s.views))
		for _, v := range s.views {
			h := newDigest()
			for _, b := range v.blocks {
				for in := range b.All() {
					h.add(in)
				}
			}
			s.digests[v.name] = h.Sum64()
		}
	})
	return s.digests
}

// InstanceDigests returns, for application app, each instance's own
// digest by ID (Digests' hash of that instance alone), or false when app
// has no instances: anti-entropy compares these for an application whose
// digest differs, to pull only the instances that differ.
func (s *Snapshot) InstanceDigests(app string) (map[string]uint64, bool) {
	v, ok := s.view(app)
	if !ok {
		return nil, false
	}
	out := make(map[string]uint64, v.n)
	h := newDigest()
	for _, b := range v.blocks {
		for in := range b.All() {
			h.Reset()
			h.add(in)
			out[in.ID] = h.Sum64()
		}
	}
	return out, true
}

// DigestOf hashes instances (sorted by ID) the way Digests does.
func DigestOf(instances []*heureka.Instance) uint64 {
	h := newDigest()
	for _, in := range instances {
		h.add(in)
	}
	return h.Sum64()
}

// digester hashes instances one at a time.
type digester struct {
	hash.Hash64
	b []byte
}

func newDigest() *digester { return &digester{Hash64: fnv.New64a()} }

func (d *digester) add(in *heureka.Instance) {
	b := d.b[:0]
	b = append(b, in.ID...)
	b = append(b, 0)
	b = append(b, in.Status...)
	b = append(b, 0)
	b = append(b, in.OverriddenStatus...)
	b = append(b, 0)
	b = strconv.AppendInt(b, in.LastDirtyTimestamp, 10)
	for k, v := range in.Metadata.All() { // in key order
		b = append(b, 0)
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	b = append(b, '\n')
	d.Write(b)
	d.b = b
}

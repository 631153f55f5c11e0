package registry

import (
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
			s.digests[v.name] = digest(v.get().Instances)
		}
	})
	return s.digests
}

// DigestOf hashes instances (sorted by ID) the way Digests does.
func DigestOf(instances []*heureka.Instance) uint64 { return digest(instances) }

func digest(instances []*heureka.Instance) uint64 {
	h := fnv.New64a()
	var b []byte
	for _, in := range instances {
		b = b[:0]
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
		h.Write(b)
	}
	return h.Sum64()
}

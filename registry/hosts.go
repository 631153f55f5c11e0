package registry

import (
	"hash/maphash"
	"slices"
	"strings"

	"github.com/heureka-project/heureka"
)

// The host index answers "which instances run on these hosts" in time
// proportional to the answer. It maps each instance's host name (lower
// case) and IP address to the instances that carry it, and is kept by
// record as instances are registered, changed and removed, so no request
// ever walks the table. It is guarded by Registry.mu like the leases.

// hostIndex holds the leases by the hash of each host key they carry. A
// map slot is then a number and a pointer, where a key string and the
// instance's application and ID were 48 bytes and three pointers: at 100k
// instances the index was a fifth of what every collection marked. The
// hash is maphash with a seed of the index's own, so no registrant can
// choose keys that collide; keys that do collide anyway share an entry,
// and get keeps only the leases that carry the key asked for. (Two keys
// of one instance colliding would lose one of them at its next move: a
// chance of 2^-64 an instance, accepted.)
//
// Most hashes are carried by one lease (a DataNode's host name, and its
// address), which is stored in place: a slice would be one more heap
// object per key for the collector to mark. A hash several carry has a
// small slice, which beats a set. A hash many share (every instance of a
// laptop's demo on 127.0.0.1, containers behind one address) also gets a
// map of positions in its slice, so that adding or dropping one of its
// leases stays O(1) rather than a scan of them all.
type hostIndex struct {
	seed maphash.Seed
	one  map[uint64]*lease         // hashes exactly one lease carries
	refs map[uint64][]*lease       // hashes two or more carry
	pos  map[uint64]map[*lease]int // for hashes with more than crowdedHost leases
}

func (x *hostIndex) hash(k string) uint64 { return maphash.String(x.seed, k) }

// get returns the leases whose instance carries k.
func (x *hostIndex) get(k string) []*lease {
	if x.one == nil {
		return nil
	}
	h := x.hash(k)
	var found []*lease
	if l, ok := x.one[h]; ok {
		found = []*lease{l}
	} else {
		found = slices.Clone(x.refs[h])
	}
	return slices.DeleteFunc(found, func(l *lease) bool {
		a, b := hostKeys(l.inst)
		return k != a && k != b
	})
}

// keys is how many hashes are indexed: the distinct keys, but for
// collisions.
func (x *hostIndex) keys() int { return len(x.one) + len(x.refs) }

// crowdedHost is how many instances a key holds before it gets positions;
// it loses them again below half of it.
const crowdedHost = 32

// hostKeys returns in's distinct non-empty keys.
func hostKeys(s *stored) (a, b string) {
	a, b = heureka.HostKey(s.str(sHostName)), heureka.HostKey(s.str(sIPAddr))
	if a == b {
		b = ""
	}
	if a == "" {
		a, b = b, ""
	}
	return a, b
}

// update moves lease l's entries from the keys of prev, the instance it
// held, to those of in, the one it holds now; prev is nil for a new lease
// and in is nil for a removed one.
func (x *hostIndex) update(l *lease, prev, in *stored) {
	if x.refs == nil {
		x.seed = maphash.MakeSeed()
		x.one, x.refs = map[uint64]*lease{}, map[uint64][]*lease{}
	}
	var pa, pb, na, nb string
	if prev != nil {
		pa, pb = hostKeys(prev)
	}
	if in != nil {
		na, nb = hostKeys(in)
	}
	if pa == na && pb == nb {
		return // the common change: status, lease or metadata
	}
	for _, k := range [...]string{pa, pb} {
		if k != "" && k != na && k != nb {
			x.drop(x.hash(k), l)
		}
	}
	for _, k := range [...]string{na, nb} {
		if k != "" && k != pa && k != pb {
			x.add(x.hash(k), l)
		}
	}
}

func (x *hostIndex) add(h uint64, l *lease) {
	if cur, ok := x.one[h]; ok {
		if cur != l {
			delete(x.one, h)
			x.refs[h] = []*lease{cur, l} // crowdedHost is far above two
		}
		return
	}
	refs, ok := x.refs[h]
	if !ok {
		x.one[h] = l
		return
	}
	p := x.pos[h]
	switch {
	case p != nil:
		if _, ok := p[l]; ok {
			return
		}
		p[l] = len(refs)
	case slices.Contains(refs, l):
		return
	}
	refs = append(refs, l)
	x.refs[h] = refs
	if p == nil && len(refs) > crowdedHost {
		p = make(map[*lease]int, len(refs))
		for i, r := range refs {
			p[r] = i
		}
		if x.pos == nil {
			x.pos = map[uint64]map[*lease]int{}
		}
		x.pos[h] = p
	}
}

func (x *hostIndex) drop(h uint64, l *lease) {
	if cur, ok := x.one[h]; ok {
		if cur == l {
			delete(x.one, h)
		}
		return
	}
	refs := x.refs[h]
	p := x.pos[h]
	i := -1
	if p != nil {
		if j, ok := p[l]; ok {
			i = j
			delete(p, l)
		}
	} else {
		i = slices.Index(refs, l)
	}
	if i < 0 {
		return
	}
	last := len(refs) - 1
	if last == 1 { // one left: it goes back in place
		x.one[h] = refs[1-i]
		delete(x.refs, h)
		delete(x.pos, h)
		return
	}
	refs[i] = refs[last]
	if p != nil && i != last {
		p[refs[i]] = i
	}
	refs[last] = nil
	x.refs[h] = refs[:last]
	if p != nil && last < crowdedHost/2 {
		delete(x.pos, h)
	}
}

// HostMatch is the answer for one asked host: the instances whose host name
// or IP address it is, sorted by application and ID.
type HostMatch struct {
	Host      string
	Instances []*heureka.Instance
}

// ByHost returns, for each of hosts in order, the instances whose host name
// (any case) or IP address it is, limited to application app when app is
// not empty (app is matched in upper case, as stored). It stops adding
// instances once max distinct ones have been found and reports truncated;
// max <= 0 means no limit. Its cost is proportional to the hosts asked and
// the instances found, never to the size of the registry. The instances are
// copies made for this call, one per instance: an instance found under two
// of the hosts is the same copy in both.
func (r *Registry) ByHost(hosts []string, app string, max int) (matches []HostMatch, truncated bool) {
	app = strings.ToUpper(strings.TrimSpace(app))
	seen := map[*lease]*heureka.Instance{}
	r.mu.RLock()
	defer r.mu.RUnlock()
	matches = make([]HostMatch, 0, len(hosts))
	for _, h := range hosts {
		m := HostMatch{Host: h}
		for _, l := range r.hosts.get(heureka.HostKey(h)) {
			if app != "" && l.inst.app() != app {
				continue
			}
			in, ok := seen[l]
			if !ok {
				if max > 0 && len(seen) >= max {
					truncated = true
					continue
				}
				in = l.inst.instance()
				seen[l] = in
			}
			m.Instances = append(m.Instances, in)
		}
		slices.SortFunc(m.Instances, func(a, b *heureka.Instance) int {
			if c := strings.Compare(a.App, b.App); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		matches = append(matches, m)
	}
	return matches, truncated
}

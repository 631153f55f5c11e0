package registry

import (
	"slices"
	"strings"

	"github.com/heureka-project/heureka"
)

// The host index answers "which instances run on these hosts" in time
// proportional to the answer. It maps each instance's host name (lower
// case) and IP address to the instances that carry it, and is kept by
// record as instances are registered, changed and removed, so no request
// ever walks the table. It is guarded by Registry.mu like the leases.

// instRef names a stored instance.
type instRef struct{ app, id string }

// hostIndex holds the instances by host key; a key exists while an
// instance carries it. Most keys are carried by one instance (a DataNode's
// host name, and its address), which is stored in place: a slice would be
// one more heap object per key for the collector to mark. A key several
// carry has a small slice, which beats a set. A key many instances share
// (every instance of a laptop's demo on 127.0.0.1, containers behind one
// address) also gets a map of positions in its slice, so that adding or
// dropping one of its instances stays O(1) rather than a scan of them all.
type hostIndex struct {
	one  map[string]instRef         // keys exactly one instance carries
	refs map[string][]instRef       // keys two or more carry
	pos  map[string]map[instRef]int // for keys with more than crowdedHost instances
}

// get returns the instances that carry k.
func (x *hostIndex) get(k string) []instRef {
	if ref, ok := x.one[k]; ok {
		return []instRef{ref}
	}
	return x.refs[k]
}

// keys is how many keys are indexed.
func (x *hostIndex) keys() int { return len(x.one) + len(x.refs) }

// crowdedHost is how many instances a key holds before it gets positions;
// it loses them again below half of it.
const crowdedHost = 32

// HostKey is how a host name or IP address is matched: trimmed, and in
// lower case (host names are case-insensitive; an IP address has no case
// but IPv6 hex digits do).
func HostKey(h string) string { return strings.ToLower(strings.TrimSpace(h)) }

// hostKeys returns in's distinct non-empty keys.
func hostKeys(in *heureka.Instance) (a, b string) {
	a, b = HostKey(in.HostName), HostKey(in.IPAddr)
	if a == b {
		b = ""
	}
	if a == "" {
		a, b = b, ""
	}
	return a, b
}

// update moves an instance's entries from prev's keys to in's; prev is nil
// for a new instance and in is nil for a removed one.
func (x *hostIndex) update(prev, in *heureka.Instance) {
	if x.refs == nil {
		x.one, x.refs = map[string]instRef{}, map[string][]instRef{}
	}
	var pa, pb, na, nb string
	var ref instRef
	if prev != nil {
		pa, pb = hostKeys(prev)
		ref = instRef{prev.App, prev.ID}
	}
	if in != nil {
		na, nb = hostKeys(in)
		ref = instRef{in.App, in.ID}
	}
	if pa == na && pb == nb {
		return // the common change: status, lease or metadata
	}
	for _, k := range [...]string{pa, pb} {
		if k != "" && k != na && k != nb {
			x.drop(k, ref)
		}
	}
	for _, k := range [...]string{na, nb} {
		if k != "" && k != pa && k != pb {
			x.add(k, ref)
		}
	}
}

func (x *hostIndex) add(k string, ref instRef) {
	if cur, ok := x.one[k]; ok {
		if cur != ref {
			delete(x.one, k)
			x.refs[k] = []instRef{cur, ref} // crowdedHost is far above two
		}
		return
	}
	refs, ok := x.refs[k]
	if !ok {
		x.one[k] = ref
		return
	}
	p := x.pos[k]
	switch {
	case p != nil:
		if _, ok := p[ref]; ok {
			return
		}
		p[ref] = len(refs)
	case slices.Contains(refs, ref):
		return
	}
	refs = append(refs, ref)
	x.refs[k] = refs
	if p == nil && len(refs) > crowdedHost {
		p = make(map[instRef]int, len(refs))
		for i, r := range refs {
			p[r] = i
		}
		if x.pos == nil {
			x.pos = map[string]map[instRef]int{}
		}
		x.pos[k] = p
	}
}

func (x *hostIndex) drop(k string, ref instRef) {
	if cur, ok := x.one[k]; ok {
		if cur == ref {
			delete(x.one, k)
		}
		return
	}
	refs := x.refs[k]
	p := x.pos[k]
	i := -1
	if p != nil {
		if j, ok := p[ref]; ok {
			i = j
			delete(p, ref)
		}
	} else {
		i = slices.Index(refs, ref)
	}
	if i < 0 {
		return
	}
	last := len(refs) - 1
	if last == 1 { // one left: it goes back in place
		x.one[k] = refs[1-i]
		delete(x.refs, k)
		delete(x.pos, k)
		return
	}
	refs[i] = refs[last]
	if p != nil && i != last {
		p[refs[i]] = i
	}
	refs[last] = instRef{}
	x.refs[k] = refs[:last]
	if p != nil && last < crowdedHost/2 {
		delete(x.pos, k)
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
// the stored values, which are never modified: callers must not modify
// them either.
func (r *Registry) ByHost(hosts []string, app string, max int) (matches []HostMatch, truncated bool) {
	app = strings.ToUpper(strings.TrimSpace(app))
	seen := map[instRef]bool{}
	r.mu.RLock()
	defer r.mu.RUnlock()
	matches = make([]HostMatch, 0, len(hosts))
	for _, h := range hosts {
		m := HostMatch{Host: h}
		for _, ref := range r.hosts.get(HostKey(h)) {
			if app != "" && ref.app != app {
				continue
			}
			l := r.lookup(ref.app, ref.id)
			if l == nil {
				continue // cannot happen while record keeps the index
			}
			if !seen[ref] {
				if max > 0 && len(seen) >= max {
					truncated = true
					continue
				}
				seen[ref] = true
			}
			m.Instances = append(m.Instances, l.inst)
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

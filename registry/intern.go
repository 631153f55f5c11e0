package registry

import (
	"strings"

	"github.com/heureka-project/heureka"
)

// A fleet's registrations repeat some of their strings: every DataNode has
// the same app name, VIP addresses and data-centre name. A decoder
// allocates each of them afresh, which makes heap objects per stored
// instance for the garbage collector to visit at every cycle. The registry
// keeps one copy of each and points the stored instances at it. (Metadata
// is one block of text per instance, which sharing would not shrink.)

// internLimit bounds the table. When it is full it starts again empty: the
// strings already stored stay shared, values that never repeat (disk usage,
// timestamps) stop taking room, and the common ones come back with the next
// registrations. The table keeps its room when it starts again.
const internLimit = 1 << 16

// internMaxLen is the longest string worth interning; longer ones are
// rarely repeated (URLs, revisions of one build are the exception that a
// limit of this size still admits).
const internMaxLen = 64

// interner is a bounded table of canonical strings; guarded by
// Registry.mu, held for writing.
type interner struct{ m map[string]string }

func (t *interner) str(s string) string {
	if len(s) == 0 || len(s) > internMaxLen {
		return s
	}
	if c, ok := t.m[s]; ok {
		return c
	}
	if t.m == nil {
		t.m = make(map[string]string, 1024)
	}
	if len(t.m) >= internLimit {
		// clear keeps the table's room: a new map would grow to the
		// limit again by splitting and rehashing, allocating as it
		// goes (about 400 B a registration while unique values fill
		// it, in BenchmarkRegisterDataNode).
		clear(t.m)
	}
	// A copy: s may be part of a larger block (a rack is a slice of its
	// instance's metadata), which the table would otherwise keep alive.
	s = strings.Clone(s)
	t.m[s] = s
	return s
}

// instance points a stored copy's repeated strings at their canonical
// copies and puts its own strings into one block (see pack). in must be the
// registry's own, not yet published; stored is the copy it replaces, or
// nil.
func (t *interner) instance(in, stored *heureka.Instance) {
	in.App = t.str(in.App)
	in.AppGroupName = t.str(in.AppGroupName)
	in.Status = canonicalStatus(in.Status)
	in.OverriddenStatus = canonicalStatus(in.OverriddenStatus)
	in.VIPAddress = t.str(in.VIPAddress)
	in.SecureVIPAddress = t.str(in.SecureVIPAddress)
	in.ASGName = t.str(in.ASGName)
	in.SID = t.str(in.SID)
	in.DataCenter.Name = t.str(in.DataCenter.Name)
	pack(in, stored)
}

// ownStrings are the strings of an instance that no other instance shares:
// its ID, host name, address and page and health-check URLs.
func ownStrings(in *heureka.Instance) [7]*string {
	return [...]*string{&in.ID, &in.HostName, &in.IPAddr,
		&in.HomePageURL, &in.StatusPageURL, &in.HealthCheckURL, &in.SecureHealthCheckURL}
}

// pack puts in's own strings into one allocation: one heap object for the
// collector to mark, where a decoder made one per string, and the collector
// pays for each object it marks far more than for each byte.
//
// The lease table and the host index key on the ID, host name and address,
// so a key may point into a block after the instance's value has moved
// on. When in's own strings are those of stored, the copy it replaces, in
// takes stored's block and nothing is allocated: a renewal's registration,
// a status or metadata change never leave a block behind. Only a
// registration that changes one of them (a new port in a URL, a new
// address) makes a new block, and the keys may keep the old one, a few
// hundred bytes, until the instance leaves.
func pack(in, stored *heureka.Instance) {
	fields := ownStrings(in)
	if stored != nil {
		olds := ownStrings(stored)
		same := true
		for i, f := range fields {
			same = same && *f == *olds[i]
		}
		if same {
			for i, f := range fields {
				*f = *olds[i]
			}
			return
		}
	}
	size, n := 0, 0
	for _, f := range fields {
		if *f != "" {
			size += len(*f)
			n++
		}
	}
	if n < 2 {
		return
	}
	var b strings.Builder
	b.Grow(size)
	for _, f := range fields {
		b.WriteString(*f)
	}
	block, off := b.String(), 0
	for _, f := range fields {
		if l := len(*f); l > 0 { // an empty one stays the empty string
			*f = block[off : off+l]
			off += l
		}
	}
}

// canonicalStatus returns the package constant equal to st, whose bytes
// live in the binary rather than on the heap.
func canonicalStatus(st heureka.Status) heureka.Status {
	for _, c := range heureka.Statuses {
		if st == c {
			return c
		}
	}
	return st
}

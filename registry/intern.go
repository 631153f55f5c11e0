package registry

import "strings"

// The registry keeps one copy of each of the strings its leases repeat
// outside their records: the racks they are counted in. (A record keeps
// its own strings in one block, see stored.go.)

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

package registry

import (
	"testing"
	"time"
)

// TestTombstonesArePrunedByTime checks that a tick drops exactly the
// tombstones past TombstoneTTL, including one whose instance came back and
// was cancelled again (its first, stale queue entry must not drop the new
// tombstone).
func TestTombstonesArePrunedByTime(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.TombstoneTTL = 10 * time.Minute })
	cancel := func(id string) {
		t.Helper()
		mustRegister(t, r, inst("DN", id))
		if err := r.Cancel("DN", id, false); err != nil {
			t.Fatal(err)
		}
	}
	cancel("a")
	cancel("b")
	clk.Advance(6 * time.Minute)
	cancel("b") // b again: its tombstone is now 6 min younger
	cancel("c")
	clk.Advance(5 * time.Minute) // a is 11 min old, b and c 5 min
	r.Tick()
	held := func() map[string]bool {
		r.mu.RLock()
		defer r.mu.RUnlock()
		m := map[string]bool{}
		for k := range r.tombs {
			m[k.id] = true
		}
		return m
	}
	if got := held(); len(got) != 2 || !got["b"] || !got["c"] {
		t.Fatalf("tombstones held %v, want b and c", got)
	}
	clk.Advance(5 * time.Minute)
	r.Tick()
	if got := held(); len(got) != 0 {
		t.Fatalf("tombstones held %v after their TTL, want none", got)
	}
	if n := len(r.tombQ); n != 0 {
		t.Fatalf("%d entries left in the tombstone queue", n)
	}
}

package registry

import (
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
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
		if err := r.Cancel(CancelRequest{App: "DN", ID: id}); err != nil {
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

// TestReplicatedRegisterAfterCancelIsRefused: a peer that renewed an
// instance before a cancel reached it sends its copy back as a
// registration when its heartbeat finds nothing here; the cancel stands.
// A copy registered after the cancel, or one that carries no registration
// time (a Netflix peer sends the client's leaseInfo), is taken.
func TestReplicatedRegisterAfterCancelIsRefused(t *testing.T) {
	r, clk := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "gone"))
	peerCopy := get(t, r, "DN", "gone") // as the peer holds it: registered now
	clk.Advance(2 * time.Second)
	if err := r.Cancel(CancelRequest{App: "DN", ID: "gone"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	err := r.Register(peerCopy, true)
	if heureka.ErrorCode(err) != heureka.ECONFLICT || !strings.Contains(err.Error(), "the cancel stands") {
		t.Fatalf("replicated register of a copy from before the cancel: %v; want a conflict saying the cancel stands", err)
	}
	if _, ok := r.Snapshot().Instance("DN", "gone"); ok {
		t.Fatal("the cancelled instance was brought back by a peer's older copy")
	}

	// A client registering the same ID again is a new registration.
	again := inst("DN", "gone")
	again.LastDirtyTimestamp = clk.Now().UnixMilli()
	mustRegister(t, r, again)
	if err := r.Cancel(CancelRequest{App: "DN", ID: "gone"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	newer := peerCopy.Clone()
	newer.Lease.RegistrationTimestamp = clk.Now().UnixMilli() // the peer took it after the cancel
	if err := r.Register(newer, true); err != nil {
		t.Fatalf("replicated register made after the cancel: %v", err)
	}
	if _, ok := r.Snapshot().Instance("DN", "gone"); !ok {
		t.Fatal("a registration made after the cancel was refused")
	}
	if err := r.Cancel(CancelRequest{App: "DN", ID: "gone"}); err != nil {
		t.Fatal(err)
	}
	noTime := peerCopy.Clone()
	noTime.Lease.RegistrationTimestamp = 0
	if err := r.Register(noTime, true); err != nil {
		t.Fatalf("replicated register without a registration time: %v", err)
	}
	if _, ok := r.Snapshot().Instance("DN", "gone"); !ok {
		t.Fatal("a replicated register without a registration time was refused")
	}
}

package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// TestRenewOthersReachesEveryOtherPeerOnce: RenewOthers sends one heartbeat
// to each peer but the one that answered last, marked so that the peer
// does not replicate it; a peer that does not know the instance is sent
// the registration, marked the same way. When the first peer fails, calls move on, and the
// failing peer is among the others, tried once.
func TestRenewOthersReachesEveryOtherPeerOnce(t *testing.T) {
	a, b, c := startServer(t), startServer(t), startServer(t)
	in := a.register(t, "DN", "dn1", heureka.StatusUp)
	cl := newClient(t, a.URL, b.URL, c.URL)
	ctx := context.Background()

	if err := cl.Renew(ctx, "dn", "dn1"); err != nil {
		t.Fatalf("Renew through the first peer: %v", err)
	}
	wa, wb, wc := a.writes.Load(), b.writes.Load(), c.writes.Load()
	if err := cl.RenewOthers(ctx, "dn", "dn1", nil); !errors.Is(err, client.ErrNotRegistered) {
		t.Fatalf("RenewOthers without an instance, at peers that never saw dn1: %v, want ErrNotRegistered", err)
	}
	if a.writes.Load() != wa || b.writes.Load() != wb+1 || c.writes.Load() != wc+1 {
		t.Fatalf("RenewOthers sent %d, %d, %d request(s) to the three peers, want 0, 1, 1",
			a.writes.Load()-wa, b.writes.Load()-wb, c.writes.Load()-wc)
	}
	if err := cl.RenewOthers(ctx, "dn", "dn1", in); err != nil {
		t.Fatalf("RenewOthers with the instance to register: %v", err)
	}
	for name, s := range map[string]*testServer{"second": b, "third": c} {
		if _, ok := s.registry().LastRenewal("DN", "dn1"); !ok {
			t.Errorf("the %s peer does not hold DN/dn1 after RenewOthers registered it there", name)
		}
	}
	if n := b.everyPeer.Load(); n != 3 {
		t.Errorf("the second peer was sent %d request(s) with %s, want 3: two heartbeats and the registration", n, heureka.EveryPeerHeader)
	}

	// A newer copy (the node went DOWN) reaches only the first peer, as in
	// a partition between the peers: the others hold an older copy, answer
	// the heartbeat 404 because of its lastDirtyTimestamp, and are sent
	// the newer copy.
	stored, ok := a.registry().Snapshot().Instance("DN", "dn1")
	if !ok {
		t.Fatal("the first peer lost DN/dn1")
	}
	down := stored.Clone()
	down.Status, down.LastDirtyTimestamp = heureka.StatusDown, time.Now().UnixMilli()+1000 // newer than every copy
	if err := a.registry().Register(down, true); err != nil {
		t.Fatal(err)
	}
	if err := cl.RenewOthers(ctx, "dn", "dn1", down); err != nil {
		t.Fatalf("RenewOthers with a newer copy: %v", err)
	}
	for name, s := range map[string]*testServer{"second": b, "third": c} {
		if got, _ := s.registry().Snapshot().Instance("DN", "dn1"); got == nil || got.Status != heureka.StatusDown {
			t.Errorf("the %s peer holds %v after RenewOthers with the DOWN copy, want DOWN", name, got)
		}
	}

	// The first peer fails: calls move to the second, and the first is one
	// of the others, tried once.
	a.mode.Store(serve503)
	if err := cl.Renew(ctx, "dn", "dn1"); err != nil {
		t.Fatalf("Renew failing over to the second peer: %v", err)
	}
	err := cl.RenewOthers(ctx, "dn", "dn1", in)
	if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "after 1 attempt(s) at 1 URL(s)") {
		t.Fatalf("RenewOthers with the first peer failing: %v, want ErrUnavailable after one attempt at one URL", err)
	}
	if strings.Count(err.Error(), "after 1 attempt") != 1 {
		t.Fatalf("RenewOthers with one peer failing: %v, want exactly one peer's error", err)
	}
}

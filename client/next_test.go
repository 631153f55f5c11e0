package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// TestRenewNextGoesToThePeerAfterThePreferredOne: RenewNext and
// RegisterNext reach the peer after the one that answered last, once; a
// peer that does not know the instance answers ErrNotRegistered, and
// RegisterNext puts it there.
func TestRenewNextGoesToThePeerAfterThePreferredOne(t *testing.T) {
	a, b := startServer(t), startServer(t)
	in := a.register(t, "DN", "dn1", heureka.StatusUp)
	c := newClient(t, a.URL, b.URL)
	ctx := context.Background()

	if err := c.Renew(ctx, "dn", "dn1"); err != nil {
		t.Fatalf("Renew through the first peer: %v", err)
	}
	before := b.writes.Load()
	err := c.RenewNext(ctx, "dn", "dn1")
	if !errors.Is(err, client.ErrNotRegistered) {
		t.Fatalf("RenewNext at a peer that never saw dn1: %v, want ErrNotRegistered", err)
	}
	if b.writes.Load() != before+1 {
		t.Fatalf("RenewNext sent %d request(s) to the second peer, want 1", b.writes.Load()-before)
	}
	if err := c.RegisterNext(ctx, in); err != nil {
		t.Fatalf("RegisterNext: %v", err)
	}
	if err := c.RenewNext(ctx, "dn", "dn1"); err != nil {
		t.Fatalf("RenewNext after RegisterNext: %v", err)
	}

	// The first peer fails: calls move to the second, and "next" is the
	// first again, tried once.
	a.mode.Store(serve503)
	if err := c.Renew(ctx, "dn", "dn1"); err != nil {
		t.Fatalf("Renew failing over to the second peer: %v", err)
	}
	err = c.RenewNext(ctx, "dn", "dn1")
	if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "after 1 attempt(s) at 1 URL(s)") {
		t.Fatalf("RenewNext to the failing first peer: %v, want ErrUnavailable after one attempt at one URL", err)
	}
}

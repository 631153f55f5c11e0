package client_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// TestRenewOthersReachesEveryOtherPeerOnce: RenewOthers sends one heartbeat
// to each peer but the one that answered last, naming every URL of the
// list in heureka.ToldPeersHeader; a peer that does not know the instance
// is sent the registration, with the same header. It returns the URLs
// that answered. When the first peer fails, calls move on, and the
// failing peer is among the others, tried once, and not among those that
// answered.
func TestRenewOthersReachesEveryOtherPeerOnce(t *testing.T) {
	a, b, c := startServer(t), startServer(t), startServer(t)
	in := a.register(t, "DN", "dn1", heureka.StatusUp)
	cl := newClient(t, a.URL, b.URL, c.URL)
	ctx := context.Background()
	every := strings.Join([]string{a.URL, b.URL, c.URL}, ",")

	if err := cl.Renew(ctx, "dn", "dn1"); err != nil {
		t.Fatalf("Renew through the first peer: %v", err)
	}
	wa, wb, wc := a.writes.Load(), b.writes.Load(), c.writes.Load()
	b.takeTold()
	answered, err := cl.RenewOthers(ctx, "dn", "dn1", nil)
	if !errors.Is(err, client.ErrNotRegistered) || len(answered) != 0 {
		t.Fatalf("RenewOthers without an instance, at peers that never saw dn1: %v, %v; want none answered and ErrNotRegistered", answered, err)
	}
	if a.writes.Load() != wa || b.writes.Load() != wb+1 || c.writes.Load() != wc+1 {
		t.Fatalf("RenewOthers sent %d, %d, %d request(s) to the three peers, want 0, 1, 1",
			a.writes.Load()-wa, b.writes.Load()-wb, c.writes.Load()-wc)
	}
	answered, err = cl.RenewOthers(ctx, "dn", "dn1", in)
	if err != nil {
		t.Fatalf("RenewOthers with the instance to register: %v", err)
	}
	if slices.Sort(answered); !slices.Equal(answered, sorted(b.URL, c.URL)) {
		t.Errorf("RenewOthers said %v answered, want the second and third peers %v", answered, sorted(b.URL, c.URL))
	}
	for name, s := range map[string]*testServer{"second": b, "third": c} {
		if _, ok := s.registry().LastRenewal("DN", "dn1"); !ok {
			t.Errorf("the %s peer does not hold DN/dn1 after RenewOthers registered it there", name)
		}
	}
	if got := b.takeTold(); !slices.Equal(got, []string{every, every, every}) {
		t.Errorf("the second peer was sent %q, want three requests (two heartbeats, the registration) naming %q", got, every)
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
	if _, err := cl.RenewOthers(ctx, "dn", "dn1", down); err != nil {
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
	answered, err = cl.RenewOthers(ctx, "dn", "dn1", in)
	if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "after 1 attempt(s) at 1 URL(s)") {
		t.Fatalf("RenewOthers with the first peer failing: %v, want ErrUnavailable after one attempt at one URL", err)
	}
	if strings.Count(err.Error(), "after 1 attempt") != 1 {
		t.Fatalf("RenewOthers with one peer failing: %v, want exactly one peer's error", err)
	}
	if !slices.Equal(answered, []string{c.URL}) {
		t.Fatalf("RenewOthers with the first peer failing said %v answered, want only the third %v", answered, c.URL)
	}
}

// TestRenewToldNamesWhatTheCallerTells: RenewTold's heartbeat names the
// URL it reaches and the URLs of the list its caller tells, in the list's
// order; not a URL the list does not hold, not one this very call failed
// at before it failed over, and never credentials. Renew names nothing,
// and with one URL RenewOthers does nothing.
func TestRenewToldNamesWhatTheCallerTells(t *testing.T) {
	a, b, c := startServer(t), startServer(t), startServer(t)
	for _, s := range []*testServer{a, b, c} {
		s.register(t, "DN", "dn1", heureka.StatusUp)
	}
	// The first URL carries credentials, as an agent's may.
	withPassword := strings.Replace(a.URL, "http://", "http://agent:secret@", 1)
	cl := newClient(t, withPassword, b.URL, c.URL)
	ctx := context.Background()

	for _, k := range []struct {
		name string
		told []string
		want string
	}{
		{"no other peer told", nil, a.URL},
		{"every other peer told", []string{c.URL, b.URL}, a.URL + "," + b.URL + "," + c.URL},
		{"one other peer told", []string{c.URL}, a.URL + "," + c.URL},
		{"a URL the list does not hold", []string{"http://elsewhere:8761/eureka"}, a.URL},
	} {
		a.takeTold()
		if err := cl.RenewTold(ctx, "dn", "dn1", k.told); err != nil {
			t.Fatalf("%s: RenewTold: %v", k.name, err)
		}
		if got := a.takeTold(); !slices.Equal(got, []string{k.want}) {
			t.Errorf("%s: the first peer was sent %q, want one heartbeat naming %q", k.name, got, k.want)
		}
	}

	if err := cl.Renew(ctx, "dn", "dn1"); err != nil {
		t.Fatal(err)
	}
	if got := a.takeTold(); !slices.Equal(got, []string{""}) {
		t.Errorf("Renew sent %q, want one heartbeat with no %s", got, heureka.ToldPeersHeader)
	}

	// The first peer fails during the call: the heartbeat that reaches the
	// second no longer names it, though the caller told it, so the second
	// replicates to it.
	a.mode.Store(serve503)
	b.takeTold()
	if err := cl.RenewTold(ctx, "dn", "dn1", []string{a.URL, b.URL, c.URL}); err != nil {
		t.Fatalf("RenewTold failing over: %v", err)
	}
	if got, want := b.takeTold(), b.URL+","+c.URL; !slices.Equal(got, []string{want}) {
		t.Errorf("after the first peer failed, the second was sent %q, want one heartbeat naming %q", got, want)
	}
	if got := a.takeTold(); len(got) != 1 || got[0] != a.URL+","+b.URL+","+c.URL {
		t.Errorf("the failed attempt at the first peer was sent %q, want one naming all three", got)
	}

	one := newClient(t, b.URL)
	b.takeTold()
	if answered, err := one.RenewOthers(ctx, "dn", "dn1", nil); err != nil || answered != nil {
		t.Fatalf("RenewOthers with one URL: %v, %v; want nil, nil", answered, err)
	}
	if got := b.takeTold(); len(got) != 0 {
		t.Fatalf("RenewOthers with one URL sent %d request(s), want none", len(got))
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

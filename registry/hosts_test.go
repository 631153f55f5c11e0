package registry

import (
	"slices"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// ids flattens a ByHost answer to "host:APP/ID ..." per host, for comparing.
func byHostIDs(ms []HostMatch) map[string][]string {
	out := map[string][]string{}
	for _, m := range ms {
		ids := []string{}
		for _, in := range m.Instances {
			ids = append(ids, in.App+"/"+in.ID)
		}
		out[m.Host] = ids
	}
	return out
}

func TestByHostFollowsRegistrationsChangesAndRemovals(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.SelfPreservation = ModeOff })
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.HostName, in.IPAddr = "Node1.Example", "10.0.0.1" }))
	mustRegister(t, r, inst("NM", "a-nm", func(in *heureka.Instance) { in.HostName, in.IPAddr = "node1.example", "10.0.0.1" }))
	mustRegister(t, r, inst("DN", "b", func(in *heureka.Instance) { in.HostName, in.IPAddr = "node2.example", "10.0.0.2" }))

	got, trunc := r.ByHost([]string{"NODE1.example", "10.0.0.2", "nowhere"}, "", 0)
	want := map[string][]string{"NODE1.example": {"DN/a", "NM/a-nm"}, "10.0.0.2": {"DN/b"}, "nowhere": {}}
	if trunc || !equalIDs(byHostIDs(got), want) {
		t.Fatalf("ByHost = %v (truncated %v), want %v", byHostIDs(got), trunc, want)
	}
	if got, _ := r.ByHost([]string{"10.0.0.1"}, "dn", 0); !equalIDs(byHostIDs(got), map[string][]string{"10.0.0.1": {"DN/a"}}) {
		t.Fatalf("ByHost with app dn = %v, want DN/a only", byHostIDs(got))
	}

	// b moves to a new address: the old one no longer finds it.
	mustRegister(t, r, inst("DN", "b", func(in *heureka.Instance) { in.HostName, in.IPAddr = "node3.example", "10.0.0.3" }))
	got, _ = r.ByHost([]string{"node2.example", "10.0.0.2", "node3.example"}, "", 0)
	want = map[string][]string{"node2.example": {}, "10.0.0.2": {}, "node3.example": {"DN/b"}}
	if !equalIDs(byHostIDs(got), want) {
		t.Fatalf("after b moved: %v, want %v", byHostIDs(got), want)
	}
	// A status change keeps it findable, with the new value.
	if err := r.SetStatus("DN", "b", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	got, _ = r.ByHost([]string{"node3.example"}, "", 0)
	if len(got[0].Instances) != 1 || got[0].Instances[0].Status != heureka.StatusOutOfService {
		t.Fatalf("after the status change: %+v, want b OUT_OF_SERVICE", got[0].Instances)
	}

	// Cancel and eviction remove entries; the key for the shared IP stays
	// while one instance still carries it.
	if err := r.Cancel("NM", "a-nm", false); err != nil {
		t.Fatal(err)
	}
	got, _ = r.ByHost([]string{"10.0.0.1"}, "", 0)
	if !equalIDs(byHostIDs(got), map[string][]string{"10.0.0.1": {"DN/a"}}) {
		t.Fatalf("after cancel: %v, want DN/a", byHostIDs(got))
	}
	clk.Advance(10 * time.Minute)
	if n := r.Tick(); len(r.apps) != 0 || len(r.hosts) != 0 {
		t.Fatalf("after evicting (%d more): %d apps, host index %v; want both empty", n, len(r.apps), r.hosts)
	}
}

func TestByHostStopsAtMax(t *testing.T) {
	r, _ := newTestRegistry(t)
	for _, id := range []string{"a", "b", "c"} {
		mustRegister(t, r, inst("APP", id, func(in *heureka.Instance) { in.HostName = "shared.example" }))
	}
	got, trunc := r.ByHost([]string{"shared.example", "shared.example"}, "", 2)
	if !trunc || len(got[0].Instances) != 2 {
		t.Fatalf("ByHost max 2 = %v truncated %v, want 2 instances and truncated", byHostIDs(got), trunc)
	}
	// The second asking of the same host repeats what was found.
	if len(got[1].Instances) != 2 {
		t.Fatalf("second ask of the same host = %v, want the same 2", byHostIDs(got))
	}
}

func equalIDs(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

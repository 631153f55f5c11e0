package registry

import (
	"fmt"
	"slices"
	"strings"
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
	if err := r.Cancel(CancelRequest{App: "NM", ID: "a-nm"}); err != nil {
		t.Fatal(err)
	}
	got, _ = r.ByHost([]string{"10.0.0.1"}, "", 0)
	if !equalIDs(byHostIDs(got), map[string][]string{"10.0.0.1": {"DN/a"}}) {
		t.Fatalf("after cancel: %v, want DN/a", byHostIDs(got))
	}
	clk.Advance(10 * time.Minute)
	if n := r.Tick(); len(r.apps) != 0 || r.hosts.keys() != 0 {
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

// TestACrowdedHostKeyStaysExact: many instances on one address (a demo on
// 127.0.0.1, containers behind one IP) give that key positions for O(1)
// updates. Through registrations, moves and removals across the crowded
// threshold both ways, the index matches a recount of the leases after
// every step, and ends empty.
func TestACrowdedHostKeyStaysExact(t *testing.T) {
	r, _ := newTestRegistry(t, func(c *Config) { c.SelfPreservation = ModeOff })
	check := func(step string) {
		t.Helper()
		want := map[string][]*lease{}
		for _, a := range r.apps {
			for _, l := range a.leases {
				ka, kb := hostKeys(l.inst)
				for _, k := range []string{ka, kb} {
					if k != "" {
						want[k] = append(want[k], l)
					}
				}
			}
		}
		if len(want) != r.hosts.keys() {
			t.Fatalf("%s: %d keys indexed, a recount has %d", step, r.hosts.keys(), len(want))
		}
		cmp := func(a, b *lease) int {
			return strings.Compare(a.inst.app()+"/"+a.inst.id(), b.inst.app()+"/"+b.inst.id())
		}
		for k, ls := range want {
			got := r.hosts.get(k)
			h := r.hosts.hash(k)
			if _, single := r.hosts.one[h]; single == (len(got) != 1) {
				t.Fatalf("%s: key %s holds %d instances, in place: %v", step, k, len(got), single)
			}
			slices.SortFunc(got, cmp)
			slices.SortFunc(ls, cmp)
			if !slices.Equal(got, ls) {
				t.Fatalf("%s: key %s holds %d leases, a recount %d", step, k, len(got), len(ls))
			}
			if p := r.hosts.pos[h]; p != nil {
				if len(p) != len(got) {
					t.Fatalf("%s: key %s has %d positions for %d instances", step, k, len(p), len(got))
				}
				for l, i := range p {
					if r.hosts.refs[h][i] != l {
						t.Fatalf("%s: key %s places %s at %d, where %s is", step, k, l.inst.id(), i, r.hosts.refs[h][i].inst.id())
					}
				}
			} else if len(got) > crowdedHost {
				t.Fatalf("%s: key %s has %d instances and no positions", step, k, len(got))
			}
		}
	}
	const n = 3 * crowdedHost
	for i := range n {
		mustRegister(t, r, inst("DN", fmt.Sprintf("n%03d", i), func(in *heureka.Instance) {
			in.HostName, in.IPAddr = fmt.Sprintf("n%03d.example", i), "127.0.0.1"
		}))
	}
	check("registered")
	if got, _ := r.ByHost([]string{"127.0.0.1"}, "", 0); len(got[0].Instances) != n {
		t.Fatalf("ByHost(127.0.0.1) found %d, want %d", len(got[0].Instances), n)
	}
	// Every third moves to an address of its own, every third is cancelled.
	for i := 0; i < n; i += 3 {
		mustRegister(t, r, inst("DN", fmt.Sprintf("n%03d", i), func(in *heureka.Instance) {
			in.HostName, in.IPAddr = fmt.Sprintf("n%03d.example", i), fmt.Sprintf("10.0.1.%d", i)
		}))
		if err := r.Cancel(CancelRequest{App: "DN", ID: fmt.Sprintf("n%03d", i+1)}); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("moved n%03d, cancelled n%03d", i, i+1))
	}
	for i := 2; i < n; i += 3 {
		if err := r.Cancel(CancelRequest{App: "DN", ID: fmt.Sprintf("n%03d", i)}); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("cancelled n%03d", i))
	}
	if len(r.hosts.get("127.0.0.1")) != 0 {
		t.Fatal("127.0.0.1 still indexed with no instance on it")
	}
	for i := 0; i < n; i += 3 {
		if err := r.Cancel(CancelRequest{App: "DN", ID: fmt.Sprintf("n%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	check("all cancelled")
	if r.hosts.keys() != 0 || len(r.hosts.pos) != 0 {
		t.Fatalf("index not empty: %d keys, %d with positions", r.hosts.keys(), len(r.hosts.pos))
	}
}

// TestHostIndexCollisionsFindOnlyTheirOwn: keys whose hashes collide share
// an entry; a lookup keeps only the leases that carry the key asked for.
// A collision is made by hand, since the seed is random: b's lease is
// filed under 10.0.0.1's hash as well.
func TestHostIndexCollisionsFindOnlyTheirOwn(t *testing.T) {
	r, _ := newTestRegistry(t, func(c *Config) { c.SelfPreservation = ModeOff })
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.HostName, in.IPAddr = "node1.example", "10.0.0.1" }))
	mustRegister(t, r, inst("DN", "b", func(in *heureka.Instance) { in.HostName, in.IPAddr = "node2.example", "10.0.0.2" }))
	r.hosts.add(r.hosts.hash("10.0.0.1"), r.lookup("DN", "b"))
	got, _ := r.ByHost([]string{"10.0.0.1", "10.0.0.2"}, "", 0)
	want := map[string][]string{"10.0.0.1": {"DN/a"}, "10.0.0.2": {"DN/b"}}
	if !equalIDs(byHostIDs(got), want) {
		t.Fatalf("ByHost with a collision = %v, want %v", byHostIDs(got), want)
	}
}

package hdfs

import (
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/testclock"
)

func TestPenalties(t *testing.T) {
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	p := NewPenalties(10*time.Second, clock.Now)

	p.Penalize("a1", "connect refused")
	clock.Advance(4 * time.Second)
	p.Penalize("b1", "timeout")
	if got, want := p.Active(clock.Now()), map[string]string{"a1": "connect refused", "b1": "timeout"}; !maps.Equal(got, want) {
		t.Fatalf("Active = %v, want %v", got, want)
	}
	// a1 expires at +10 s exactly; b1 at +14 s.
	clock.Advance(6 * time.Second)
	if got := p.Active(clock.Now()); !maps.Equal(got, map[string]string{"b1": "timeout"}) {
		t.Fatalf("Active at +10s = %v", got)
	}
	if p.Len() != 1 {
		t.Fatalf("expired penalty kept: Len = %d", p.Len())
	}
	// Penalising again restarts the clock and replaces the cause.
	p.Penalize("b1", "checksum error")
	clock.Advance(9 * time.Second)
	if got := p.Active(clock.Now()); !maps.Equal(got, map[string]string{"b1": "checksum error"}) {
		t.Fatalf("Active after re-penalty = %v", got)
	}
	p.Forgive("b1")
	p.Forgive("nobody")
	if got := p.Active(clock.Now()); len(got) != 0 {
		t.Fatalf("Active after Forgive = %v", got)
	}
	// Active's map is the caller's.
	p.Penalize("c1", "x")
	m := p.Active(clock.Now())
	m["zz"] = "y"
	if _, ok := p.Active(clock.Now())["zz"]; ok {
		t.Fatal("Active returned the internal map")
	}
	// Active can be asked about any instant.
	if got := p.Active(clock.Now().Add(time.Hour)); len(got) != 0 {
		t.Fatalf("Active an hour later = %v", got)
	}
}

func TestPenaltiesZeroValueAndDefaults(t *testing.T) {
	var p Penalties
	p.Penalize("a1", "x")
	now := time.Now()
	if _, ok := p.Active(now)["a1"]; !ok {
		t.Fatal("zero-value Penalties lost a penalty")
	}
	if _, ok := p.Active(now.Add(DefaultPenaltyDuration + time.Second))["a1"]; ok {
		t.Fatal("penalty outlived DefaultPenaltyDuration")
	}
	q := NewPenalties(0, nil)
	q.Penalize("a1", "x")
	if len(q.Active(time.Now())) != 1 {
		t.Fatal("NewPenalties(0, nil) does not use the defaults")
	}
}

func TestPenaltiesBounded(t *testing.T) {
	clock := testclock.New(time.Unix(0, 0))
	p := NewPenalties(time.Minute, clock.Now)
	for i := range MaxPenalties + 10 {
		p.Penalize(fmt.Sprintf("n%05d", i), "x")
		clock.Advance(time.Millisecond)
	}
	if p.Len() != MaxPenalties {
		t.Fatalf("Len = %d, want %d", p.Len(), MaxPenalties)
	}
	active := p.Active(clock.Now())
	if _, ok := active["n00000"]; ok {
		t.Fatal("the oldest penalty was kept over a newer one")
	}
	if _, ok := active[fmt.Sprintf("n%05d", MaxPenalties+9)]; !ok {
		t.Fatal("the newest penalty was dropped")
	}
}

// TestPenaltiesConcurrent penalises, forgives and reads from eight
// goroutines at once (under -race, a data race fails it) while the clock
// moves, then checks the result: with penalties of an hour nothing
// expires in the 8 s the clock moves, so each node's last call decides
// whether it is penalised, whatever the interleaving.
func TestPenaltiesConcurrent(t *testing.T) {
	clock := testclock.New(time.Unix(0, 0))
	p := NewPenalties(time.Hour, clock.Now)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				id := fmt.Sprintf("g%d-%d", g, i%20)
				p.Penalize(id, "x")
				if i%7 == 0 {
					p.Forgive(id)
				}
				if i%50 == 0 {
					clock.Advance(100 * time.Millisecond)
				}
				if a := p.Active(clock.Now()); a[id] != "x" && i%7 != 0 {
					t.Errorf("%s was just penalised, and Active says %q", id, a[id])
				}
			}
		})
	}
	wg.Wait()
	want := map[string]string{}
	for g := range 8 {
		for k := range 20 {
			if last := 480 + k; last%7 != 0 { // the last i with i%20 == k
				want[fmt.Sprintf("g%d-%d", g, k)] = "x"
			}
		}
	}
	if got := p.Active(clock.Now()); !maps.Equal(got, want) {
		t.Errorf("after the calls %d nodes are penalised, want %d: %v", len(got), len(want), got)
	}
	if p.Len() != len(want) {
		t.Errorf("Len = %d, want %d", p.Len(), len(want))
	}
}

// Penalties feed placement.
func TestPenaltiesInPlacement(t *testing.T) {
	clock := testclock.New(time.Unix(0, 0))
	p := NewPenalties(30*time.Second, clock.Now)
	nodes := cluster3()
	p.Penalize("a1", "pipeline error")
	pl, err := ChooseDataNodes(nodes, PlacementRequest{Writer: "a1.example.net", Penalized: p.Active(clock.Now())})
	if err != nil || pl.Nodes[0].ID == "a1" || pl.Skipped[SkipPenalized] != 1 {
		t.Fatalf("placement = %+v, %v", pl, err)
	}
	clock.Advance(31 * time.Second)
	pl, err = ChooseDataNodes(nodes, PlacementRequest{Writer: "a1.example.net", Penalized: p.Active(clock.Now())})
	if err != nil || pl.Nodes[0].ID != "a1" {
		t.Fatalf("after expiry: %+v, %v", pl, err)
	}
}

package registry

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// appRecs is one application's records, in a listing's order.
type appRecs struct {
	name string
	recs []*stored
}

// referenceDelta is the delta computed from scratch from the change log,
// the way it was before it was kept as blocks: per instance its latest
// change within the window, in order of change, grouped by application.
func referenceDelta(s *Snapshot) []appRecs {
	recent := s.changes[firstAfter(s.changes, s.built.Add(-s.retention)):]
	seen := map[deltaKey]bool{}
	var latest []*stored
	for i := len(recent) - 1; i >= 0; i-- {
		in := recent[i].rec
		if in == nil || seen[deltaKey{in.app(), in.id()}] {
			continue
		}
		seen[deltaKey{in.app(), in.id()}] = true
		latest = append(latest, in)
	}
	slices.Reverse(latest)
	byApp := map[string]int{}
	var apps []appRecs
	for _, in := range latest {
		i, ok := byApp[in.app()]
		if !ok {
			i = len(apps)
			byApp[in.app()] = i
			apps = append(apps, appRecs{name: in.app()})
		}
		apps[i].recs = append(apps[i].recs, in)
	}
	slices.SortStableFunc(apps, func(x, y appRecs) int { return cmp.Compare(x.name, y.name) })
	return apps
}

// checkBlocks asserts that the snapshot's blocks are its listings: the full
// blocks concatenate to Apps, the delta blocks to the reference delta, and
// every block is non-empty and at most twice BlockSize.
func checkBlocks(t *testing.T, s *Snapshot) {
	t.Helper()
	flatten := func(ab []AppBlocks) map[string][]*stored {
		m := map[string][]*stored{}
		for _, a := range ab {
			for _, b := range a.Blocks {
				if b.Len() == 0 || b.Len() > 2*BlockSize {
					t.Fatalf("%s: block of %d instances", a.Name, b.Len())
				}
				m[a.Name] = append(m[a.Name], b.recs...)
			}
		}
		return m
	}
	full := flatten(s.Blocks())
	if len(full) != len(s.Apps().Apps) {
		t.Fatalf("%d applications in blocks, %d in Apps", len(full), len(s.Apps().Apps))
	}
	for _, a := range s.Apps().Apps {
		if !reflect.DeepEqual(instances(full[a.Name]), a.Instances) {
			t.Fatalf("%s: blocks hold %d instances, Apps %d, or others, or in another order", a.Name, len(full[a.Name]), len(a.Instances))
		}
	}
	want := referenceDelta(s)
	got := flatten(s.DeltaBlocks())
	if len(got) != len(want) {
		t.Fatalf("delta: %d applications, want %d", len(got), len(want))
	}
	for i, a := range want {
		if s.DeltaBlocks()[i].Name != a.name || !slices.Equal(got[a.name], a.recs) {
			t.Fatalf("delta %s: %d entries, want %d (or another order)", a.name, len(got[a.name]), len(a.recs))
		}
	}
	d := s.Delta()
	if len(d.Apps) != len(want) || d.VersionDelta != int64(s.Version) {
		t.Fatalf("Delta: %d apps, versions__delta %d", len(d.Apps), d.VersionDelta)
	}
	for i, a := range want {
		if d.Apps[i].Name != a.name || !reflect.DeepEqual(d.Apps[i].Instances, instances(a.recs)) {
			t.Fatalf("Delta %s: not the delta blocks' instances", a.name)
		}
	}
}

func TestBlocksMatchListingsUnderRandomChanges(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.DeltaRetention = time.Minute })
	rng := rand.New(rand.NewPCG(1, 2))
	apps := []string{"DN", "NN", "JN"}
	id := func() (string, string) {
		a := apps[rng.IntN(len(apps))]
		return a, fmt.Sprintf("%s-%04d", a, rng.IntN(700))
	}
	for step := range 3000 {
		app, in := id()
		switch rng.IntN(10) {
		case 0, 1, 2, 3, 4:
			_ = r.Register(inst(app, in), false)
		case 5:
			_ = r.Cancel(CancelRequest{App: app, ID: in})
		case 6:
			_ = r.SetStatus(app, in, heureka.StatusOutOfService, 0, false)
		case 7:
			_ = r.UpdateMetadata(app, in, map[string]string{"k": fmt.Sprint(step)})
		case 8:
			clk.Advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
		case 9:
			r.Note("peer_lost", "p")
		}
		if rng.IntN(25) == 0 {
			checkBlocks(t, r.Snapshot())
		}
	}
	// Everything leaves the window.
	clk.Advance(2 * time.Minute)
	s := r.Snapshot()
	checkBlocks(t, s)
	if len(s.DeltaBlocks()) != 0 {
		t.Fatalf("delta after the window: %d applications", len(s.DeltaBlocks()))
	}
}

// TestOneChangeTouchesOneBlock: after a change to one instance, the new
// snapshot shares every block with the previous one except the full-listing
// block that holds the instance, and in the delta the block of its old
// entry and the tail.
func TestOneChangeTouchesOneBlock(t *testing.T) {
	r, clk := newTestRegistry(t)
	const n = 20 * BlockSize
	for i := range n {
		mustRegister(t, r, inst("DN", fmt.Sprintf("dn-%05d", i)))
		if i%BlockSize == 0 {
			clk.Advance(time.Millisecond)
		}
	}
	before := r.Snapshot()
	checkBlocks(t, before)
	clk.Advance(time.Second)
	if err := r.UpdateMetadata("DN", "dn-00500", map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	after := r.Snapshot()
	checkBlocks(t, after)
	newBlocks := func(old, cur []AppBlocks) int {
		seen := map[*Block]bool{}
		for _, a := range old {
			for _, b := range a.Blocks {
				seen[b] = true
			}
		}
		fresh := 0
		for _, a := range cur {
			for _, b := range a.Blocks {
				if !seen[b] {
					fresh++
				}
			}
		}
		return fresh
	}
	if got := newBlocks(before.Blocks(), after.Blocks()); got != 1 {
		t.Errorf("full listing: %d new blocks after one change, want 1", got)
	}
	if got := newBlocks(before.DeltaBlocks(), after.DeltaBlocks()); got != 2 {
		t.Errorf("delta: %d new blocks after one change, want 2 (old entry's and the tail)", got)
	}
	// A registration storm lands in the delta in blocks of BlockSize.
	for _, b := range before.DeltaBlocks()[0].Blocks {
		if b.Len() != BlockSize {
			t.Fatalf("storm delta block of %d, want %d", b.Len(), BlockSize)
		}
	}
}

// TestDeltaMovesWithTheWindowAlone: with no write, a snapshot taken after
// the oldest entry left the window has a new delta without it.
func TestDeltaMovesWithTheWindowAlone(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.DeltaRetention = time.Minute })
	mustRegister(t, r, inst("DN", "a"))
	clk.Advance(30 * time.Second)
	mustRegister(t, r, inst("DN", "b"))
	s1 := r.Snapshot()
	clk.Advance(31 * time.Second)
	s2 := r.Snapshot()
	if s2 == s1 || s2.Version != s1.Version || !s2.Built().After(s1.Built()) {
		t.Fatalf("the snapshot was not rebuilt when the window moved")
	}
	checkBlocks(t, s2)
	if got := deltaIDs(s2.Delta()); !slices.Equal(got, []string{"DN/b:ADDED"}) {
		t.Fatalf("delta %v, want [b]", got)
	}
	if s3 := r.Snapshot(); s3 != s2 {
		t.Fatal("rebuilt again with nothing changed")
	}
}

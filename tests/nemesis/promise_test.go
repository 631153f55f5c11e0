package main

import (
	"fmt"
	"testing"
	"time"
)

// TestPromisesFollowTheShapeAndTheFault: which peers must serve a live
// instance, for each shape of client and each kind of fault, as
// docs/reliability.md states it.
func TestPromisesFollowTheShapeAndTheFault(t *testing.T) {
	now := time.Unix(1000, 0)
	ago := func(s float64) time.Time { return now.Add(-time.Duration(s * float64(time.Second))) }
	agent := func(shape string, listed ...string) liveInst {
		return liveInst{shape: shape, listed: listed, registered: ago(60), lastOK: ago(0.5)}
	}
	plainVia := func(p string, since float64) liveInst {
		return liveInst{shape: shapePlain, via: p, viaSince: ago(since), registered: ago(60), lastOK: ago(0.5)}
	}
	isolate := func(i int) netState {
		var s netState
		s.cut([]int{i}, ring(3, i))
		return s
	}
	slowOut := func(i int) netState {
		var s netState
		for _, j := range ring(3, i) {
			s.badLink(i, j)
		}
		return s
	}
	bridge := func() netState { // p1 and p3 cannot see each other
		var s netState
		s.cut([]int{1}, []int{3})
		return s
	}
	down := func(p string) netState { return netState{down: map[string]bool{p: true}} }
	stale := agent(shapeEvery, "p1", "p2", "p3")
	stale.lastOK = ago(3)
	young := agent(shapeOne, "p1")
	young.registered = ago(1)

	const yes = "must" // the peer must serve it
	cases := []struct {
		name string
		li   liveInst
		s    netState
		want [3]string // p1, p2, p3: yes, or why not ("" for an instance too young to judge)
	}{
		{"healthy, one URL", agent(shapeOne, "p1"), netState{}, [3]string{yes, yes, yes}},
		{"healthy, a plain client", plainVia("p2", 30), netState{}, [3]string{yes, yes, yes}},
		{"its peer cut off, one URL", agent(shapeOne, "p1"), isolate(1), [3]string{yes, whyCut, whyCut}},
		{"another peer cut off, one URL", agent(shapeOne, "p1"), isolate(3), [3]string{yes, yes, whyCut}},
		{"a peer cut off, every peer listed", agent(shapeEvery, "p1", "p2", "p3"), isolate(3), [3]string{yes, yes, yes}},
		{"the unlisted peer cut off, some peers", agent(shapeSome, "p1", "p2"), isolate(3), [3]string{yes, yes, whyCut}},
		{"a listed peer cut off, some peers", agent(shapeSome, "p1", "p2"), isolate(1), [3]string{yes, yes, yes}},
		{"slow links out of its peer, one URL", agent(shapeOne, "p1"), slowOut(1), [3]string{yes, whyCut, whyCut}},
		{"slow links out of one listed peer, some peers", agent(shapeSome, "p1", "p2"), slowOut(1), [3]string{yes, yes, yes}},
		{"slow links out of another peer, one URL", agent(shapeOne, "p1"), slowOut(2), [3]string{yes, yes, yes}},
		{"bridge, a plain client at one end", plainVia("p1", 30), bridge(), [3]string{yes, yes, whyCut}},
		{"bridge, a plain client in the middle", plainVia("p2", 30), bridge(), [3]string{yes, yes, yes}},
		{"its peer paused, one URL", agent(shapeOne, "p1"), down("p1"), [3]string{whyCut, whyCut, whyCut}},
		{"a listed peer paused, every peer listed", agent(shapeEvery, "p1", "p2", "p3"), down("p1"), [3]string{whyCut, yes, yes}},
		{"a plain client just moved", plainVia("p2", 1), netState{}, [3]string{whyMoved, yes, whyMoved}},
		{"a client that reached no peer lately", stale, netState{}, [3]string{whyNoPeer, whyNoPeer, whyNoPeer}},
		{"an instance just registered", young, netState{}, [3]string{"", "", ""}},
	}
	for _, c := range cases {
		for i, want := range c.want {
			p := fmt.Sprintf("p%d", i+1)
			must, why := promised(&c.li, p, now, c.s)
			if must != (want == yes) || (!must && why != want) {
				t.Errorf("%s: %s must serve it: %v (why not: %q); want %q", c.name, p, must, why, want)
			}
		}
	}
}

// TestAHealSettlesUnderTheNextFault: while a heal settles, a peer is held
// to no more than both the healed fault and the next one allow.
func TestAHealSettlesUnderTheNextFault(t *testing.T) {
	var isolated netState
	isolated.cut([]int{1}, ring(3, 1))
	paused := netState{down: map[string]bool{"p3": true}}
	both := paused.with(isolated)
	for _, c := range []struct {
		from, to string
		want     bool
	}{{"p1", "p2", false}, {"p2", "p1", false}, {"p2", "p3", false}, {"p1", "p3", false}} {
		if got := both.carries(c.from, c.to); got != c.want {
			t.Errorf("%s → %s carries %v, want %v", c.from, c.to, got, c.want)
		}
	}
	if !isolated.with(netState{}).carries("p2", "p3") {
		t.Error("a healed isolation of p1 cuts p2 from p3")
	}
	if len(paused.down) != 1 || len(isolated.down) != 0 {
		t.Errorf("with changed its operands: %v, %v", paused.down, isolated.down)
	}
}

package main

import (
	"testing"
	"time"
)

// TestCheckerTellsCrossPeerReordersFromLosses: a clear lost to an override
// sent through another peer a moment before is reported as the reorder
// Eureka allows and does not fail the run; the same loss after two calls
// through one peer is a loss and fails it.
func TestCheckerTellsCrossPeerReordersFromLosses(t *testing.T) {
	live := map[string]*liveInst{"plain-00-005": {shape: shapePlain}}
	final := map[string]map[string]string{
		"p1": {"plain-00-005": "OUT_OF_SERVICE rev=3"},
		"p2": {"plain-00-005": "OUT_OF_SERVICE rev=3"},
		"p3": {"plain-00-005": "OUT_OF_SERVICE rev=3"},
	}
	calls := func(secondPeer string) []op {
		return []op{
			{At: 10, Proc: "operator", Op: "override", ID: "plain-00-005", Peer: "p3", Result: "ok", Code: 200},
			{At: 11.2, Proc: "operator", Op: "clear", ID: "plain-00-005", Peer: secondPeer, Result: "ok", Code: 200},
		}
	}
	v := check(calls("p1"), final, live, nil, 3*time.Second, nil)
	if v.crossPeer != 3 || v.clearLost != 0 || v.failed() {
		t.Errorf("through two peers: crossPeer %d, clearLost %d, failed %v; want 3, 0, false (%v)", v.crossPeer, v.clearLost, v.failed(), v.details)
	}
	v = check(calls("p3"), final, live, nil, 3*time.Second, nil)
	if v.clearLost != 3 || v.crossPeer != 0 || !v.failed() {
		t.Errorf("through one peer: clearLost %d, crossPeer %d, failed %v; want 3, 0, true", v.clearLost, v.crossPeer, v.failed())
	}
}

// TestCheckerTellsEvictionsFromNewerCopies: a heartbeat answered 404 by a
// peer that acknowledged one a second before is an eviction, unless the
// client registered a newer copy through another peer in between, which
// that peer may not have heard of yet.
func TestCheckerTellsEvictionsFromNewerCopies(t *testing.T) {
	peers := []*peer{{i: 1}, {i: 2}}
	at := func(s float64) time.Time { return time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))) }
	ops := func(between ...op) []op {
		out := []op{{At: 10, at: at(10), Proc: "plain-01", Op: "renew", ID: "plain-01-000", Peer: "p1", Result: "ok", Code: 200}}
		out = append(out, between...)
		return append(out, op{At: 11, at: at(11), Proc: "plain-01", Op: "renew", ID: "plain-01-000", Peer: "p1", Result: "error", Code: 404})
	}
	if v := check(ops(), nil, nil, peers, 3*time.Second, nil); v.evictedLive != 1 {
		t.Errorf("a 404 a second after an acknowledged heartbeat: evictedLive %d, want 1", v.evictedLive)
	}
	newer := op{At: 10.5, at: at(10.5), Proc: "plain-01", Op: "register", ID: "plain-01-000", Peer: "p2", Result: "ok", Code: 204}
	if v := check(ops(newer), nil, nil, peers, 3*time.Second, nil); v.evictedLive != 0 {
		t.Errorf("a 404 after a newer copy registered through p2: evictedLive %d, want 0 (%v)", v.evictedLive, v.details)
	}
}

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

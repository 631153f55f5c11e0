package main

import (
	"slices"
	"time"
)

// What each shape of client is promised, as docs/reliability.md states it
// ("What each shape is promised"): whether a peer must serve a live
// instance at a given moment, given what the fault in force does to the
// peers. A peer that must and does not breaks a promise, and the run
// fails; a peer that need not and does not is a consequence of the fault,
// counted by its reason.

// netState is what the fault in force does to the peers: which cannot
// answer at all (killed or paused), and which replication links cannot
// carry a heartbeat within a lease (cut, or slow or flaky out of a peer).
// The zero value is a healthy cluster.
type netState struct {
	down map[string]bool
	bad  map[[2]string]bool // from → to
}

// with is s and o at once: what either cuts or stops.
func (s netState) with(o netState) netState {
	var out netState
	for _, m := range []map[string]bool{s.down, o.down} {
		for p := range m {
			if out.down == nil {
				out.down = map[string]bool{}
			}
			out.down[p] = true
		}
	}
	for _, m := range []map[[2]string]bool{s.bad, o.bad} {
		for l := range m {
			if out.bad == nil {
				out.bad = map[[2]string]bool{}
			}
			out.bad[l] = true
		}
	}
	return out
}

// carries says whether replication from one peer reaches another in time.
func (s netState) carries(from, to string) bool {
	return !s.down[from] && !s.down[to] && !s.bad[[2]string{from, to}]
}

// cut marks both directions between every pair across a and b as bad.
func (s *netState) cut(a, b []int) {
	for _, pr := range crossPairs(a, b) {
		s.badLink(pr[0], pr[1])
		s.badLink(pr[1], pr[0])
	}
}

// badLink marks replication from peer i to peer j as unable to carry a
// heartbeat in time.
func (s *netState) badLink(i, j int) {
	if s.bad == nil {
		s.bad = map[[2]string]bool{}
	}
	s.bad[[2]string{pname(i), pname(j)}] = true
}

func pname(i int) string { return (&peer{i: i}).name() }

const (
	// fresh: a client whose last call a peer acknowledged this recently
	// reaches a peer now (heartbeats are a second apart).
	fresh = 1500 * time.Millisecond
	// settle: a new instance, or a plain client that moved to another
	// peer, is on every peer its peer reaches within this (a batch goes out
	// after 10 ms; a 404 brings the registration in the next one).
	settle = 2 * time.Second
)

// The reasons a peer need not serve a live instance.
const (
	whyNoPeer = "its client reached no peer"         // no acknowledged call within fresh
	whyCut    = "no link from the peers it talks to" // cut, slow, flaky or down
	whyMoved  = "its client just moved to another peer"
)

// direct is the peers that hear the instance's heartbeats from its client
// itself, as far as state lets them answer: a heureka agent heartbeats
// every peer it lists; a plain client, the peer that answers it.
func (li *liveInst) direct(s netState) []string {
	var out []string
	for _, p := range li.listed {
		if !s.down[p] {
			out = append(out, p)
		}
	}
	if li.via != "" && !s.down[li.via] {
		out = append(out, li.via)
	}
	return out
}

// promised says whether peer p must serve li at now, while state s holds;
// when it need not, why says why. An instance registered less than settle
// ago is promised nowhere yet, and its why is "".
func promised(li *liveInst, p string, now time.Time, s netState) (must bool, why string) {
	switch {
	case now.Sub(li.registered) < settle:
		return false, ""
	case now.Sub(li.lastOK) > fresh:
		return false, whyNoPeer
	}
	direct := li.direct(s)
	if slices.Contains(direct, p) {
		return true, ""
	}
	if li.plain() && now.Sub(li.viaSince) < settle {
		return false, whyMoved
	}
	for _, q := range direct {
		if s.carries(q, p) {
			return true, ""
		}
	}
	return false, whyCut
}

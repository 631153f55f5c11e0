package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/client"
)

// The fault kinds. With three peers a majority/minority split is one peer
// cut off from the other two, so "isolate" is both, and "split" is drawn
// only with five peers (see kindsFor).
var faultKinds = []string{"isolate", "split", "bridge", "slow", "flaky", "kill", "pause", "all-down", "node-death", "clock"}

// kindsFor is the fault kinds a run of n peers draws from by default. With
// three peers it is the list every earlier seed was drawn from, so those
// seeds replay the same schedule.
func kindsFor(n int) []string {
	if n == 3 {
		return slices.DeleteFunc(slices.Clone(faultKinds), func(k string) bool { return k == "split" })
	}
	return slices.Clone(faultKinds)
}

// nemesis injects faults one at a time on a schedule drawn from the seed.
type nemesis struct {
	w      *world
	topo   *topology
	faults map[string]int
	// rng draws the schedule and nothing else, so that a seed replays the
	// same faults however the workload's own draws interleave with them.
	rng *lockedRand

	agentCtx context.Context    // the workload's lifetime, for replacement nodes
	allDead  atomic.Bool        // every peer is killed and none restarted yet
	crash    []chan chan string // each plain agent's crash request (node-death)

	mu      sync.Mutex
	current string          // the fault in force, "recovering" after its heal until the peers agree, "" when healthy
	net     netState        // what the fault in force does (kept while recovering)
	cutOff  map[string]bool // the peers on the minority side of an isolate or split
	// healed is what the last fault healed did, which still holds until
	// healedUntil (healSettle after the heal), whatever comes next.
	healed      netState
	healedUntil time.Time
	agents      []*hagent
	nextAg      int

	converge []time.Duration            // heal → every peer agrees
	unconv   int                        // heals after which the peers did not agree in time
	deaths   map[string][]time.Duration // shape → node death until gone from every peer
	deadLate int                        // dead nodes a peer still served past the bound
	deadHeld int                        // … past it only where self-preservation held expired leases
}

// set records the fault in force and what it does to the peers.
func (n *nemesis) set(kind string, s netState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.current, n.net = kind, s
}

// recovering marks the heal of the fault in force: until the peers agree,
// and for healSettle at least, a peer is held to what it was held to during
// the fault.
func (n *nemesis) recovering() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.current = "recovering"
	n.healed, n.healedUntil = n.net, time.Now().Add(healSettle)
}

// healSettle is how long after a heal its fault still counts: a batch a
// sender wrote into a cut waits out its request timeout (5 s) before the
// sender tries again (within a second), and the heartbeat it then sends a
// peer that dropped the node in the meantime comes back 404 and is
// followed by a registration. With the harness's 3 s leases a peer back
// from a cut may drop, and take back, in that time the nodes it took back
// by anti-entropy at the heal (each lease with its last renewal); with
// 30 s leases it would not.
const healSettle = 7 * time.Second

// state is the fault in force (or "recovering"), what the peers are held
// to (the last heal's fault added while it settles) and the cut-off side.
func (n *nemesis) state() (string, netState, map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	cur, s := n.current, n.net
	if time.Now().Before(n.healedUntil) {
		s = s.with(n.healed)
		if cur == "" {
			cur = "recovering"
		}
	}
	return cur, s, maps.Clone(n.cutOff)
}

func (n *nemesis) setCutOff(peers []int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cutOff = map[string]bool{}
	for _, p := range peers {
		n.cutOff[pname(p)] = true
	}
}

func (n *nemesis) log(result, info string) {
	n.w.h.add(op{Proc: "nemesis", Op: "fault", Result: result, Info: info})
	fmt.Printf("nemesis %6.1fs %s %s\n", time.Since(n.w.h.begin).Seconds(), result, info)
}

func (n *nemesis) run(ctx context.Context, until time.Time) error {
	rng, cfg := n.rng, n.w.cfg
	var deck []string
	for {
		if sleep(ctx, rng.dur(cfg.minGap, cfg.maxGap)) != nil {
			return nil
		}
		if time.Now().After(until) {
			return nil
		}
		var kind string
		if cfg.cover {
			// Every kind once, in an order drawn from the seed, then again.
			if len(deck) == 0 {
				deck = slices.Clone(cfg.kinds)
				for i := len(deck) - 1; i > 0; i-- {
					j := rng.intN(i + 1)
					deck[i], deck[j] = deck[j], deck[i]
				}
			}
			kind, deck = deck[0], deck[1:]
		} else {
			kind = cfg.kinds[rng.intN(len(cfg.kinds))]
		}
		hold := rng.dur(n.w.cfg.minHold, n.w.cfg.maxHold)
		if err := n.inject(ctx, kind, hold); err != nil {
			return err
		}
		n.faults[kind]++
	}
}

func (n *nemesis) inject(ctx context.Context, kind string, hold time.Duration) error {
	rng, ps := n.rng, n.w.peers
	i := rng.intN(len(ps))
	p := ps[i]
	var heal func() error
	switch kind {
	case "isolate":
		n.log("start", fmt.Sprintf("isolate %s from the other peers for %v", p.name(), hold))
		if err := n.topo.cutPeer(p.i, true); err != nil {
			return err
		}
		var st netState
		st.cut([]int{p.i}, ring(len(ps), p.i))
		n.set(kind, st)
		n.setCutOff([]int{p.i})
		heal = func() error {
			n.setCutOff(nil)
			return n.topo.cutPeer(p.i, false)
		}
	case "split":
		major, minor := splitSides(len(ps), p.i, rng.intN)
		n.log("start", fmt.Sprintf("split %s | %s (majority | minority) for %v", peerNames(major), peerNames(minor), hold))
		cuts := crossPairs(major, minor)
		heal = func() error {
			n.setCutOff(nil)
			return n.topo.cutPairs(cuts, false)
		}
		if err := n.topo.cutPairs(cuts, true); err != nil {
			_ = heal()
			return err
		}
		var st netState
		st.cut(major, minor)
		n.set(kind, st)
		n.setCutOff(minor)
	case "bridge":
		left, mid, right := bridgeSides(len(ps), p.i, rng.intN)
		n.log("start", fmt.Sprintf("bridge %s-p%d-%s: %s and %s cannot see each other, for %v",
			peerNames(left), mid, peerNames(right), peerNames(left), peerNames(right), hold))
		cuts := crossPairs(left, right)
		heal = func() error { return n.topo.cutPairs(cuts, false) }
		if err := n.topo.cutPairs(cuts, true); err != nil {
			_ = heal()
			return err
		}
		var st netState
		st.cut(left, right)
		n.set(kind, st)
	case "slow", "flaky":
		what := "1.5 s ± 0.7 s latency each way and 8 KB/s"
		if kind == "flaky" {
			what = "half the connections reset, a third stalled"
		}
		n.log("start", fmt.Sprintf("%s links out of %s (%s) for %v", kind, p.name(), what, hold))
		if err := toxics(p.i, len(ps), kind, true); err != nil {
			return err
		}
		var st netState
		for _, j := range ring(len(ps), p.i) {
			st.badLink(p.i, j)
		}
		n.set(kind, st)
		heal = func() error { return toxics(p.i, len(ps), kind, false) }
	case "kill":
		n.log("start", fmt.Sprintf("kill -9 %s, restart after %v", p.name(), hold))
		n.set(kind, netState{down: map[string]bool{p.name(): true}})
		p.kill()
		heal = func() error { return n.restart(ctx, p) }
	case "pause":
		n.log("start", fmt.Sprintf("SIGSTOP %s for %v", p.name(), hold))
		n.set(kind, netState{down: map[string]bool{p.name(): true}})
		p.signal(syscall.SIGSTOP)
		heal = func() error { p.signal(syscall.SIGCONT); return nil }
	case "all-down":
		n.log("start", fmt.Sprintf("kill -9 every peer, restart after %v", hold))
		st := netState{down: map[string]bool{}}
		for _, q := range ps {
			st.down[q.name()] = true
		}
		n.set(kind, st)
		for _, q := range ps {
			q.kill()
		}
		n.allDead.Store(true)
		heal = func() error {
			n.allDead.Store(false)
			for _, q := range ps {
				if err := q.start(); err != nil {
					return err
				}
			}
			for _, q := range ps {
				if err := q.waitReady(ctx, 30*time.Second); err != nil {
					return err
				}
			}
			return nil
		}
	case "node-death":
		return n.nodeDeath(ctx)
	case "clock":
		// A step forward or back, or a rate, on one peer's clock (the
		// registry's and replication's: see internal/debugclock); the heal
		// sets it to the wall clock again, a step back to real time.
		var query, what string
		switch v := rng.intN(4); v {
		case 0, 1:
			d := rng.dur(10*time.Second, 40*time.Second)
			if v == 1 {
				d = -d
			}
			query, what = "jump="+d.String(), fmt.Sprintf("steps %v", d)
		default:
			rate := []float64{0.5, 0.75, 1.25, 1.5}[rng.intN(4)]
			query, what = fmt.Sprintf("rate=%g", rate), fmt.Sprintf("runs at %gx", rate)
		}
		n.log("start", fmt.Sprintf("clock of %s %s, for %v", p.name(), what, hold))
		if _, err := p.setClock(query); err != nil {
			return err
		}
		n.set(kind, netState{})
		heal = func() error { _, err := p.setClock("reset=true"); return err }
	}
	if sleep(ctx, hold) != nil {
		return heal()
	}
	if err := heal(); err != nil {
		return err
	}
	n.recovering()
	n.log("heal", kind)
	n.measureConvergence(ctx, kind)
	n.set("", netState{})
	return nil
}

func (n *nemesis) restart(ctx context.Context, p *peer) error {
	if err := p.start(); err != nil {
		return err
	}
	return p.waitReady(ctx, 30*time.Second)
}

// measureConvergence polls every peer until they serve the same instances
// with the same statuses and metadata, every instance that should be live
// among them (after all-down: the agents registered again), and none holds
// expired leases in self-preservation (a peer cut off from the others
// keeps what it stopped hearing from, which makes the views agree until it
// lets go), for at most convergeWithin. When they do not, it records each
// peer's view and how they differ (recordDivergence).
func (n *nemesis) measureConvergence(ctx context.Context, kind string) {
	began := time.Now()
	var last []view // the views of the last poll that did not agree
	for time.Since(began) < convergeWithin {
		agree, views := n.w.agree(ctx, "nemesis")
		if agree && n.w.allLive(views[0]) && !n.w.anyProtecting(ctx) {
			d := time.Since(began)
			n.converge = append(n.converge, d)
			n.log("converged", fmt.Sprintf("in %v", d.Round(10*time.Millisecond)))
			if d > slowHeal && last != nil {
				// What held it up, as the last poll before saw it.
				lines := divergence(n.w.peers, last, make([]error, len(last)), n.w.liveCopy(), "")
				for i, l := range lines {
					if i == 3 {
						n.log("slow-heal", fmt.Sprintf("… and %d more", len(lines)-i))
						break
					}
					n.log("slow-heal", l)
				}
			}
			return
		}
		if len(views) == len(n.w.peers) {
			last = views
		}
		if sleep(ctx, 200*time.Millisecond) != nil {
			return
		}
	}
	if ctx.Err() != nil {
		return
	}
	n.unconv++
	name := fmt.Sprintf("unconverged-%d", n.unconv)
	n.log("not-converged", fmt.Sprintf("the peers did not agree within %v of the heal of %s; their views are in %s.txt", convergeWithin, kind, name))
	n.w.recordDivergence(ctx, name, fmt.Sprintf("%v after the heal of %s", convergeWithin, kind), "")
}

// convergeWithin is how long after a heal the peers must agree again;
// a heal slower than slowHeal has its last difference logged.
const (
	convergeWithin = 30 * time.Second
	slowHeal       = 3 * time.Second
)

// allLive says whether view holds every instance that should be live.
func (w *world) allLive(v view) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.live {
		if _, ok := v[id]; !ok {
			return false
		}
	}
	return true
}

// agree fetches every peer and says whether they serve the same thing.
func (w *world) agree(ctx context.Context, proc string) (bool, []view) {
	var views []view
	for _, p := range w.peers {
		v, err := w.fetchView(ctx, proc, p)
		if err != nil {
			return false, nil
		}
		views = append(views, v)
	}
	first := views[0].seen()
	for _, v := range views[1:] {
		if !maps.Equal(v.seen(), first) {
			return false, views
		}
	}
	return true, views
}

// nodeDeath stops one node without a word, a heureka agent's or a plain
// client's (drawn from the seed), and measures how long until no peer
// serves it; past lease + deathSlack it counts as served late.
func (n *nemesis) nodeDeath(ctx context.Context) error {
	n.mu.Lock()
	agents := len(n.agents)
	n.mu.Unlock()
	k := n.rng.intN(agents + len(n.crash))
	n.set("node-death", netState{})
	defer n.set("", netState{})
	var id, shape string
	var died time.Time
	if k < agents {
		n.mu.Lock()
		ha := n.agents[k]
		n.mu.Unlock()
		n.log("start", fmt.Sprintf("node %s (%s, %s) dies", ha.id, ha.proc, ha.shape))
		died = time.Now()
		ha.die(n.w)
		id, shape = ha.id, ha.shape
		// A new node of the same shape takes its place.
		na, err := n.w.startHAgent(n.agentCtx, n.nextAg, ha.shape)
		if err != nil {
			return err
		}
		n.mu.Lock()
		n.agents[k] = na
		n.nextAg++
		n.mu.Unlock()
	} else {
		a := k - agents
		reply := make(chan string, 1)
		select {
		case n.crash[a] <- reply:
		case <-time.After(3 * time.Second):
			n.log("start", fmt.Sprintf("node-death: plain-%02d is between instances; nothing dies", a))
			return nil
		case <-ctx.Done():
			return nil
		}
		id, shape, died = <-reply, shapePlain, time.Now()
		n.log("start", fmt.Sprintf("node %s (plain-%02d, %s) dies", id, a, shapePlain))
	}
	limit := n.w.cfg.lease + deathSlack
	// goneBy[p] is when the first fetch of p in its current streak of
	// fetches without the node ended: p had dropped it by then. held[p]
	// says p's self-preservation was holding expired leases while it still
	// served the node after its lease.
	goneBy, held := map[string]time.Time{}, map[string]bool{}
	recorded := false
	for {
		for _, p := range n.w.peers {
			v, err := n.w.fetchView(ctx, "nemesis", p)
			end := time.Now()
			_, served := v[id]
			if err != nil || served {
				delete(goneBy, p.name())
			} else if goneBy[p.name()].IsZero() {
				goneBy[p.name()] = end
			}
			if served && end.Sub(died) > n.w.cfg.lease && n.w.protecting(ctx, p) {
				held[p.name()] = true
			}
		}
		since := time.Since(died)
		gone := len(goneBy) == len(n.w.peers)
		if !gone && since > limit && !recorded {
			recorded = true
			name := "late-death-" + id
			n.log("late", fmt.Sprintf("node-death: %s (%s) still served %v after it died, past lease + %v; the peers' views are in %s.txt",
				id, shape, since.Round(10*time.Millisecond), deathSlack, name))
			n.w.recordDivergence(ctx, name, fmt.Sprintf("%s died %v before", id, since.Round(time.Millisecond)), id)
		}
		if gone || since > limit+maxHeld {
			d := since
			if gone {
				d = 0
				for _, t := range goneBy {
					d = max(d, t.Sub(died))
				}
			}
			n.deaths[shape] = append(n.deaths[shape], d)
			// Past the bound only on peers whose self-preservation held
			// expired leases meanwhile is what self-preservation is for;
			// past it anywhere else breaks the promise.
			late, excused := false, true
			for _, p := range n.w.peers {
				if t, ok := goneBy[p.name()]; !ok || t.Sub(died) > limit {
					late = true
					excused = excused && held[p.name()]
				}
			}
			switch {
			case late && excused:
				n.deadHeld++
			case late:
				n.deadLate++
			}
			what := fmt.Sprintf("gone from every peer %v after it died", d.Round(10*time.Millisecond))
			if !gone {
				what = fmt.Sprintf("still served %v after it died", d.Round(10*time.Millisecond))
			}
			if late && excused {
				what += ", held by self-preservation"
			}
			n.log("heal", fmt.Sprintf("node-death: %s (%s) %s", id, shape, what))
			return nil
		}
		if sleep(ctx, 200*time.Millisecond) != nil {
			return nil // interrupted: nothing measured
		}
	}
}

// anyProtecting says whether some peer's self-preservation is holding
// expired leases.
func (w *world) anyProtecting(ctx context.Context) bool {
	for _, p := range w.peers {
		if w.protecting(ctx, p) {
			return true
		}
	}
	return false
}

// protecting says whether p's self-preservation is holding expired leases
// (GET /v1/status); false when p does not answer.
func (w *world) protecting(ctx context.Context, p *peer) bool {
	b, err := w.getRaw(ctx, p, "/v1/status")
	if err != nil {
		return false
	}
	var st struct {
		SelfPreservation struct {
			Active bool `json:"active"`
		} `json:"selfPreservation"`
	}
	return json.Unmarshal(b, &st) == nil && st.SelfPreservation.Active
}

// maxHeld is how long past the bound a dead node's death is measured
// before it counts as still served.
const maxHeld = 20 * time.Second

// deathSlack is what docs/reliability.md promises beyond a lease: a dead
// node is gone from every peer within its lease and this.
const deathSlack = 5 * time.Second

// missStats is what the sampler found: per phase and shape, the
// (instance, peer) samples where the peer had to serve the instance, those
// where it had to and did not (broken promises), and those where it need
// not and did not, by reason.
type missStats struct {
	mu      sync.Mutex
	fetches map[string]int
	cells   map[[2]string]*missCell // phase, shape
	broken  int
	// missingSince is when each (instance, peer) pair was first seen
	// missing in its current stretch; longest is, per shape, the longest
	// stretch seen.
	missingSince map[[2]string]time.Time
	longest      map[string]time.Duration
	first        []string // the first broken promises, for the report
}

type missCell struct {
	promised, broken int
	allowed          map[string]int // reason → samples
}

func newMissStats() *missStats {
	return &missStats{fetches: map[string]int{}, cells: map[[2]string]*missCell{},
		missingSince: map[[2]string]time.Time{}, longest: map[string]time.Duration{}}
}

func (ms *missStats) cell(phase, shape string) *missCell {
	c := ms.cells[[2]string{phase, shape}]
	if c == nil {
		c = &missCell{allowed: map[string]int{}}
		ms.cells[[2]string{phase, shape}] = c
	}
	return c
}

// phaseOf names where peer p is in the fault in force, for the report.
func phaseOf(current string, cutOff map[string]bool, p string) string {
	switch current {
	case "":
		return "healthy"
	case "isolate":
		if cutOff[p] {
			return "isolate/cut-off"
		}
		return "isolate/majority"
	case "split":
		if cutOff[p] {
			return "split/minority"
		}
		return "split/majority"
	}
	return current
}

// sampler reads every answering peer's full registry twice a second and
// judges each live instance against what its shape is promised (promised).
// A broken promise goes to the history (checker, missing) with what the
// judgement rested on.
func (n *nemesis) sampler(ctx context.Context, ms *missStats) {
	for ctx.Err() == nil {
		if sleep(ctx, 500*time.Millisecond) != nil {
			return
		}
		for _, p := range n.w.peers {
			current, st, cutOff := n.state()
			if st.down[p.name()] && current != "recovering" {
				continue // killed or paused: it cannot answer
			}
			phase := phaseOf(current, cutOff, p.name())
			before := n.w.liveCopy()
			v, err := n.w.fetchView(ctx, "reader", p)
			if err != nil {
				continue
			}
			// The peer built its answer at some moment of the fetch. A
			// promise holds for the whole fetch only on what the clients had
			// had acknowledged before it began, still fresh at its end: a
			// fetch slowed by a stalled machine then holds no peer to a
			// renewal older than it looks, nor to one made while it ran.
			ended := time.Now()
			after := n.w.liveCopy()
			ms.mu.Lock()
			ms.fetches[phase]++
			for id, li := range before {
				if a, ok := after[id]; !ok || !a.registered.Equal(li.registered) {
					continue // cancelled or died while the fetch ran
				}
				must, why := promised(&li, p.name(), ended, st)
				key := [2]string{id, p.name()}
				_, served := v[id]
				if served {
					delete(ms.missingSince, key)
				} else if first, ok := ms.missingSince[key]; !ok {
					ms.missingSince[key] = ended
				} else {
					ms.longest[li.shape] = max(ms.longest[li.shape], ended.Sub(first))
				}
				c := ms.cell(phase, li.shape)
				switch {
				case must && served:
					c.promised++
				case must:
					c.promised++
					c.broken++
					ms.broken++
					info := fmt.Sprintf("%s during %s: heartbeats to %v, the last acknowledged %.1fs before, registered %.1fs before; %s must serve it",
						li.shape, phase, li.direct(st), ended.Sub(li.lastOK).Seconds(), ended.Sub(li.registered).Seconds(), p.name())
					o := n.w.h.add(op{Proc: "checker", Op: "missing", ID: id, Peer: p.name(), Result: "error", Info: info})
					if len(ms.first) < 10 {
						ms.first = append(ms.first, fmt.Sprintf("missing at %.1fs: %s on %s (%s)", o.At, id, p.name(), info))
					}
				case !served && why != "":
					c.allowed[why]++
				}
			}
			ms.mu.Unlock()
		}
	}
}

// report is the sampler's table: per phase and shape, the samples where
// a peer had to serve a live instance and the broken promises among them,
// and the misses allowed by reason.
func (ms *missStats) report(peers int) string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "live instances on the peers, sampled from full fetches; each cell is broken/promised (a peer had to serve the instance: must be 0/…), then +allowed misses:\n")
	fmt.Fprintf(&b, "  %-17s %7s", "phase", "fetches")
	for _, sh := range shapes {
		fmt.Fprintf(&b, "  %-17s", sh)
	}
	phases := []string{"healthy", "isolate/majority", "isolate/cut-off", "bridge", "slow", "flaky", "kill", "pause", "clock", "node-death", "recovering"}
	if peers > 3 {
		phases = slices.Insert(phases, 3, "split/majority", "split/minority")
	}
	allowed := map[string]map[string]int{}
	for _, ph := range phases {
		fmt.Fprintf(&b, "\n  %-17s %7d", ph, ms.fetches[ph])
		for _, sh := range shapes {
			c := ms.cells[[2]string{ph, sh}]
			if c == nil {
				c = &missCell{}
			}
			cell := fmt.Sprintf("%d/%d", c.broken, c.promised)
			n := 0
			for why, k := range c.allowed {
				n += k
				if allowed[sh] == nil {
					allowed[sh] = map[string]int{}
				}
				allowed[sh][why] += k
			}
			if n > 0 {
				cell += fmt.Sprintf(" +%d", n)
			}
			fmt.Fprintf(&b, "  %-17s", cell)
		}
	}
	fmt.Fprintf(&b, "\nallowed misses by reason, and the longest stretch an instance was missing from a peer:")
	for _, sh := range shapes {
		fmt.Fprintf(&b, "\n  %-13s", sh)
		for _, why := range []string{whyNoPeer, whyCut, whyMoved} {
			fmt.Fprintf(&b, " %s: %d;", why, allowed[sh][why])
		}
		fmt.Fprintf(&b, " longest %v", ms.longest[sh].Round(100*time.Millisecond))
	}
	b.WriteString("\n")
	return b.String()
}

// liveCopy is a copy of the live instances.
func (w *world) liveCopy() map[string]liveInst {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]liveInst, len(w.live))
	for id, li := range w.live {
		out[id] = *li
	}
	return out
}

// cacheStats are what a client.Cache answered while every peer was dead.
type cacheStats struct {
	reads, empty int
}

// cacheReader reads the heureka agents' application from a client.Cache
// over every peer twice a second; while every peer is dead it must
// go on answering from its last snapshot.
func (n *nemesis) cacheReader(ctx context.Context, st *cacheStats) error {
	ccfg := client.DefaultConfig()
	for _, p := range n.w.peers {
		ccfg.URLs = append(ccfg.URLs, p.clientURL())
	}
	ccfg.ConnectTimeout, ccfg.ReadTimeout = time.Second, 2*time.Second
	ccfg.Logger = slog.New(slog.DiscardHandler)
	c, err := client.New(ccfg)
	if err != nil {
		return err
	}
	defer c.Close()
	kcfg := client.DefaultCacheConfig()
	kcfg.Apps = []string{heurekaApp}
	cache, err := client.NewCache(c, kcfg)
	if err != nil {
		return err
	}
	if err := cache.Start(ctx); err != nil {
		return err
	}
	defer cache.Close(context.Background())
	for ctx.Err() == nil {
		if sleep(ctx, 500*time.Millisecond) != nil {
			return nil
		}
		if !n.allDead.Load() {
			continue
		}
		got := len(cache.Instances(heurekaApp))
		res := "ok"
		st.reads++
		if got == 0 {
			st.empty++
			res = "error"
		}
		n.w.h.add(op{Proc: "cache", Op: "cache-read", Result: res, Info: fmt.Sprintf("%d instances while every peer is dead", got)})
	}
	return nil
}

func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(f float64) time.Duration { return s[int(f*float64(len(s)-1))].Round(10 * time.Millisecond) }
	return fmt.Sprintf("n=%d min=%v p50=%v p90=%v max=%v", len(s), s[0].Round(10*time.Millisecond), q(0.5), q(0.9), s[len(s)-1].Round(10*time.Millisecond))
}

func sortStrings(s []string) { sort.Strings(s) }

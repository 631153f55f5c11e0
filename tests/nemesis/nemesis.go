package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
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

// peerOnly says whether a fault cuts peers apart while every client still
// reaches every peer: the case the eviction target is about.
func peerOnly(kind string) bool { return kind == "isolate" || kind == "split" || kind == "bridge" }

// nemesis injects faults one at a time on a schedule drawn from the seed.
type nemesis struct {
	w      *world
	topo   *topology
	faults map[string]int
	// rng draws the schedule and nothing else, so that a seed replays the
	// same faults however the workload's own draws interleave with them.
	rng *lockedRand

	agentCtx context.Context // the workload's lifetime, for replacement nodes
	allDead  atomic.Bool     // every peer is killed and none restarted yet

	mu      sync.Mutex
	current string          // the fault in force, "" when healthy
	down    map[string]bool // peers that cannot answer now (killed, paused)
	cutOff  map[string]bool // the peers on the minority side of an isolate or split
	agents  []*hagent
	nextAg  int

	converge []time.Duration // heal → every peer agrees
	unconv   int             // heals after which the peers did not agree in time
	deaths   []time.Duration // node death → gone from every reachable peer
	deadLate int             // dead nodes still served at the limit
	deathMax time.Duration
}

func (n *nemesis) set(kind string, down ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.current = kind
	n.down = map[string]bool{}
	for _, d := range down {
		n.down[d] = true
	}
}

func (n *nemesis) state() (string, map[string]bool, map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.current, maps.Clone(n.down), maps.Clone(n.cutOff)
}

func (n *nemesis) setCutOff(peers []int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cutOff = map[string]bool{}
	for _, p := range peers {
		n.cutOff[fmt.Sprintf("p%d", p)] = true
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
		n.set(kind)
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
		n.set(kind)
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
		n.set(kind)
	case "slow", "flaky":
		what := "1.5 s ± 0.7 s latency each way and 8 KB/s"
		if kind == "flaky" {
			what = "half the connections reset, a third stalled"
		}
		n.log("start", fmt.Sprintf("%s links out of %s (%s) for %v", kind, p.name(), what, hold))
		if err := toxics(p.i, len(ps), kind, true); err != nil {
			return err
		}
		n.set(kind)
		heal = func() error { return toxics(p.i, len(ps), kind, false) }
	case "kill":
		n.log("start", fmt.Sprintf("kill -9 %s, restart after %v", p.name(), hold))
		n.set(kind, p.name())
		p.kill()
		heal = func() error { return n.restart(ctx, p) }
	case "pause":
		n.log("start", fmt.Sprintf("SIGSTOP %s for %v", p.name(), hold))
		n.set(kind, p.name())
		p.signal(syscall.SIGSTOP)
		heal = func() error { p.signal(syscall.SIGCONT); return nil }
	case "all-down":
		n.log("start", fmt.Sprintf("kill -9 every peer, restart after %v", hold))
		var names []string
		for _, q := range ps {
			names = append(names, q.name())
		}
		n.set(kind, names...)
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
		n.set(kind)
		heal = func() error { _, err := p.setClock("reset=true"); return err }
	}
	if sleep(ctx, hold) != nil {
		return heal()
	}
	if err := heal(); err != nil {
		return err
	}
	n.set("recovering")
	n.log("heal", kind)
	n.measureConvergence(ctx)
	n.set("")
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
// among them (after all-down: the agents registered again), for at most
// 30 s.
func (n *nemesis) measureConvergence(ctx context.Context) {
	began := time.Now()
	for time.Since(began) < 30*time.Second {
		if agree, views := n.w.agree(ctx, "nemesis"); agree && n.w.allLive(views[0]) {
			d := time.Since(began)
			n.converge = append(n.converge, d)
			n.log("converged", fmt.Sprintf("in %v", d.Round(10*time.Millisecond)))
			return
		}
		if sleep(ctx, 200*time.Millisecond) != nil {
			return
		}
	}
	n.unconv++
	n.log("not-converged", "the peers did not agree within 30 s of the heal")
}

// allLive says whether view holds every instance that should be live.
func (w *world) allLive(view map[string]string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.live {
		if _, ok := view[id]; !ok {
			return false
		}
	}
	return true
}

// agree fetches every peer and says whether they hold the same thing.
func (w *world) agree(ctx context.Context, proc string) (bool, []map[string]string) {
	var views []map[string]string
	for _, p := range w.peers {
		v, err := w.fetchIDs(ctx, proc, p)
		if err != nil {
			return false, nil
		}
		views = append(views, v)
	}
	for _, v := range views[1:] {
		if !maps.Equal(v, views[0]) {
			return false, views
		}
	}
	return true, views
}

// nodeDeath kills one heureka agent's node without a word and measures
// how long until no peer serves it.
func (n *nemesis) nodeDeath(ctx context.Context) error {
	n.mu.Lock()
	if len(n.agents) == 0 {
		n.mu.Unlock()
		return nil
	}
	k := n.rng.intN(len(n.agents))
	ha := n.agents[k]
	n.mu.Unlock()
	n.log("start", fmt.Sprintf("node %s (%s) dies", ha.id, ha.proc))
	n.set("node-death")
	died := time.Now()
	ha.die(n.w)
	limit := n.w.cfg.lease + 15*time.Second
	for {
		gone := true
		for _, p := range n.w.peers {
			v, err := n.w.fetchIDs(ctx, "nemesis", p)
			if err == nil {
				if _, ok := v[ha.id]; ok {
					gone = false
				}
			}
		}
		if gone {
			d := time.Since(died)
			n.deaths = append(n.deaths, d)
			n.deathMax = max(n.deathMax, d)
			n.log("heal", fmt.Sprintf("node-death: %s gone from every peer after %v", ha.id, d.Round(10*time.Millisecond)))
			break
		}
		if time.Since(died) > limit {
			n.deaths = append(n.deaths, limit)
			n.deathMax = max(n.deathMax, limit)
			n.deadLate++
			n.log("heal", fmt.Sprintf("node-death: %s still served %v after it died", ha.id, limit))
			break
		}
		if sleep(ctx, 200*time.Millisecond) != nil {
			n.set("")
			return nil // interrupted: nothing measured
		}
	}
	n.set("")
	// A new node takes its place.
	na, err := n.w.startHAgent(n.agentCtx, n.nextAg)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.agents[k] = na
	n.nextAg++
	n.mu.Unlock()
	return nil
}

// missStats counts, per phase, instances that should be on a peer and
// were not, sampled from full fetches.
type missStats struct {
	mu      sync.Mutex
	samples map[string]int            // phase → peer fetches sampled
	missing map[string]map[string]int // phase → kind → missing instance-samples
	worst   map[string]map[string]int // phase → kind → most missing in one fetch
}

// sampler reads every answering peer's full registry twice a second and
// counts the instances it should show and does not: heureka agents
// registered more than 2 s ago, plain agents' instances whose last
// heartbeat (through any peer) succeeded within the last 1.5 s.
func (n *nemesis) sampler(ctx context.Context, ms *missStats) {
	for ctx.Err() == nil {
		if sleep(ctx, 500*time.Millisecond) != nil {
			return
		}
		current, down, cutOff := n.state()
		if current == "" {
			current = "healthy"
		}
		if current == "kill" || current == "pause" || current == "all-down" {
			continue // restarted peers resync; not what this measures
		}
		for _, p := range n.w.peers {
			if down[p.name()] {
				continue
			}
			phase := current
			switch current {
			case "isolate":
				phase = "isolate/majority"
				if cutOff[p.name()] {
					phase = "isolate/cut-off"
				}
			case "split":
				phase = "split/majority"
				if cutOff[p.name()] {
					phase = "split/minority"
				}
			}
			v, err := n.w.fetchIDs(ctx, "reader", p)
			if err != nil {
				continue
			}
			now := time.Now()
			n.w.mu.Lock()
			miss := map[string]int{}
			for id, li := range n.w.live {
				want := false
				switch li.kind {
				case "heureka":
					want = now.Sub(li.registered) > 2*time.Second
				case "plain":
					want = now.Sub(li.registered) > 2*time.Second && now.Sub(li.lastOK) < 1500*time.Millisecond
				}
				if _, ok := v[id]; want && !ok {
					miss[li.kind]++
				}
			}
			n.w.mu.Unlock()
			ms.mu.Lock()
			ms.samples[phase]++
			for _, kind := range []string{"plain", "heureka"} {
				if ms.missing[phase] == nil {
					ms.missing[phase], ms.worst[phase] = map[string]int{}, map[string]int{}
				}
				ms.missing[phase][kind] += miss[kind]
				ms.worst[phase][kind] = max(ms.worst[phase][kind], miss[kind])
			}
			ms.mu.Unlock()
		}
	}
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

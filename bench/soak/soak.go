package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// result is one run's outcome.
type result struct {
	phases    []*phaseStats
	stormTook time.Duration
	// restartGap is from stopping the first peer to its new process being
	// ready; recovery from then until every instance renewed or registered
	// successfully again.
	restartGap, recovery time.Duration
	recovered            int
	evictions            float64
	othersSkipped        int64     // -every-peer rounds skipped while othersInFlight were out
	peerInstances        []float64 // instances each peer holds at the end
	logDir               string
}

func soak(ctx context.Context, o options, log io.Writer) (*result, error) {
	dir, bin, err := workDir(ctx, o, "soak")
	if err != nil {
		return nil, err
	}
	res := &result{logDir: dir}
	logf(log, "building %d instance records", o.n)
	f := newFleet(o.n, o.apps, o.renew, o.lease)
	if !o.sorted {
		f.shuffle(o.seed)
	}
	peers, err := startPeers(ctx, bin, dir, o.serverCPUs, o.peers, strings.Fields(o.serverArgs))
	if err != nil {
		return nil, err
	}
	defer stopPeers(peers)
	logf(log, "%d peer(s) up (logs in %s); generator pinned to CPUs %q, servers to %q", len(peers), dir, o.genCPUs, o.serverCPUs)

	c := &http.Client{Transport: newTransport(max(o.writers, o.renewers)), Timeout: 30 * time.Second}
	ph := &phases{}
	mark, genMark, served := cpuOf(peers), selfCPU(), histograms(peers[0])
	end := func(st *phaseStats) {
		now, gen, hs := cpuOf(peers), selfCPU(), histograms(peers[0])
		for i := range now {
			st.cpu = append(st.cpu, now[i]-mark[i])
			st.rss = append(st.rss, peers[i].rss())
		}
		st.genCPU = gen - genMark
		st.served = map[string]buckets{}
		for name, b := range hs {
			st.served[name] = b.since(served[name])
		}
		mark, genMark, served = now, gen, hs
	}

	if o.baseline {
		st := ph.begin("baseline: bare handler")
		err := baseline(ctx, o, f, c, ph, dir, log)
		end(st)
		if err != nil {
			return nil, err
		}
	}

	st := ph.begin("storm")
	logf(log, "storm: registering %d instances from %d writers", o.n, o.writers)
	res.stormTook, err = storm(ctx, c, peers[0].base(), f, o.writers, st)
	end(st)
	if err != nil {
		return nil, err
	}
	logf(log, "storm: %d in %s (%.0f/s)", o.n, res.stormTook.Round(time.Millisecond), float64(o.n)/res.stormTook.Seconds())

	load, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	st = ph.begin("soak") // before the renewers' first beat is due
	r := &renewers{f: f, c: c, base: peers[0].base(), period: o.renew, t0: time.Now(), phases: ph,
		okAfter: make([]atomic.Bool, o.n)}
	if o.everyPeer {
		for _, p := range peers[1:] {
			r.others = append(r.others, p.base())
		}
		r.told = strings.Join(append([]string{r.base}, r.others...), ",")
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.run(load, o.renewers) }()
	var paused atomic.Bool
	for i := range o.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reader(load, c, peers[i%len(peers)].base(), o.poll, o.poll*time.Duration(i)/time.Duration(o.readers), ph, &paused)
		}()
	}
	if o.push > 0 {
		wg.Go(func() { pushers(load, c, peers[0].base(), f, o.push, pushConns, ph, &paused) })
	}
	logf(log, "soak: renewing every %s, %d readers polling every %s, for %s", o.renew, o.readers, o.poll, o.soak)
	if o.push > 0 {
		logf(log, "soak: every instance pushing a changed figure every %s (%.0f/s) from %d connections", o.push, float64(o.n)/o.push.Seconds(), pushConns)
	}
	sleep(ctx, o.soak)
	end(st)

	paused.Store(true)
	st = ph.begin("quiet")
	logf(log, "quiet: renewals only (no reads, no pushes), for %s", o.quiet)
	sleep(ctx, o.quiet)
	end(st)
	paused.Store(false)

	if o.restart && ctx.Err() == nil {
		st = ph.begin("restart")
		logf(log, "restart: stopping and starting peer 1 (%s)", peers[0].addr)
		before := peers[0].metric("heureka_evictions_total")
		t0 := time.Now()
		peers[0].stop()
		res.evictions += max(before, 0)
		r.restarted.Store(true)
		if err := peers[0].start(ctx, bin, o.serverCPUs); err != nil {
			return nil, err
		}
		served = histograms(peers[0]) // a new process counts from zero
		res.restartGap = time.Since(t0)
		limit := time.Now().Add(4 * o.lease)
		for r.recovered() < o.n && time.Now().Before(limit) && ctx.Err() == nil {
			sleep(ctx, 100*time.Millisecond)
		}
		res.recovered = r.recovered()
		res.recovery = time.Since(t0) - res.restartGap
		logf(log, "restart: ready after %s; %d of %d instances back %s later", res.restartGap.Round(time.Millisecond),
			res.recovered, o.n, res.recovery.Round(time.Millisecond))
		end(st)
		st = ph.begin("after")
		logf(log, "after: renewals and readers for %s", o.after)
		sleep(ctx, o.after)
		end(st)
	}
	for _, p := range peers {
		res.peerInstances = append(res.peerInstances, p.metricSum("heureka_instances"))
		if v := p.metric("heureka_evictions_total"); v > 0 {
			res.evictions += v
		}
	}
	stopLoad()
	wg.Wait()
	res.othersSkipped = r.skipped.Load()
	ph.finish()
	res.phases = ph.all
	return res, ctx.Err()
}

// pushConns is how many connections -push sends from.
const pushConns = 16

// baseline renews the fleet against a bare net/http handler on the
// servers' CPUs (its log in dir) for o.quiet: what the generator measures
// there is its own floor.
func baseline(ctx context.Context, o options, f *fleet, c *http.Client, ph *phases, dir string, log io.Writer) error {
	addr, bare, err := startBare(ctx, o.serverCPUs, dir, false)
	if err != nil {
		return err
	}
	defer bare.Kill()
	logf(log, "baseline: renewing against a bare net/http handler for %s", o.quiet)
	load, stopLoad := context.WithCancel(ctx)
	b := &renewers{f: f, c: c, base: "http://" + addr + "/eureka", period: o.renew, t0: time.Now(), phases: ph,
		okAfter: make([]atomic.Bool, o.n)}
	done := make(chan struct{})
	go func() { defer close(done); b.run(load, o.renewers) }()
	sleep(ctx, o.quiet)
	stopLoad()
	<-done
	return nil
}

// selfCPU is this process's user+system CPU time in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func cpuOf(peers []*peer) []float64 {
	out := make([]float64, len(peers))
	for i, p := range peers {
		out[i] = p.totalCPU()
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// targets are issue 17's soak targets.
const (
	targetKept     = 0.97
	targetRenewP99 = 50 * time.Millisecond
	targetFetchP99 = 50 * time.Millisecond
)

// judged reports whether a phase is held to the targets: the storm is
// measured, not judged, and so is the restart (renewals to a stopped
// server cannot succeed); what follows the restart is judged.
func judged(st *phaseStats) bool {
	switch st.name {
	case "soak", "quiet", "after":
		return true
	}
	return false
}

// checks lists each target with whether it held.
func (r *result) checks() []struct {
	what string
	ok   bool
} {
	var out []struct {
		what string
		ok   bool
	}
	add := func(ok bool, format string, args ...any) {
		out = append(out, struct {
			what string
			ok   bool
		}{fmt.Sprintf(format, args...), ok})
	}
	add(r.evictions == 0, "instances evicted while renewing: %.0f (want 0)", r.evictions)
	for _, st := range r.phases {
		if !judged(st) {
			continue
		}
		if s := st.scheduled.Load(); s > 0 {
			k := float64(st.kept.Load()) / float64(s)
			add(k >= targetKept, "%s: %.2f%% of scheduled renewals kept (want ≥ %.0f%%)", st.name, 100*k, 100*targetKept)
		}
		add(st.notFound.Load() == 0, "%s: renewals answered 404 (lost registrations): %d (want 0)", st.name, st.notFound.Load())
		if st.renews.count.Load() > 0 {
			p := st.renews.quantile(0.99)
			add(p <= targetRenewP99, "%s: renewal p99 %s (want ≤ %s)", st.name, ms(p), ms(targetRenewP99))
		}
		for _, h := range []struct {
			name string
			h    *histogram
		}{{"delta", &st.deltas}, {"full fetch", &st.fulls}} {
			if h.h.count.Load() > 0 {
				p := h.h.quantile(0.99)
				add(p <= targetFetchP99, "%s: %s p99 %s (want ≤ %s)", st.name, h.name, ms(p), ms(targetFetchP99))
			}
		}
	}
	return out
}

// phase returns the phase called name (an empty one if there is none).
func (r *result) phase(name string) *phaseStats {
	for _, st := range r.phases {
		if st.name == name {
			return st
		}
	}
	return &phaseStats{name: name, rss: []int64{0}}
}

func (r *result) passed() bool {
	for _, c := range r.checks() {
		if !c.ok {
			return false
		}
	}
	return true
}

func (r *result) report(w io.Writer, o options) {
	order := fmt.Sprintf("random order (seed %d)", o.seed)
	if o.sorted {
		order = "ID order"
	}
	pushes := "no pushes"
	if o.push > 0 {
		pushes = "each instance pushing its figures every " + o.push.String()
	}
	fmt.Fprintf(w, "\n### soak: %d instances in %d apps, %d peer(s), renew %s / lease %s, %d readers every %s, %s, %s\n\n",
		o.n, o.apps, o.peers, o.renew, o.lease, o.readers, o.poll, pushes, order)
	fmt.Fprintf(w, "Command: `cd bench && go run ./soak %s`\n\n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(w, "Storm: %d registrations in %s, %.0f/s; registration p50 %s, p99 %s.\n",
		o.n, r.stormTook.Round(time.Millisecond), float64(o.n)/r.stormTook.Seconds(),
		ms(r.phase("storm").writes.quantile(0.5)), ms(r.phase("storm").writes.quantile(0.99)))
	if r.restartGap > 0 {
		fmt.Fprintf(w, "Restart: peer 1 stopped and ready again in %s; %d of %d instances renewing again %s after that.\n",
			r.restartGap.Round(time.Millisecond), r.recovered, o.n, r.recovery.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "Instances held at the end, per peer: %v.\n\n", r.peerInstances)
	fmt.Fprintln(w, "| phase | s | renewals scheduled | kept | renew p50 / p99 | 404 → registered | errors | delta p50 / p99 (n) | full p50 / p99 (n) | server-side p99: renew / delta / full | server CPU, cores (per peer) | RSS MiB (per peer) | generator CPU, cores | silence p99 / max |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, st := range r.phases {
		secs := st.end.Sub(st.start).Seconds()
		kept := "-"
		if s := st.scheduled.Load(); s > 0 {
			kept = fmt.Sprintf("%.2f%%", 100*float64(st.kept.Load())/float64(s))
		}
		var cpu, rss []string
		for i := range st.cpu {
			cpu = append(cpu, fmt.Sprintf("%.2f", st.cpu[i]/secs))
			rss = append(rss, fmt.Sprintf("%.0f", float64(st.rss[i])/(1<<20)))
		}
		fmt.Fprintf(w, "| %s | %.0f | %d | %s | %s / %s | %d → %d | %d | %s / %s (%d) | %s / %s (%d) | %s / %s / %s | %s | %s | %.2f | %s / %s |\n",
			st.name, secs, st.scheduled.Load(), kept,
			ms(st.renews.quantile(0.5)), ms(st.renews.quantile(0.99)),
			st.notFound.Load(), st.reregistered.Load(), st.renewErrors.Load()+st.readErrors.Load()+st.writeErrors.Load(),
			ms(st.deltas.quantile(0.5)), ms(st.deltas.quantile(0.99)), st.deltas.count.Load(),
			ms(st.fulls.quantile(0.5)), ms(st.fulls.quantile(0.99)), st.fulls.count.Load(),
			st.serverP99("renew"), st.serverP99("delta"), st.serverP99("full"),
			strings.Join(cpu, " "), strings.Join(rss, " "), st.genCPU/secs,
			secs1(st.silences.quantile(0.99)), secs1(st.silences.quantile(1)))
	}
	if o.push > 0 {
		fmt.Fprintf(w, "\nPushes (each instance registering again with a changed figure every %s; none in the quiet phase):\n\n", o.push)
		fmt.Fprintln(w, "| phase | pushes | push p50 / p99 | errors |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, st := range r.phases {
			if n := st.pushes.count.Load() + st.pushErrors.Load(); n > 0 {
				fmt.Fprintf(w, "| %s | %d | %s / %s | %d |\n", st.name, st.pushes.count.Load(),
					ms(st.pushes.quantile(0.5)), ms(st.pushes.quantile(0.99)), st.pushErrors.Load())
			}
		}
	}
	for _, st := range r.phases {
		if st.name != "quiet" || len(st.cpu) == 0 {
			continue
		}
		beats := float64(st.renews.count.Load())
		if beats > 0 {
			sent := "all sent to peer 1"
			if o.everyPeer {
				sent = fmt.Sprintf("each sent to every peer as heureka's agent sends it, naming every peer in %s, to peer 1 too while the last round reached the others (%d rounds skipped in the run, %d at most out at once)",
					toldPeersHeader, r.othersSkipped, othersInFlight)
			}
			fmt.Fprintf(w, "\nCPU per heartbeat in the quiet phase (%.0f heartbeats, %s):", beats, sent)
			for i, c := range st.cpu {
				role := "direct"
				switch {
				case o.everyPeer:
					role = "direct, mostly unreplicated"
				case i > 0:
					role = "replicated"
				}
				fmt.Fprintf(w, " peer %d (%s) %.1f µs;", i+1, role, 1e6*c/beats)
			}
			fmt.Fprintln(w)
		}
		if len(st.rss) > 0 && o.n > 0 {
			fmt.Fprintf(w, "Resident per instance on peer 1 after the soak (full, delta fetched): %.2f KiB.\n",
				float64(r.phase("soak").rss[0])/float64(o.n)/1024)
		}
	}
	fmt.Fprintln(w, "\nTargets:")
	for _, c := range r.checks() {
		mark := "PASS"
		if !c.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "- %s %s\n", mark, c.what)
	}
}

// secs1 formats d in seconds to a tenth, "-" for none.
func secs1(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func ms(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
}

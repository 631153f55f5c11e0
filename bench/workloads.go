package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"golang.org/x/sync/errgroup"
)

// system is one thing measured: a registry server in one configuration.
type system struct {
	name string // as the report shows it
	kind string // "heureka", "etcd", "zookeeper"
	hc   heurekaConfig
	t    timers
}

func heurekaSystem(hc heurekaConfig) system {
	return system{name: hc.name, kind: "heureka", hc: hc, t: hc.t}
}

var (
	etcdSystem = system{name: "etcd 3.4", kind: "etcd", t: peerTimers}
	zkSystem   = system{name: "ZooKeeper 3.8", kind: "zookeeper", t: peerTimers}
)

// open starts sys's server and a backend for it with the given number of
// writer connections (ZooKeeper: sessions). A ZooKeeper server that
// answers ruok but gives no session (seen once on a loaded CI machine) is
// stopped and started afresh, once, and the run log says so.
func (r *runner) open(ctx context.Context, sys system, tag string, conns int) (*server, backend, error) {
	srv, b, err := r.openOnce(ctx, sys, tag, conns)
	if errors.Is(err, errNoSession) {
		r.logf("%s %s: %v; starting a fresh server", sys.name, tag, err)
		srv, b, err = r.openOnce(ctx, sys, tag, conns)
	}
	return srv, b, err
}

func (r *runner) openOnce(ctx context.Context, sys system, tag string, conns int) (*server, backend, error) {
	var (
		srv *server
		err error
	)
	name := fmt.Sprintf("%s-%s-%d", sys.kind, tag, r.seq.Add(1))
	switch sys.kind {
	case "heureka":
		srv, err = startHeureka(ctx, r.heurekaBin, r.dir, name, sys.hc.selfPreservation)
	case "etcd":
		srv, err = startEtcd(ctx, r.dir, name)
	case "zookeeper":
		srv, err = startZooKeeper(ctx, r.dir, name)
	}
	if err != nil {
		return nil, nil, err
	}
	var b backend
	switch sys.kind {
	case "heureka":
		b, err = newHeurekaBackend(srv.addr, conns, sys.t.Poll)
	case "etcd":
		b, err = newEtcdBackend(srv.addr, max(1, conns/16), sys.t)
	case "zookeeper":
		b, err = newZKBackend(ctx, srv.addr, conns, sys.t)
	}
	if err != nil {
		srv.stop()
		return nil, nil, err
	}
	return srv, b, nil
}

// registerAll registers ins from workers goroutines, each taking the next
// instance, for at most limit. It returns how many were registered, the
// per-registration latencies and the errors.
func registerAll(ctx context.Context, b backend, ins []*heureka.Instance, workers int, limit time.Duration) (int, []time.Duration, int, error) {
	if zb, ok := b.(*zkBackend); ok {
		if err := zb.ensureApps(appsOf(ins)); err != nil {
			return 0, nil, 0, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var (
		next, ok, failed atomic.Int64
		mu               sync.Mutex
		lat              = make([]time.Duration, 0, len(ins))
		firstErr         error
	)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			local := make([]time.Duration, 0, len(ins)/workers+1)
			defer func() {
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			}()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(ins) {
					return
				}
				t := time.Now()
				err := b.register(ctx, w, ins[i])
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					// A system that refuses everything should not spin
					// through the whole population.
					if failed.Add(1) > int64(len(ins)/100+10) {
						cancel()
					}
					continue
				}
				local = append(local, time.Since(t))
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return int(ok.Load()), lat, int(failed.Load()), firstErr
}

// stormResult is workload 1 for one system and N.
type stormResult struct {
	System   string
	N        int
	Done     int
	Elapsed  time.Duration
	Rate     float64 // registrations per second
	Lat      dist
	Errors   int
	FirstErr string
	CPU      time.Duration // server CPU during the storm
	RSS      int64         // server RSS after it
	Cut      bool          // stopped at the plan's limit
	Skipped  string

	BenchCores, Others float64 // CPU of the load generator and of other processes, in cores
}

func (r *runner) storm(ctx context.Context, sys system, n int) stormResult {
	res := stormResult{System: sys.name, N: n}
	conns := r.plan.Workers
	if sys.kind == "zookeeper" {
		conns = r.plan.ZKSessions
	}
	srv, b, err := r.open(ctx, sys, "storm", conns)
	if err != nil {
		res.Skipped = err.Error()
		return res
	}
	defer srv.stop()
	defer b.close()
	ins := population(n, r.plan.PerApp, sys.t)
	u0 := srv.usage()
	m := startMeter(srv.pid())
	start := time.Now()
	done, lat, failed, err := registerAll(ctx, b, ins, r.plan.Workers, r.plan.StormLimit)
	_, res.BenchCores, res.Others = m.read()
	res.Elapsed = time.Since(start)
	u1 := srv.usage()
	res.Done, res.Errors, res.Lat = done, failed, summarize(lat, 0)
	res.Rate = float64(done) / res.Elapsed.Seconds()
	res.CPU, res.RSS = u1.CPU-u0.CPU, u1.RSS
	res.Cut = done+failed < n
	if err != nil {
		res.FirstErr = err.Error()
	}
	r.logf("storm   %-32s N=%-6d %8.0f/s  p50 %v  p99 %v  errors %d  cpu %.1fs  rss %s",
		sys.name, n, res.Rate, ms(res.Lat.P50), ms(res.Lat.P99), failed, res.CPU.Seconds(), mib(res.RSS))
	return res
}

// steadyResult is workload 2 for one system and N.
type steadyResult struct {
	System    string
	N         int
	Renew     time.Duration
	Readers   int
	ReaderHow string
	Window    time.Duration
	CPUPct    float64 // server CPU, percent of one core, over the window
	RSS       int64
	Sent      int64 // heartbeats in the window
	Failed    int64
	Late      int64
	Lat       dist
	HowNote   string
	Skipped   string

	BenchCores, Others float64 // CPU of the load generator and of other processes, in cores
}

func (r *runner) steady(ctx context.Context, sys system, n int) steadyResult {
	res := steadyResult{System: sys.name, N: n, Renew: sys.t.Renew, Readers: r.plan.Readers, Window: r.plan.SteadyWindow}
	res.ReaderHow = readerHow(sys)
	conns := r.plan.Workers
	if sys.kind == "zookeeper" {
		conns = r.zkSteadySessions(n)
	}
	srv, b, err := r.open(ctx, sys, "steady", conns)
	if err != nil {
		res.Skipped = err.Error()
		return res
	}
	defer srv.stop()
	defer b.close()
	ins := population(n, r.plan.PerApp, sys.t)
	if done, _, _, err := registerAll(ctx, b, ins, r.plan.Workers, 2*r.plan.StormLimit); done < n {
		res.Skipped = fmt.Sprintf("registered only %d of %d: %v", done, n, err)
		return res
	}
	apps := appsOf(ins)
	var stops []func()
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for range r.plan.Readers {
		g.Go(func() error {
			v := newView()
			stop, err := b.consumer(gctx, apps, v)
			if err != nil {
				return err
			}
			mu.Lock()
			stops = append(stops, stop)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		res.Skipped = "readers: " + err.Error()
		return res
	}
	// Heartbeats run through one warm-up period and the window.
	var st renewStats
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { b.renewAll(rctx, ins, sys.t.Renew, &st) })
	warm := r.plan.SteadyWarm
	sleepCtx(ctx, warm)
	u0, s0, f0, l0 := srv.usage(), st.sent.Load(), st.failed.Load(), len(st.lat.all())
	m := startMeter(srv.pid())
	t0 := time.Now()
	sleepCtx(ctx, r.plan.SteadyWindow)
	u1, s1, f1 := srv.usage(), st.sent.Load(), st.failed.Load()
	_, res.BenchCores, res.Others = m.read()
	el := time.Since(t0)
	lat := st.lat.all()
	cancel()
	wg.Wait()
	res.CPUPct = 100 * (u1.CPU - u0.CPU).Seconds() / el.Seconds()
	res.RSS = u1.RSS
	res.Sent, res.Failed, res.Late = s1-s0, f1-f0, st.late.Load()
	if l0 <= len(lat) {
		res.Lat = summarize(lat[l0:], 0)
	}
	res.HowNote = st.note
	r.logf("steady  %-32s N=%-6d cpu %5.1f%%  rss %s  heartbeats %d (%d failed)  p99 %v",
		sys.name, n, res.CPUPct, mib(res.RSS), res.Sent, res.Failed, ms(res.Lat.P99))
	return res
}

// zkSteadySessions is how many ZooKeeper sessions hold N instances in the
// steady state: one per instance (a session per host, as deployed) up to
// 2,000, then shared.
func (r *runner) zkSteadySessions(n int) int { return min(n, 2000) }

func readerHow(sys system) string {
	switch {
	case sys.kind == "etcd":
		return "Get per app prefix, then Watch"
	case sys.kind == "zookeeper":
		return "child watch per app + data watch per znode"
	case sys.t.Poll > 0:
		return fmt.Sprintf("client.Cache polling /apps/delta every %v", sys.t.Poll)
	}
	return "client.Cache watching /v1/watch"
}

// propResult is workload 3 for one system and W.
type propResult struct {
	System  string
	W       int
	Rounds  int
	Lat     dist
	RSS     int64 // server RSS with W watchers connected
	Setup   time.Duration
	Skipped string

	Others float64 // CPU of other processes during the rounds, in cores
}

func (r *runner) propagation(ctx context.Context, sys system, w int) propResult {
	res := propResult{System: sys.name, W: w, Rounds: r.plan.Rounds}
	srv, b, err := r.open(ctx, sys, "prop", 4)
	if err != nil {
		res.Skipped = err.Error()
		return res
	}
	defer srv.stop()
	defer b.close()
	const app = "HDFS-DATANODE.PROP"
	ins := make([]*heureka.Instance, 10)
	for i := range ins {
		ins[i] = instanceFor(app, i, sys.t)
	}
	if done, _, _, err := registerAll(ctx, b, ins, 4, time.Minute); done < len(ins) {
		res.Skipped = fmt.Sprintf("register: %v", err)
		return res
	}
	// Keep the leases alive while watchers connect (etcd's TTL runs out
	// otherwise; heureka's and ZooKeeper's would not in this time).
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	var st renewStats
	go b.renewAll(rctx, ins, sys.t.Renew, &st)

	start := time.Now()
	views := make([]*view, w)
	stops := make([]func(), w)
	defer func() { r.stopAll(stops) }()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for i := range w {
		g.Go(func() error {
			views[i] = newView()
			stop, err := b.consumer(gctx, []string{app}, views[i])
			stops[i] = stop
			return err
		})
	}
	if err := g.Wait(); err != nil {
		res.Skipped = fmt.Sprintf("watchers: %v", err)
		return res
	}
	res.Setup = time.Since(start)
	sleepCtx(ctx, 500*time.Millisecond) // let streams settle
	res.RSS = srv.usage().RSS
	target := ins[0]
	var all []time.Duration
	missed := 0
	m := startMeter(srv.pid())
	for round := 1; round <= r.plan.Rounds && ctx.Err() == nil; round++ {
		chans := make([]<-chan time.Time, w)
		for i, v := range views {
			chans[i] = v.when(func(v *view) bool { return roundOf(v.get(app, target.ID)) >= round })
		}
		t0 := time.Now()
		if err := b.update(ctx, withRound(target, round)); err != nil {
			res.Skipped = fmt.Sprintf("update: %v", err)
			return res
		}
		got, miss := collect(chans, views, t0, 10*time.Second)
		all = append(all, got...)
		missed += miss
		sleepCtx(ctx, 200*time.Millisecond)
	}
	_, _, res.Others = m.read()
	res.Lat = summarize(all, missed)
	r.logf("prop    %-32s W=%-5d p50 %v  p99 %v  max %v  missed %d  (setup %v, rss %s)",
		sys.name, w, ms(res.Lat.P50), ms(res.Lat.P99), ms(res.Lat.Max), missed, ms(res.Setup), mib(res.RSS))
	return res
}

// stopAll stops consumers in parallel, waiting at most 15 s: the server
// is stopped next anyway, which ends whatever is left.
func (r *runner) stopAll(stops []func()) {
	t := time.Now()
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 64)
		for _, s := range stops {
			if s != nil {
				sem <- struct{}{}
				wg.Go(func() { defer func() { <-sem }(); s() })
			}
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		r.logf("consumers still closing after %v; stopping the server under them", time.Since(t).Round(time.Second))
	}
}

// collect waits up to timeout for every channel and returns the times
// from t0; a channel that stays silent counts as missed and its view's
// waiters are dropped.
func collect(chans []<-chan time.Time, views []*view, t0 time.Time, timeout time.Duration) ([]time.Duration, int) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	expired := false
	var got []time.Duration
	missed := 0
	for i, ch := range chans {
		if !expired {
			select {
			case t := <-ch:
				got = append(got, t.Sub(t0))
				continue
			case <-timer.C:
				expired = true
			}
		}
		select {
		case t := <-ch:
			got = append(got, t.Sub(t0))
		default:
			missed++
			views[i].cancel()
		}
	}
	return got, missed
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func ms(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

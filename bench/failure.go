package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proc"
	"github.com/heureka-project/heureka/sim"
)

// Workload 4: failure scenarios, each timed from the event until every
// observing client's view has changed. The daemon is heureka's simulator
// (package sim) in this process; the agent beside it is a process of its
// own (helper.go) so it can be killed. Every system runs its scenarios at
// the same time, each on its own HDFS cluster name, and the systems run
// side by side: the scenarios wait on timers, not on CPU.

// scenario is one kind of failure.
type scenario struct {
	key, title string
}

var scenarios = []scenario{
	{"crash", "DataNode daemon crash, agent alive → not UP in every view"},
	{"silent", "silent host loss (agent SIGKILL, daemon gone) → gone from every view"},
	{"drain", "graceful drain (agent SIGTERM) → OUT_OF_SERVICE (or gone) in every view"},
	{"failover", "NameNode failover → every view resolves the new active"},
}

// failureResult is one scenario on one system.
type failureResult struct {
	System    string
	Scenario  string
	Lat       dist
	Reps      int
	Observers int
	Expected  string
	Skipped   string
}

func (r *runner) failures(ctx context.Context, systems []system) []failureResult {
	ctx, cancel := context.WithTimeout(ctx, r.plan.FailureLimit)
	defer cancel()
	out := inParallel(systems, func(sys system) []failureResult { return r.failureSystem(ctx, sys) })
	order := func(fr failureResult) int {
		for i, s := range systems {
			if s.name == fr.System {
				for j, sc := range scenarios {
					if sc.key == fr.Scenario {
						return i*10 + j
					}
				}
			}
		}
		return 0
	}
	slices.SortFunc(out, func(a, b failureResult) int { return order(a) - order(b) })
	return out
}

// fsys is one system's failure run: its server, observers and scenarios.
type fsys struct {
	r     *runner
	sys   system
	srv   *server
	b     backend
	views []*view
	ready chan struct{} // closed once every observer has its first view
	obsOK bool
}

func dnApp(cluster string) string { return strings.ToUpper(hdfs.AppName(hdfs.RoleDataNode, cluster)) }
func nnApp(cluster string) string { return strings.ToUpper(hdfs.AppName(hdfs.RoleNameNode, cluster)) }

func (r *runner) failureSystem(ctx context.Context, sys system) []failureResult {
	skipAll := func(why string) []failureResult {
		var out []failureResult
		for _, sc := range scenarios {
			out = append(out, failureResult{System: sys.name, Scenario: sc.key, Skipped: why})
		}
		return out
	}
	srv, b, err := r.open(ctx, sys, "fail", 4)
	if err != nil {
		return skipAll(err.Error())
	}
	defer srv.stop()
	defer b.close()
	// A cluster of background DataNodes renewing on the configuration's
	// timers, so that the registry is not a tiny one (stock Eureka
	// self-preservation trips when one node of five dies).
	nbg := 100
	if r.plan.Mode == "tiny" {
		nbg = 10
	}
	bg := population(nbg, nbg, sys.t)
	for _, in := range bg {
		in.App = dnApp("background")
	}
	if done, _, _, err := registerAll(ctx, b, bg, 8, time.Minute); done < nbg {
		return skipAll(fmt.Sprintf("background registrations: %v", err))
	}
	bctx, bcancel := context.WithCancel(ctx)
	defer bcancel()
	var bst renewStats
	go b.renewAll(bctx, bg, sys.t.Renew, &bst)

	f := &fsys{r: r, sys: sys, srv: srv, b: b, ready: make(chan struct{})}
	apps := []string{dnApp("crash"), dnApp("silent"), dnApp("drain"), nnApp("failover")}
	f.views = make([]*view, r.plan.Observers)
	stops := make([]func(), r.plan.Observers)
	defer func() {
		for _, s := range stops {
			if s != nil {
				s()
			}
		}
	}()
	// Polling observers start spread over one interval, so their polls
	// are as out of phase as real clients'.
	go func() {
		defer close(f.ready)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for i := range f.views {
			f.views[i] = newView()
			delay := time.Duration(i) * sys.t.Poll / time.Duration(len(f.views))
			wg.Go(func() {
				sleepCtx(ctx, delay)
				stop, err := b.consumer(ctx, apps, f.views[i])
				mu.Lock()
				defer mu.Unlock()
				stops[i] = stop
				if err != nil && firstErr == nil {
					firstErr = err
				}
			})
		}
		wg.Wait()
		f.obsOK = firstErr == nil
		if firstErr != nil {
			r.logf("failure %-32s observers: %v", sys.name, firstErr)
		}
	}()

	return inParallel(scenarios, func(sc scenario) []failureResult {
		res := failureResult{System: sys.name, Scenario: sc.key, Observers: r.plan.Observers, Expected: expected(sc.key, sys)}
		switch {
		case sc.key == "silent" && sys.t.Lease > 30*time.Second && !r.plan.SlowScenario:
			res.Skipped = fmt.Sprintf("full mode only: a %v lease makes it take minutes (expected %s)", sys.t.Lease, res.Expected)
		case sc.key == "silent" && r.plan.Mode == "tiny":
			res.Skipped = "not in tiny mode"
		default:
			f.run(ctx, sc.key, &res)
		}
		r.logf("failure %-32s %-8s p50 %v  p99 %v  max %v  n=%d missed=%d %s",
			sys.name, sc.key, ms(res.Lat.P50), ms(res.Lat.P99), ms(res.Lat.Max), res.Lat.N, res.Lat.Missed, res.Skipped)
		return []failureResult{res}
	})
}

// inParallel calls fn on every item at once and gathers what they return,
// in the order they finish.
func inParallel[T, R any](items []T, fn func(T) []R) []R {
	var (
		mu  sync.Mutex
		out []R
		wg  sync.WaitGroup
	)
	for _, it := range items {
		wg.Go(func() {
			rs := fn(it)
			mu.Lock()
			out = append(out, rs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// expected is what the timers predict for a scenario, for the report.
func expected(key string, sys system) string {
	prop := "ms (push)"
	if sys.t.Poll > 0 {
		prop = fmt.Sprintf("≤ %v (poll)", sys.t.Poll)
	}
	switch key {
	case "crash":
		return "probe ≤ 1 s + recheck 0.25 s + " + prop
	case "silent":
		sweep := ""
		if sys.kind == "heureka" {
			sweep = " + sweep ≤ 0.5 s"
		}
		return fmt.Sprintf("lease %v − time since last renewal (≤ %v)%s + %s", sys.t.Lease, sys.t.Renew, sweep, prop)
	case "drain":
		return "one write + " + prop
	case "failover":
		return "probe ≤ 1 s + " + prop
	}
	return ""
}

// reps is how many times a scenario repeats on this system.
func (f *fsys) reps(key string) int {
	n := f.r.plan.Reps
	if f.sys.t.Poll >= 30*time.Second && f.r.plan.Mode != "full" {
		n = 1 // each repetition costs two 30 s polls
	}
	if key == "silent" {
		n = 1
		if f.r.plan.Mode == "full" && f.sys.t.Lease <= 30*time.Second {
			n = 3
		}
	}
	return n
}

// detectTimeout bounds one wait for every view to change.
func (f *fsys) detectTimeout(key string) time.Duration {
	d := f.sys.t.Poll + 15*time.Second
	if key == "silent" {
		d += f.sys.t.Lease + f.sys.t.Renew
	}
	return d
}

// watchAll registers pred on every observer; call before the event.
func (f *fsys) watchAll(pred func(*view) bool) []<-chan time.Time {
	chans := make([]<-chan time.Time, len(f.views))
	for i, v := range f.views {
		chans[i] = v.when(pred)
	}
	return chans
}

// waitAll waits until pred holds in every view.
func (f *fsys) waitAll(ctx context.Context, what string, pred func(*view) bool) error {
	chans := f.watchAll(pred)
	_, missed := collect(chans, f.views, time.Now(), f.sys.t.Poll+30*time.Second)
	if missed > 0 {
		return fmt.Errorf("%d of %d observers never saw %s", missed, len(f.views), what)
	}
	return ctx.Err()
}

// newSim opens a simulated daemon on free loopback ports.
func newSim(role hdfs.Role, ha hdfs.HAState) (*sim.Sim, error) {
	cfg := sim.DefaultConfig()
	cfg.Role = role
	if role == hdfs.RoleNameNode {
		cfg.HAState = ha
	}
	s, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	return s, s.Open()
}

func (f *fsys) spec(s *sim.Sim, role hdfs.Role, cluster, host string) agentSpec {
	return agentSpec{
		Registry: f.sys.kind, Addr: f.srv.addr, Role: role, Cluster: cluster, Host: host,
		JMX: "http://" + s.HTTPAddr(), PortAddr: s.PortAddr(), T: f.sys.t,
	}
}

func (f *fsys) startAgent(spec agentSpec) (*proc.Proc, error) {
	name := fmt.Sprintf("agent-%s-%s-%d", f.sys.kind, spec.Cluster, f.r.seq.Add(1))
	bin := ""
	if f.sys.kind == "heureka" && f.r.agentCmd {
		bin = f.r.heurekaBin
	}
	return startAgent(f.r.dir, name, bin, spec)
}

// run runs one scenario's repetitions into res.
func (f *fsys) run(ctx context.Context, key string, res *failureResult) {
	fail := func(format string, args ...any) { res.Skipped = fmt.Sprintf(format, args...) }
	role, ha := hdfs.RoleDataNode, hdfs.HAState("")
	if key == "failover" {
		role, ha = hdfs.RoleNameNode, hdfs.HAActive
	}
	simA, err := newSim(role, ha)
	if err != nil {
		fail("sim: %v", err)
		return
	}
	defer simA.Close(context.Background())
	specA := f.spec(simA, role, key, "node1.bench.invalid")
	app, idA := strings.ToUpper(specA.config().App()), specA.config().InstanceID()
	up := func(id string) func(*view) bool {
		return func(v *view) bool { in := v.get(app, id); return in != nil && in.Status == heureka.StatusUp }
	}
	notUp := func(v *view) bool { in := v.get(app, idA); return in == nil || in.Status != heureka.StatusUp }
	var all []time.Duration
	missed := 0
	timeout := f.detectTimeout(key)
	var agents []*proc.Proc
	defer func() {
		for _, p := range agents {
			p.Kill()
		}
	}()
	start := func(spec agentSpec) (*proc.Proc, bool) {
		p, err := f.startAgent(spec)
		if err != nil {
			fail("agent: %v", err)
			return nil, false
		}
		agents = append(agents, p)
		return p, true
	}
	// record collects one repetition's times.
	// jitter puts the event at a random point of the agent's probe cycle:
	// the waits before it end right after a probe, which would otherwise
	// make every event land at the worst moment.
	jitter := func() { sleepCtx(ctx, rand.N(time.Second)) }
	record := func(chans []<-chan time.Time, t0 time.Time) {
		got, miss := collect(chans, f.views, t0, timeout)
		all = append(all, got...)
		missed += miss
		res.Reps++
	}
	// A repetition is started only if it can finish before the deadline.
	deadline, _ := ctx.Deadline()
	room := func() bool { return time.Until(deadline) > 2*timeout+5*time.Second || res.Reps == 0 }

	switch key {
	case "crash":
		if _, ok := start(specA); !ok {
			return
		}
		<-f.ready
		for rep := 0; rep < f.reps(key) && room(); rep++ {
			if err := f.waitAll(ctx, "it UP", up(idA)); err != nil {
				fail("%v", err)
				break
			}
			jitter()
			chans := f.watchAll(notUp)
			t0 := time.Now()
			simA.Stop()
			record(chans, t0)
			if err := simA.Start(); err != nil {
				fail("sim restart: %v", err)
				break
			}
		}
	case "silent", "drain":
		<-f.ready
		for rep := 0; rep < f.reps(key) && room(); rep++ {
			p, ok := start(specA)
			if !ok {
				break
			}
			if err := f.waitAll(ctx, "it UP", up(idA)); err != nil {
				fail("%v", err)
				break
			}
			pred, sig := notUp, syscall.SIGKILL
			if key == "drain" {
				sig = syscall.SIGTERM
				pred = func(v *view) bool {
					in := v.get(app, idA)
					return in == nil || in.Status == heureka.StatusOutOfService
				}
			}
			jitter()
			chans := f.watchAll(pred)
			t0 := time.Now()
			if err := p.Signal(sig); err != nil {
				fail("%v", err)
				break
			}
			if key == "silent" {
				simA.Stop() // the host is gone, daemon and all
			}
			record(chans, t0)
			select { // the drained agent deregisters and exits
			case <-p.Done():
			case <-time.After(20 * time.Second):
				p.Kill()
			}
			if key == "silent" {
				_ = simA.Start()
				// The next agent registers the same ID: let the views
				// see it gone first (they have, as recorded).
			}
		}
	case "failover":
		simB, err := newSim(role, hdfs.HAStandby)
		if err != nil {
			fail("sim: %v", err)
			return
		}
		defer simB.Close(context.Background())
		specB := f.spec(simB, role, key, "node2.bench.invalid")
		idB := specB.config().InstanceID()
		if _, ok := start(specA); !ok {
			return
		}
		if _, ok := start(specB); !ok {
			return
		}
		resolves := func(id string) func(*view) bool {
			return func(v *view) bool {
				res, err := hdfs.ResolveNameNodes(v.instances(app))
				return err == nil && res.Active != nil && res.Active.ID == id
			}
		}
		<-f.ready
		if err := f.waitAll(ctx, "the first active", resolves(idA)); err != nil {
			fail("%v", err)
			break
		}
		active, standby := simA, simB
		next := idB
		for rep := 0; rep < f.reps(key) && room(); rep++ {
			jitter()
			chans := f.watchAll(resolves(next))
			t0 := time.Now()
			_ = active.SetHAState(hdfs.HAStandby)
			_ = standby.SetHAState(hdfs.HAActive)
			record(chans, t0)
			active, standby = standby, active
			if next == idB {
				next = idA
			} else {
				next = idB
			}
			sleepCtx(ctx, 1500*time.Millisecond) // let the old active's agent catch up
		}
	}
	res.Lat = summarize(all, missed)
}

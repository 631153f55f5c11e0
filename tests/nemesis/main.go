package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type runConfig struct {
	seed             uint64
	peers            int // 3 or 5
	duration         time.Duration
	lease            time.Duration
	plain, hagents   int
	agentShapes      []string // the shapes heureka agents take in turn
	minLife, maxLife time.Duration
	minHold, maxHold time.Duration
	bin, prefix, out string
	minGap, maxGap   time.Duration // health between faults
	kinds            []string      // fault kinds drawn from
	cover            bool          // draw every kind once before any twice (short mode)
}

func main() {
	short := flag.Bool("short", false, "CI mode: seed 1 and one random seed, about a minute each, every fault kind once in each")
	seed := flag.Uint64("seed", 0, "the schedule's seed (default: a random one, printed)")
	duration := flag.Duration("duration", 5*time.Minute, "how long faults are injected, per seed")
	plain := flag.Int("plain", 12, "plain Eureka agents")
	hagents := flag.Int("hagents", 6, "nodes running heureka's agent")
	agentShapes := flag.String("agents", strings.Join(agentShapes, ","), "the shapes heureka agents take in turn: "+strings.Join(agentShapes, ", "))
	out := flag.String("out", "", "directory for the history, peer logs and the report (default: a new temporary one)")
	inner := flag.String("inner", "", "internal: run one seed inside the client namespace of this prefix")
	npeers := flag.Int("peers", 3, "registry peers, each in its own network namespace: 3 or 5")
	kinds := flag.String("faults", "", "the fault kinds to draw from, comma-separated (default: every kind; split needs -peers 5)")
	proxy := flag.Int("proxy", 0, "internal: run the fault proxy of this peer, inside its namespace")
	clockQuery := flag.String("clock", "", "internal: change the clock of the peer whose namespace this runs in (a /debug/clock query, e.g. jump=30s)")
	flag.Parse()
	if *npeers != 3 && *npeers != 5 {
		fmt.Fprintf(os.Stderr, "nemesis: -peers %d: want 3 or 5 (an odd count, so that a split has a majority)\n", *npeers)
		os.Exit(2)
	}
	if *proxy != 0 {
		os.Exit(runProxy(*proxy, *npeers))
	}
	if *clockQuery != "" {
		os.Exit(runClock(*clockQuery))
	}
	chosen, err := parseKinds(*kinds, *npeers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis: -faults:", err)
		os.Exit(2)
	}
	shapesRun, err := parseShapes(*agentShapes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis: -agents:", err)
		os.Exit(2)
	}

	cfg := runConfig{peers: *npeers, duration: *duration, lease: 3 * time.Second, plain: *plain, hagents: *hagents,
		minLife: 10 * time.Second, maxLife: 40 * time.Second, minHold: 5 * time.Second, maxHold: 15 * time.Second,
		minGap: 2 * time.Second, maxGap: 5 * time.Second,
		bin: os.Getenv("HEUREKA_BIN"), out: *out, kinds: chosen, agentShapes: shapesRun}
	if *inner != "" {
		cfg.prefix, cfg.seed = *inner, *seed
		os.Exit(runInner(cfg))
	}
	os.Exit(runOuter(cfg, *short, *seed))
}

// parseKinds reads -faults for a run of n peers: empty means every kind
// that run draws from by default.
func parseKinds(list string, n int) ([]string, error) {
	if list == "" {
		return kindsFor(n), nil
	}
	var chosen []string
	for _, k := range strings.Split(list, ",") {
		switch {
		case !slices.Contains(faultKinds, k):
			return nil, fmt.Errorf("unknown fault kind %q (known: %s)", k, strings.Join(faultKinds, ","))
		case !slices.Contains(kindsFor(n), k):
			return nil, fmt.Errorf("%s needs -peers 5 (with %d peers, isolate is the majority/minority split)", k, n)
		}
		chosen = append(chosen, k)
	}
	return chosen, nil
}

// parseShapes reads -agents: heureka agents' shapes, each known.
func parseShapes(list string) ([]string, error) {
	var out []string
	for _, sh := range strings.Split(list, ",") {
		if !slices.Contains(agentShapes, sh) {
			return nil, fmt.Errorf("unknown shape %q (known: %s)", sh, strings.Join(agentShapes, ","))
		}
		out = append(out, sh)
	}
	return out, nil
}

func runOuter(cfg runConfig, short bool, seed uint64) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "nemesis: needs root (it creates network namespaces)")
		return 2
	}
	if _, err := exec.LookPath("ip"); err != nil {
		fmt.Fprintln(os.Stderr, "nemesis: needs ip (iproute2)")
		return 2
	}
	removeStale()
	if cfg.out == "" {
		d, err := os.MkdirTemp("", "heureka-nemesis-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "nemesis:", err)
			return 2
		}
		cfg.out = d
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 2
	}
	if abs, err := filepath.Abs(cfg.out); err == nil {
		cfg.out = abs
	}
	if cfg.bin == "" {
		cfg.bin = filepath.Join(cfg.out, "heureka")
		fmt.Println("nemesis: building heureka")
		build := exec.Command("go", "build", "-o", cfg.bin, "./cmd/heureka")
		build.Dir = filepath.Join("..", "..")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "nemesis: building heureka:", err)
			return 2
		}
	}
	seeds := []uint64{seed}
	if short {
		// A fixed seed that CI replays every run, and a new one.
		seeds = []uint64{1, rand.Uint64() % 1_000_000}
		if seed != 0 {
			seeds = []uint64{seed}
		}
		// Every fault kind once per seed, each held past a lease.
		cfg.duration = 65 * time.Second
		cfg.minLife, cfg.maxLife = 5*time.Second, 20*time.Second
		cfg.minHold, cfg.maxHold = 4*time.Second, 6*time.Second
		cfg.minGap, cfg.maxGap = time.Second, 2*time.Second
		cfg.cover = true
	} else if seed == 0 {
		seeds = []uint64{rand.Uint64() % 1_000_000}
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	code := 0
	for _, s := range seeds {
		c := runSeed(cfg, s, sigs)
		if c != 0 {
			code = c
		}
		if c == 130 {
			break
		}
	}
	fmt.Printf("nemesis: history, logs and reports in %s\n", cfg.out)
	return code
}

// runSeed builds the network for one seed, runs the inner harness inside
// the client namespace, and removes every namespace it created afterwards,
// whatever happened; a namespace left behind makes the run fail (2).
func runSeed(cfg runConfig, seed uint64, sigs chan os.Signal) (code int) {
	topo := &topology{prefix: nsBase + strconv.Itoa(os.Getpid()), peers: cfg.peers}
	defer func() {
		if err := topo.destroy(); err != nil {
			fmt.Fprintln(os.Stderr, "nemesis: removing the network:", err)
			if code == 0 {
				code = 2
			}
		}
	}()
	if err := topo.create(); err != nil {
		fmt.Fprintln(os.Stderr, "nemesis: building the network:", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 2
	}
	args := []string{"netns", "exec", topo.ns("cli"), self, "-inner", topo.prefix, "-peers", strconv.Itoa(cfg.peers), "-seed", strconv.FormatUint(seed, 10),
		"-duration", cfg.duration.String(), "-plain", strconv.Itoa(cfg.plain), "-hagents", strconv.Itoa(cfg.hagents), "-agents", strings.Join(cfg.agentShapes, ","),
		"-out", filepath.Join(cfg.out, "seed-"+strconv.FormatUint(seed, 10)), "-faults", strings.Join(cfg.kinds, ",")}
	cmd := exec.Command("ip", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "HEUREKA_BIN="+cfg.bin,
		"NEMESIS_LIFE="+cfg.minLife.String()+","+cfg.maxLife.String(),
		"NEMESIS_HOLD="+cfg.minHold.String()+","+cfg.maxHold.String(),
		"NEMESIS_GAP="+cfg.minGap.String()+","+cfg.maxGap.String(),
		"NEMESIS_COVER="+strconv.FormatBool(cfg.cover))
	// Signals go through us; if we die without a word, it stops too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 2
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-sigs:
		fmt.Fprintln(os.Stderr, "nemesis: interrupted; stopping the run and removing its namespaces")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		return 130
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return 2
	}
	return 0
}

func parsePair(env string, lo, hi *time.Duration) {
	a, b, ok := strings.Cut(os.Getenv(env), ",")
	if !ok {
		return
	}
	if d, err := time.ParseDuration(a); err == nil {
		*lo = d
	}
	if d, err := time.ParseDuration(b); err == nil {
		*hi = d
	}
}

// runInner is one seed's run, inside the client namespace.
func runInner(cfg runConfig) int {
	parsePair("NEMESIS_LIFE", &cfg.minLife, &cfg.maxLife)
	parsePair("NEMESIS_HOLD", &cfg.minHold, &cfg.maxHold)
	parsePair("NEMESIS_GAP", &cfg.minGap, &cfg.maxGap)
	cfg.cover = os.Getenv("NEMESIS_COVER") == "true"
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 2
	}
	replay := fmt.Sprintf("go run . -seed %d -duration %v", cfg.seed, cfg.duration)
	if cfg.cover {
		replay = fmt.Sprintf("go run . -short -seed %d", cfg.seed)
	}
	if cfg.peers != 3 {
		replay += fmt.Sprintf(" -peers %d", cfg.peers)
	}
	if !slices.Equal(cfg.kinds, kindsFor(cfg.peers)) {
		replay += " -faults " + strings.Join(cfg.kinds, ",")
	}
	if !slices.Equal(cfg.agentShapes, agentShapes) {
		replay += " -agents " + strings.Join(cfg.agentShapes, ",")
	}
	fmt.Printf("nemesis: seed %d (replay: %s), %v of faults\n", cfg.seed, replay, cfg.duration)
	h, err := newHistory(filepath.Join(cfg.out, "history.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		return 2
	}
	defer h.close()
	topo := &topology{prefix: cfg.prefix, peers: cfg.peers}
	var peers []*peer
	for i := 1; i <= cfg.peers; i++ {
		// Each peer reaches the others through its fault proxy.
		urls := []string{(&peer{i: i}).peerURL()}
		for j := 1; j <= cfg.peers; j++ {
			if j != i {
				urls = append(urls, peerURLVia(j))
			}
		}
		peers = append(peers, &peer{i: i, ns: topo.peerNS(i), bin: cfg.bin, dir: cfg.out, peers: strings.Join(urls, ",")})
	}
	var proxies []*exec.Cmd
	defer func() {
		for _, p := range peers {
			p.kill()
		}
		for _, c := range proxies {
			_ = c.Process.Kill()
		}
	}()
	for i := 1; i <= cfg.peers; i++ {
		c, err := startProxy(topo.peerNS(i), i, cfg.peers, cfg.out)
		if c != nil {
			proxies = append(proxies, c)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "nemesis:", err)
			return 2
		}
	}
	for _, p := range peers {
		if err := p.start(); err != nil {
			fmt.Fprintln(os.Stderr, "nemesis:", err)
			return 2
		}
	}
	for _, p := range peers {
		if err := p.waitReady(ctx, 30*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "nemesis:", err)
			return 2
		}
	}

	w := &world{h: h, peers: peers, cfg: cfg, live: map[string]*liveInst{},
		rng:  &lockedRand{r: rand.New(rand.NewPCG(cfg.seed, 0x6e656d65))},
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	w.changing.Store(true)
	nem := &nemesis{w: w, topo: topo, faults: map[string]int{}, deaths: map[string][]time.Duration{},
		rng: &lockedRand{r: rand.New(rand.NewPCG(cfg.seed, 0x7363686564))}}
	ms := newMissStats()

	wctx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	nem.agentCtx = wctx
	var wg sync.WaitGroup
	goRun := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	for n := range cfg.plain {
		c := newEurekaClient(w, fmt.Sprintf("plain-%02d", n), serverList(peers, n))
		crash := make(chan chan string)
		nem.crash = append(nem.crash, crash)
		goRun(func() { w.plainAgent(wctx, n, c, crash) })
	}
	for n := range cfg.hagents {
		ha, err := w.startHAgent(wctx, n, cfg.agentShapes[n%len(cfg.agentShapes)])
		if err != nil {
			fmt.Fprintln(os.Stderr, "nemesis:", err)
			return 2
		}
		nem.agents = append(nem.agents, ha)
	}
	nem.nextAg = cfg.hagents
	goRun(func() { w.operator(wctx) })
	goRun(func() { w.deltaReader(wctx) })
	var ws []*watchStats
	for _, p := range peers {
		st := &watchStats{}
		ws = append(ws, st)
		goRun(func() { w.watcher(wctx, p, st) })
	}
	goRun(func() { nem.sampler(wctx, ms) })
	cs := &cacheStats{}
	goRun(func() {
		if err := nem.cacheReader(wctx, cs); err != nil {
			fmt.Fprintln(os.Stderr, "nemesis: the cache reader:", err)
		}
	})

	began := time.Now()
	if err := nem.run(ctx, began.Add(cfg.duration)); err != nil {
		fmt.Fprintln(os.Stderr, "nemesis: injecting a fault:", err)
		stopWork()
		return 2
	}
	if ctx.Err() != nil {
		stopWork()
		return 130
	}

	// Settle: no more changes; agents keep renewing. Wait a lease, then
	// for the peers to agree.
	w.changing.Store(false)
	fmt.Printf("nemesis %6.1fs settling\n", time.Since(h.begin).Seconds())
	_ = sleep(ctx, cfg.lease+2*time.Second)
	var views []view
	settleBegan := time.Now()
	for time.Since(settleBegan) < 60*time.Second && ctx.Err() == nil {
		var ok bool
		if ok, views = w.agree(ctx, "checker"); ok && !w.anyProtecting(ctx) {
			break
		}
		_ = sleep(ctx, 500*time.Millisecond)
	}
	agreed, views := w.agree(ctx, "checker")
	if !agreed && ctx.Err() == nil {
		w.recordDivergence(ctx, "final-divergence", "the views the checker judges, 60 s after the settle began", "")
	}
	final := map[string]map[string]string{}
	for i, p := range peers {
		if i < len(views) {
			final[p.name()] = views[i].seen()
		} else {
			final[p.name()] = map[string]string{}
		}
	}
	w.mu.Lock()
	live := map[string]*liveInst{}
	for id, li := range w.live {
		live[id] = li
	}
	w.mu.Unlock()
	stopWork()
	for _, ha := range nem.agents {
		<-ha.done
	}
	wg.Wait()

	ops := h.snapshot()
	v := check(ops, final, live, peers, cfg.lease, ws)
	v.cacheEmpty = cs.empty
	v.deadServed = nem.deadLate
	v.brokenPromises = ms.broken
	for _, d := range ms.first {
		v.note("%s", d)
	}
	v.unconverged = nem.unconv
	report := summary(cfg, time.Since(began), ops, nem, ms, v, ws, cs, time.Since(settleBegan))
	fmt.Print(report)
	_ = os.WriteFile(filepath.Join(cfg.out, "report.txt"), []byte(report), 0o644)
	if v.failed() {
		return 1
	}
	return 0
}

func summary(cfg runConfig, ran time.Duration, ops []op, nem *nemesis, ms *missStats, v *verdict, ws []*watchStats, cs *cacheStats, settle time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== nemesis report, seed %d: %v of faults, %v in all (%d peers, lease %v, %d plain agents, %d heureka agents)\n",
		cfg.seed, cfg.duration, ran.Round(time.Second), cfg.peers, cfg.lease, cfg.plain, cfg.hagents)
	fmt.Fprintf(&b, "faults:")
	for _, k := range kindsFor(cfg.peers) {
		fmt.Fprintf(&b, " %s=%d", k, nem.faults[k])
	}
	counts := map[string]map[string]int{}
	for _, o := range ops {
		if o.Proc == "nemesis" || o.Proc == "checker" {
			continue
		}
		if counts[o.Op] == nil {
			counts[o.Op] = map[string]int{}
		}
		counts[o.Op][o.Result]++
	}
	fmt.Fprintf(&b, "\noperations (%d):", len(ops))
	for _, k := range []string{"register", "renew", "renew-others", "metadata", "cancel", "override", "clear", "drain", "fetch", "delta", "watch"} {
		c := counts[k]
		fmt.Fprintf(&b, "\n  %-13s ok=%d error=%d timeout=%d", k, c["ok"], c["error"], c["timeout"])
	}
	streams, events, resyncs := 0, 0, 0
	for _, s := range ws {
		streams, events, resyncs = streams+s.streams, events+s.events, resyncs+s.resyncs
	}
	fmt.Fprintf(&b, "\nwatch: %d streams, %d events, %d resyncs\n", streams, events, resyncs)
	fmt.Fprintf(&b, "convergence after heal: %s; not converged within %v: %d\n", percentiles(nem.converge), convergeWithin, nem.unconv)
	fmt.Fprintf(&b, "node death to gone from every peer (must be within lease + %v = %v):", deathSlack, cfg.lease+deathSlack)
	for _, sh := range shapes {
		fmt.Fprintf(&b, "\n  %-13s %s", sh, percentiles(nem.deaths[sh]))
	}
	fmt.Fprintf(&b, "\n")
	b.WriteString(ms.report(cfg.peers))
	fmt.Fprintf(&b, "checker (final state %v after the settle began; must be 0 unless noted):\n", settle.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "  acknowledged cancels resurrected:        %d (of %d cancels)\n", v.resurrected, v.cancelsAcked)
	fmt.Fprintf(&b, "  evicted while renewing through the peer: %d\n", v.evictedLive)
	fmt.Fprintf(&b, "  acknowledged overrides lost:             %d (of %d instances checked)\n", v.overrideLost, v.overridesCheck)
	fmt.Fprintf(&b, "  acknowledged clears lost:                %d\n", v.clearLost)
	fmt.Fprintf(&b, "  lost to a cross-peer reorder (allowed):  %d\n", v.crossPeer)
	fmt.Fprintf(&b, "  divergent instances after heal:          %d\n", v.divergent)
	fmt.Fprintf(&b, "  running agents missing from a peer:      %d\n", v.liveMissing)
	fmt.Fprintf(&b, "  watch id gaps / reorders:                %d / %d\n", v.watchGaps, v.watchReorders)
	fmt.Fprintf(&b, "  cache reads empty while all peers dead:  %d (of %d)\n", v.cacheEmpty, cs.reads)
	fmt.Fprintf(&b, "  dead nodes served past lease + %v:       %d\n", deathSlack, v.deadServed)
	fmt.Fprintf(&b, "  … only by peers in self-preservation (allowed): %d\n", nem.deadHeld)
	fmt.Fprintf(&b, "  heals not converged within %v:         %d\n", convergeWithin, v.unconverged)
	fmt.Fprintf(&b, "  live instances a peer had to serve, and did not (sampled): %d\n", v.brokenPromises)
	for _, d := range v.details {
		fmt.Fprintf(&b, "  - %s\n", d)
	}
	if v.failed() {
		fmt.Fprintf(&b, "FAIL (seed %d)\n", cfg.seed)
	} else {
		fmt.Fprintf(&b, "PASS (seed %d)\n", cfg.seed)
	}
	return b.String()
}

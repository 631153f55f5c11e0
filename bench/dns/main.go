// Command dns measures heureka's DNS server against Knot DNS serving the
// same names from a static zone file rendered from the registry, with
// dnsperf (Debian's) as the load generator, all in one run:
//
//		cd bench && go run ./dns [-datanodes 20000] [-big 100000] [-duration 10s]
//
//	 1. compare: one heureka with -datanodes DataNodes (over -racks racks)
//	    and a 3-NameNode application; Knot serving the zone rendered from
//	    it; dnsperf's peak queries/s against each, for the NameNode name and
//	    for one rack's DataNodes, and the CPU time each server spent a
//	    query (/proc/PID/stat), which the generator's own limits do not
//	    bound;
//	 2. latency: dnsperf at -share (half) of heureka's peak for each
//	    name, every answer's latency (dnsperf -v), the percentiles,
//	    against heureka and then Knot at the same rate, each at the run's
//	    niceness and then with the server and dnsperf real-time (-rt:
//	    SCHED_FIFO, which the machine's other work does not delay);
//	    heureka's own p99 from its heureka_dns_query_seconds histogram
//	    (the query's arrival to its reply sent), and the time the server's
//	    threads waited for a CPU;
//	 3. change: -changes times, a DataNode drained (then back), and a UDP
//	    query repeated until the answer shows it: the time from the write
//	    sent, and from the write acknowledged, to that answer;
//	 4. renewals: a fresh heureka with -big instances; -renew-pairs times,
//	    renewals at -renew-rate for -duration without DNS load, then with
//	    dnsperf at -renew-share (half) of the peak on the NameNode name
//	    aimed at a Knot on the generators' CPU (what the DNS load costs
//	    the generator alone), then aimed at heureka: lost renewals, the
//	    latency percentiles the generator saw, the p99 the server saw
//	    (heureka_http_request_duration_seconds, its handler's time), the
//	    server's CPU and garbage collections, and the time the server's
//	    and the generator's threads waited for a CPU; then all again with
//	    the server and this program real-time (-rt) and dnsperf a priority
//	    below them.
//
// The servers run on -server-cpus and the generators (dnsperf and this
// program) on -gen-cpus (taskset), so on a 2-core machine they never share
// a core. Everything runs at niceness -nice (-10: ahead of the machine's
// other work), except dnsperf beside the renewals, which runs at 0, so
// that on the generators' CPU the renewal load comes first and what its
// latency shows is the server's. Every figure is printed with the load
// average at its start. Only 127.0.0.1 is used; every process is stopped
// at the end.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/bench/internal/procstat"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/dnsapi"
	"github.com/heureka-project/heureka/internal/proc"
	"github.com/heureka-project/heureka/registry/registrytest"
	"github.com/miekg/dns"
)

type options struct {
	datanodes, racks, big, changes int
	renewPairs, nice, rt           int
	renewRate, share, renewShare   float64
	skip                           map[string]bool
	duration                       time.Duration
	serverCPUs, genCPUs            string
	bin, repo                      string
}

const (
	dnApp  = registrytest.DataNodeApp
	nnApp  = "HDFS-NAMENODE.PROD"
	zone   = "heureka."
	nnName = "hdfs-namenode.prod.service.heureka."
)

func main() {
	var o options
	flag.IntVar(&o.datanodes, "datanodes", 20000, "DataNodes in the comparison's registry")
	flag.IntVar(&o.racks, "racks", 400, "racks the DataNodes are spread over (the rack name's answer must fit 1,232 bytes for the comparison to be like for like)")
	flag.IntVar(&o.big, "big", 100000, "instances in the renewal phase's registry")
	flag.IntVar(&o.changes, "changes", 200, "changes timed to their DNS answer")
	flag.Float64Var(&o.renewRate, "renew-rate", 0, "renewals a second in the renewal phase (default: -big every 30 s)")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each dnsperf run and of each renewal window")
	flag.StringVar(&o.serverCPUs, "server-cpus", "1", "CPUs for heureka and Knot (taskset); empty: no pinning")
	flag.StringVar(&o.genCPUs, "gen-cpus", "0", "CPUs for dnsperf and this program; empty: no pinning")
	flag.StringVar(&o.bin, "bin", "", "heureka binary to run (default: build ../cmd/heureka)")
	flag.StringVar(&o.repo, "repo", "..", "the heureka repository, to build from")
	flag.Float64Var(&o.share, "share", 0.5, "the latency phase's DNS rate, as a share of heureka's peak")
	flag.Float64Var(&o.renewShare, "renew-share", 0.5, "the renewal phase's DNS rate, as a share of heureka's peak for the NameNode name")
	flag.IntVar(&o.renewPairs, "renew-pairs", 2, "renewal windows without and with DNS load, in turn")
	flag.IntVar(&o.nice, "nice", -10, "niceness of the servers, dnsperf and this program (below 0 needs root or CAP_SYS_NICE); 0: as started")
	flag.IntVar(&o.rt, "rt", 10, "SCHED_FIFO priority of the servers and dnsperf in a second latency run of each (root only); 0: no such run")
	skip := flag.String("skip", "", "phases to leave out, comma-separated: latency, change, renewals (compare always runs: it sets the rates)")
	flag.Parse()
	o.skip = map[string]bool{}
	for p := range strings.SplitSeq(*skip, ",") {
		switch p = strings.TrimSpace(p); p {
		case "":
		case "latency", "change", "renewals":
			o.skip[p] = true
		default:
			fatal(fmt.Errorf("-skip %q: not a phase; want latency, change or renewals", p))
		}
	}
	if o.renewRate == 0 {
		o.renewRate = float64(o.big) / 30
	}
	if err := proc.PinSelf(o.genCPUs, "HEUREKA_DNS_BENCH_PINNED"); err != nil {
		fatal(err)
	}
	if err := reniceSelf(o.nice); err != nil {
		fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench/dns:", err)
	os.Exit(1)
}

func run(ctx context.Context, o options) error {
	for _, tool := range []string{"dnsperf", "knotd", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install dnsperf knot util-linux)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "heureka-dns-bench-")
	if err != nil {
		return err
	}
	if os.Getenv("HEUREKA_DNS_BENCH_KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		fmt.Println("# work directory kept:", dir)
	}
	bin := o.bin
	if bin == "" {
		if bin, err = proc.Build(ctx, o.repo, dir); err != nil {
			return err
		}
	}
	fmt.Printf("# bench/dns: %d DataNodes over %d racks + 3 NameNodes; servers on CPUs %q, generators on %q; niceness %d; %v a run\n",
		o.datanodes, o.racks, o.serverCPUs, o.genCPUs, o.nice, o.duration)

	// 1. compare.
	h, err := startHeureka(ctx, bin, dir, "compare", o.serverCPUs)
	if err != nil {
		return err
	}
	defer h.stop()
	ins := fleet(o.datanodes, o.racks)
	if err := registerAll(ctx, h.client, ins); err != nil {
		return err
	}
	rackName, _ := dnsapi.RackName(rackOf(7, o.racks), dnApp, zone)
	zoneFile := filepath.Join(dir, "heureka.zone")
	if err := renderZone(ctx, h.client, zoneFile, len(ins)+3); err != nil {
		return err
	}
	knot, err := startKnot(ctx, dir, zoneFile, o.serverCPUs)
	if err != nil {
		return err
	}
	defer knot.stop()
	servers := []dnsServer{{"heureka", h.dns, h.p.Pid()}, {"knot", knot.addr, knot.p.Pid()}}
	peak := map[string]float64{}
	for _, name := range []string{nnName, rackName} {
		for _, srv := range servers {
			load := loadavg()
			before, _ := procstat.Read(srv.pid)
			r, err := dnsperf(ctx, o, srv.addr, name, dnsLoad{})
			if err != nil {
				return fmt.Errorf("dnsperf %s %s: %w", srv.what, name, err)
			}
			after, _ := procstat.Read(srv.pid)
			cpu := after.CPU - before.CPU
			fmt.Printf("peak\t%s\t%s\t%.0f q/s\tlost %d\trcodes %s\tserver CPU %.2f µs/q (%.0f%% of a core)\tload %s\n", srv.what, name, r.qps, r.lost,
				r.rcodes, cpu.Seconds()*1e6/(r.qps*o.duration.Seconds()), 100*cpu.Seconds()/o.duration.Seconds(), load)
			peak[srv.what+name] = r.qps
		}
		fmt.Printf("ratio\t%s\theureka/knot %.2f\n", name, peak["heureka"+name]/peak["knot"+name])
	}

	// 2. latency at -share of heureka's peak, heureka's and then Knot's at
	// the same rate; at the run's niceness, then with the server and dnsperf
	// real-time (-rt), which the machine's other work cannot delay.
	for _, name := range []string{nnName, rackName} {
		if o.skip["latency"] {
			break
		}
		rate := peak["heureka"+name] * o.share
		for _, run := range latencyRuns(servers, o.rt) {
			srv := run.srv
			if run.rt > 0 {
				if err := realTime(srv.pid, run.rt); err != nil {
					return err
				}
			}
			load := loadavg()
			hist := func() histogram { return histogram{} }
			if srv.what == "heureka" {
				hist = func() histogram {
					f, _ := scrape(h.metrics)
					return histogramOf(f, "heureka_dns_query_seconds", map[string]string{"transport": "udp"})
				}
			}
			before, waited := hist(), procWaited(srv.pid)
			r, err := dnsperf(ctx, o, srv.addr, name, dnsLoad{rate: rate, verbose: true, rt: run.rt})
			if run.rt > 0 {
				if err := realTime(srv.pid, 0); err != nil {
					return err
				}
			}
			if err != nil {
				return err
			}
			waited = procWaited(srv.pid) - waited
			own := ""
			if srv.what == "heureka" {
				own = "\tserver's own p99 " + bound(hist().since(before).quantile(0.99))
			}
			fmt.Printf("latency\t%s%s\t%s\tat %.0f q/s (achieved %.0f)\tp50 %v p99 %v p99.9 %v max %v\tlost %d%s\tserver waited for a CPU %s\tload %s\n", srv.what, run.label(), name, rate, r.qps,
				pct(r.lat, 50), pct(r.lat, 99), pct(r.lat, 99.9), pct(r.lat, 100), r.lost, own, perSecond(waited, o.duration), load)
		}
	}
	knot.stop()

	// 3. change → answer.
	if !o.skip["change"] {
		load := loadavg()
		fromSent, fromAck, err := changes(ctx, h, ins, o)
		if err != nil {
			return err
		}
		fmt.Printf("change\t%d changes\tfrom the write sent: p50 %v p99 %v max %v\tfrom its answer: p50 %v p99 %v max %v\tload %s\n", len(fromSent),
			pct(fromSent, 50), pct(fromSent, 99), pct(fromSent, 100), pct(fromAck, 50), pct(fromAck, 99), pct(fromAck, 100), load)
	}
	h.stop()
	if o.skip["renewals"] {
		return nil
	}

	// 4. renewals on a big registry, without and with DNS load, in turn.
	b, err := startHeureka(ctx, bin, dir, "renewals", o.serverCPUs)
	if err != nil {
		return err
	}
	defer b.stop()
	big := fleet(o.big, o.racks)
	if err := registerAll(ctx, b.client, big); err != nil {
		return err
	}
	// The same DNS load aimed at Knot on the generators' CPU: what the
	// load costs the renewal generator, with no DNS work on the server.
	genKnot, err := startKnot(ctx, dir, zoneFile, o.genCPUs)
	if err != nil {
		return err
	}
	defer genKnot.stop()
	rate := peak["heureka"+nnName] * o.renewShare
	modes := []int{0}
	if o.rt > 0 {
		modes = append(modes, o.rt)
	}
	for _, prio := range modes {
		if prio > 0 {
			// The server and this program real-time, dnsperf and the
			// Knot beside it a priority below them: neither the
			// machine's other work nor the DNS load's generator delays
			// the renewals or their server, so what is left is the DNS
			// work in the server.
			if err := realTime(b.p.Pid(), prio); err != nil {
				return err
			}
			if err := realTime(os.Getpid(), prio); err != nil {
				return err
			}
			if prio > 1 {
				if err := realTime(genKnot.p.Pid(), prio-1); err != nil {
					return err
				}
			}
		}
		label := latencyRun{rt: prio}.label()
		for pair := range o.renewPairs {
			load := loadavg()
			quiet := renewals(ctx, b, big, o, nil)
			printRenew(o, pair, "without DNS"+label, quiet, quiet, load)
			for _, target := range []struct{ what, addr string }{
				{"with DNS at Knot on the generators' CPU", genKnot.addr},
				{"with DNS at heureka", b.dns},
			} {
				load := loadavg()
				var got dnsperfResult
				loaded := renewals(ctx, b, big, o, func(ctx context.Context) {
					got, _ = dnsperf(ctx, o, target.addr, nnName, dnsLoad{rate: rate, nice: -o.nice, rt: max(prio-1, 0), normal: true})
				})
				printRenew(o, pair, fmt.Sprintf("%s%s, %.0f q/s (achieved %.0f, lost %d)", target.what, label, rate, got.qps, got.lost), loaded, quiet, load)
			}
		}
		if prio > 0 {
			if err := realTime(b.p.Pid(), 0); err != nil {
				return err
			}
			if err := realTime(os.Getpid(), 0); err != nil {
				return err
			}
			if err := realTime(genKnot.p.Pid(), 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// printRenew prints one renewal window, its p99 against quiet's.
func printRenew(o options, pair int, what string, r, quiet renewResult, load string) {
	fmt.Printf("renew\t%d/%d\t%d instances\t%s\t%d sent, %d lost\tp50 %v p99 %v max %v\tp99 ratio %.2f\tserver's own p99 %s\tserver CPU %.0f%% of a core, %d GCs\twaited for a CPU: server %s, generator %s\tload %s\n",
		pair+1, o.renewPairs, o.big, what, r.sent, r.lost, pct(r.lat, 50), pct(r.lat, 99), pct(r.lat, 100),
		float64(pct(r.lat, 99))/float64(pct(quiet.lat, 99)), bound(r.server.quantile(0.99)), 100*r.cpu.Seconds()/o.duration.Seconds(), r.gcs,
		perSecond(r.srvWait, o.duration), perSecond(r.genWait, o.duration), load)
}

// dnsServer is one of the servers compared.
type dnsServer struct {
	what, addr string
	pid        int
}

// latencyRun is one server's latency run: at the run's niceness, or with
// it and dnsperf real-time at priority rt.
type latencyRun struct {
	srv dnsServer
	rt  int
}

func (r latencyRun) label() string {
	if r.rt == 0 {
		return ""
	}
	return fmt.Sprintf(" (real-time %d)", r.rt)
}

// latencyRuns lists the latency runs: each server at the run's niceness,
// then each real-time when rt is set.
func latencyRuns(servers []dnsServer, rt int) []latencyRun {
	var out []latencyRun
	for _, prio := range []int{0, rt} {
		for _, srv := range servers {
			out = append(out, latencyRun{srv, prio})
		}
		if rt == 0 {
			break
		}
	}
	return out
}

// realTime puts every thread of process pid in SCHED_FIFO at priority
// prio, or back in the normal policy with prio 0 (its niceness kept).
func realTime(pid, prio int) error {
	args := []string{"chrt", "-a", "-f", "-p", strconv.Itoa(prio), strconv.Itoa(pid)}
	if prio == 0 {
		args = []string{"chrt", "-a", "-o", "-p", "0", strconv.Itoa(pid)}
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %w\n%s", args, err, out)
	}
	return nil
}

// reniceSelf sets this process's niceness: every thread's, as Linux keeps
// it per thread, and threads started later inherit it. Processes started
// from it inherit it too.
func reniceSelf(n int) error {
	if n == 0 {
		return nil
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil {
			return fmt.Errorf("niceness %d: %w (below 0 needs root or CAP_SYS_NICE; -nice 0 runs as started)", n, err)
		}
	}
	return nil
}

// heurekaProc is a running `heureka server` with DNS on.
type heurekaProc struct {
	p       *proc.Proc
	base    string // Eureka base URL
	metrics string // its /metrics URL
	dns     string
	client  *client.Client
}

func startHeureka(ctx context.Context, bin, dir, name, cpus string) (*heurekaProc, error) {
	addr, err := proc.FreeAddr("127.0.0.1")
	if err != nil {
		return nil, err
	}
	// DNS on a port the server picks (free for UDP and TCP alike), read
	// from its listening line.
	dnsAddr := make(chan string, 1)
	onLine := func(l string) bool {
		m := dnsLineRE.FindStringSubmatch(l)
		if m != nil {
			dnsAddr <- m[1]
		}
		return m != nil
	}
	argv := proc.Taskset(cpus, bin, "server", "--listen", addr, "--dns-listen", "127.0.0.1:0")
	p, err := proc.StartLogged("heureka "+name, proc.Command(argv), filepath.Join(dir, name+".log"), onLine)
	if err != nil {
		return nil, err
	}
	if err := p.WaitReady(ctx, 3*time.Minute, proc.HTTPOK("http://"+addr+"/readyz")); err != nil {
		p.Stop(5 * time.Second)
		log, _ := os.ReadFile(filepath.Join(dir, name+".log"))
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	var d string
	select {
	case d = <-dnsAddr:
	case <-time.After(10 * time.Second):
		p.Stop(5 * time.Second)
		return nil, errors.New("heureka printed no DNS address")
	}
	cfg := client.DefaultConfig()
	cfg.URLs, cfg.Logger = []string{"http://" + addr + "/eureka"}, slog.New(slog.DiscardHandler)
	c, err := client.New(cfg)
	if err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	return &heurekaProc{p: p, base: "http://" + addr + "/eureka", metrics: "http://" + addr + "/metrics", dns: d, client: c}, nil
}

var dnsLineRE = regexp.MustCompile(`heureka server listening.* dns=(\S+)`)

func (h *heurekaProc) stop() {
	if h.p != nil {
		_ = h.client.Close()
		h.p.Stop(15 * time.Second)
		h.p = nil
	}
}

func rackOf(i, racks int) string { return fmt.Sprintf("/dc1/rack%03d", i%racks) }

// fleet is n DataNodes as the agent registers them, over racks racks, with
// an hour's lease so that none expires while the benchmark runs.
func fleet(n, racks int) []*heureka.Instance {
	out := make([]*heureka.Instance, n)
	for i := range out {
		in := registrytest.DataNode(i)
		in.Metadata = in.Metadata.With("rack", rackOf(i, racks))
		in.Lease.DurationSecs = 3600
		out[i] = in
	}
	return out
}

func nameNodes() []*heureka.Instance {
	out := make([]*heureka.Instance, 3)
	for i, st := range []string{"standby", "active", "observer"} {
		out[i] = &heureka.Instance{ID: fmt.Sprintf("nn%d.prod.example.com", i+1), App: nnApp,
			HostName: fmt.Sprintf("nn%d.prod.example.com", i+1), IPAddr: fmt.Sprintf("10.250.0.%d", i+1),
			Status: heureka.StatusUp, Port: heureka.Port{Number: 8020, Enabled: true},
			Lease: heureka.LeaseInfo{DurationSecs: 3600}, Metadata: heureka.NewMetadata(heureka.MetaRoleState, st)}
	}
	return out
}

func registerAll(ctx context.Context, c *client.Client, ins []*heureka.Instance) error {
	ins = append(ins, nameNodes()...)
	work := make(chan *heureka.Instance)
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range 16 {
		wg.Go(func() {
			for in := range work {
				if err := c.Register(ctx, in); err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	for _, in := range ins {
		work <- in
	}
	close(work)
	wg.Wait()
	if p := failed.Load(); p != nil {
		return fmt.Errorf("register: %w", *p)
	}
	return nil
}

// renderZone writes the zone heureka serves, as a static zone file: the
// application, role-state and rack names with their A records.
func renderZone(ctx context.Context, c *client.Client, path string, want int) error {
	// A listing may be served up to 10 s behind after a registration
	// storm (docs/deployment.md, --storm-rate): wait for all of it.
	var apps *heureka.Applications
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		var err error
		if apps, err = c.Apps(ctx); err != nil {
			return err
		}
		n := 0
		for _, a := range apps.Apps {
			n += len(a.Instances)
		}
		if n == want {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the listing holds %d instances a minute after %d registered", n, want)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "$ORIGIN %s\n$TTL 0\n@ SOA ns.%s hostmaster.%s 1 3600 600 86400 0\n@ NS ns.%s\nns A 127.0.0.1\n", zone, zone, zone, zone)
	for _, a := range apps.Apps {
		for _, in := range a.Instances {
			if in.Status != heureka.StatusUp {
				continue
			}
			fmt.Fprintf(&b, "%s A %s\n", dnsapi.ServiceName(a.Name, zone), in.IPAddr)
			if st := in.Metadata.Get(heureka.MetaRoleState); st != "" {
				fmt.Fprintf(&b, "%s.%s A %s\n", st, dnsapi.ServiceName(a.Name, zone), in.IPAddr)
			}
			if name, ok := dnsapi.RackName(in.Metadata.Get("rack"), a.Name, zone); ok {
				fmt.Fprintf(&b, "%s A %s\n", name, in.IPAddr)
			}
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

type knotProc struct {
	p    *proc.Proc
	addr string
}

func startKnot(ctx context.Context, dir, zoneFile, cpus string) (*knotProc, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	kdir := filepath.Join(dir, "knot")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`server:
    listen: 127.0.0.1@%d
    rundir: %s
database:
    storage: %s
template:
  - id: default
    storage: %s
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
zone:
  - domain: %s
    file: %s
log:
  - target: stderr
    any: warning
`, port, kdir, kdir, kdir, strings.TrimSuffix(zone, "."), zoneFile)
	cf := filepath.Join(kdir, "knot.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	argv := proc.Taskset(cpus, "knotd", "-c", cf)
	p, err := proc.StartLogged("knotd", proc.Command(argv), filepath.Join(dir, "knot.log"), nil)
	if err != nil {
		return nil, err
	}
	k := &knotProc{p: p, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := p.WaitReady(ctx, time.Minute, func(context.Context) error {
		m := new(dns.Msg)
		m.SetQuestion(nnName, dns.TypeA)
		r, err := dns.Exchange(m, k.addr)
		if err == nil && len(r.Answer) == 0 {
			err = errors.New("no answer yet")
		}
		return err
	}); err != nil {
		k.stop()
		log, _ := os.ReadFile(filepath.Join(dir, "knot.log"))
		return nil, fmt.Errorf("knotd: %w\n%s", err, log)
	}
	return k, nil
}

func (k *knotProc) stop() {
	if k.p != nil {
		k.p.Stop(10 * time.Second)
		k.p = nil
	}
}

type dnsperfResult struct {
	qps    float64
	lost   int
	rcodes string
	lat    []time.Duration // with verbose
}

var (
	qpsRE    = regexp.MustCompile(`Queries per second:\s+([\d.]+)`)
	lostRE   = regexp.MustCompile(`Queries lost:\s+(\d+)`)
	rcodesRE = regexp.MustCompile(`Response codes:\s+(.*)`)
	// dnsperf -v: "> NOERROR name A 0.000123" per answer.
	answerRE = regexp.MustCompile(`^> \S+ \S+ \S+ ([\d.]+)$`)
)

// dnsLoad is how dnsperf runs: at rate q/s when rate > 0, else as fast as
// it gets answers; verbose collects every answer's latency; nice adds to
// its niceness; rt > 0 runs it real-time (SCHED_FIFO) at that priority,
// normal in the normal policy when this program is real-time.
type dnsLoad struct {
	rate     float64
	verbose  bool
	nice, rt int
	normal   bool // the normal scheduling policy, whatever this program's
}

// dnsperf runs dnsperf on the generator CPUs against addr, asking name A
// over UDP with EDNS0 for o.duration, as l says.
func dnsperf(ctx context.Context, o options, addr, name string, l dnsLoad) (dnsperfResult, error) {
	host, port, _ := strings.Cut(addr, ":")
	data, err := os.CreateTemp("", "dnsperf-*.txt")
	if err != nil {
		return dnsperfResult{}, err
	}
	defer os.Remove(data.Name())
	fmt.Fprintf(data, "%s A\n", name)
	data.Close()
	args := []string{"dnsperf", "-s", host, "-p", port, "-d", data.Name(), "-e", "-l", strconv.Itoa(int(o.duration.Seconds())),
		"-c", "8", "-q", "64", "-t", "2"}
	if l.rate > 0 {
		args = append(args, "-Q", strconv.Itoa(int(l.rate)))
	}
	if l.verbose {
		args = append(args, "-v")
	}
	argv := proc.Taskset(o.genCPUs, args...)
	if l.nice != 0 {
		argv = append([]string{"nice", "-n", strconv.Itoa(l.nice)}, argv...)
	}
	switch {
	case l.rt > 0:
		argv = append([]string{"chrt", "-f", strconv.Itoa(l.rt)}, argv...)
	case l.normal:
		argv = append([]string{"chrt", "-o", "0"}, argv...)
	}
	// dnsperf writes its report (with -v, a line per answer: 58,000 a
	// second at half of heureka's peak) to a file, not a pipe: a pipe
	// holds 64 KiB, and whenever this program was late to read it,
	// dnsperf's receiving thread stopped in write(2) with answers
	// waiting, which its latencies then counted as the server's.
	report, err := os.CreateTemp("", "dnsperf-out-*.txt")
	if err != nil {
		return dnsperfResult{}, err
	}
	defer os.Remove(report.Name())
	defer report.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = report
	err = cmd.Run()
	out, rerr := os.ReadFile(report.Name())
	if err == nil {
		err = rerr
	}
	if err != nil {
		return dnsperfResult{}, fmt.Errorf("%v: %w\n%s", args, err, out)
	}
	var r dnsperfResult
	if m := qpsRE.FindSubmatch(out); m != nil {
		r.qps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := lostRE.FindSubmatch(out); m != nil {
		r.lost, _ = strconv.Atoi(string(m[1]))
	}
	if m := rcodesRE.FindSubmatch(out); m != nil {
		r.rcodes = strings.TrimSpace(string(m[1]))
	}
	if l.verbose {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if m := answerRE.FindStringSubmatch(sc.Text()); m != nil {
				s, _ := strconv.ParseFloat(m[1], 64)
				r.lat = append(r.lat, time.Duration(s*float64(time.Second)))
			}
		}
	}
	if r.qps == 0 {
		return r, fmt.Errorf("%v: no queries per second in its output:\n%s", args, out)
	}
	return r, nil
}

// changes drains a DataNode of the measured rack and brings it back, o.changes
// times in all, each time asking its rack's name over UDP until the answer
// shows the change.
func changes(ctx context.Context, h *heurekaProc, ins []*heureka.Instance, o options) (fromSent, fromAck []time.Duration, err error) {
	var rack []*heureka.Instance
	for i, in := range ins {
		if i%o.racks == 7 {
			rack = append(rack, in)
		}
	}
	name, _ := dnsapi.RackName(rackOf(7, o.racks), dnApp, zone)
	c := &dns.Client{Net: "udp", UDPSize: 1232, Timeout: time.Second}
	has := func(ip string) (bool, error) {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		m.SetEdns0(1232, false)
		r, _, err := c.Exchange(m, h.dns)
		if err != nil {
			return false, err
		}
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok && a.A.String() == ip {
				return true, nil
			}
		}
		return false, nil
	}
	for i := range o.changes {
		in := rack[i/2%len(rack)]
		st, want := heureka.StatusOutOfService, false
		if i%2 == 1 {
			st, want = heureka.StatusUp, true
		}
		sent := time.Now()
		if err := h.client.SetStatus(ctx, dnApp, in.ID, st); err != nil {
			return nil, nil, err
		}
		acked := time.Now()
		deadline := acked.Add(5 * time.Second)
		for {
			got, err := has(in.IPAddr)
			if err != nil {
				return nil, nil, err
			}
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				return nil, nil, fmt.Errorf("%s %s not in DNS after 5 s", in.ID, st)
			}
		}
		now := time.Now()
		fromSent, fromAck = append(fromSent, now.Sub(sent)), append(fromAck, now.Sub(acked))
	}
	return fromSent, fromAck, nil
}

type renewResult struct {
	sent, lost int
	lat        []time.Duration
	server     histogram     // the server's own times of the renewals answered 200
	cpu        time.Duration // the server's CPU time
	gcs        uint64        // the server's garbage collections
	srvWait    time.Duration // the server's threads' time ready to run without a CPU
	genWait    time.Duration // this program's
}

// serverState reads what renewals reports of the server: its histogram of
// renewals answered 200, its garbage collections and its CPU time.
func serverState(h *heurekaProc) renewResult {
	f, _ := scrape(h.metrics)
	return renewResult{
		server: histogramOf(f, "heureka_http_request_duration_seconds",
			map[string]string{"route": "/apps/{app}/{id}", "method": "PUT", "code": "200"}),
		gcs:     summaryCount(f, "go_gc_duration_seconds"),
		cpu:     procUsage(h.p.Pid()),
		srvWait: procWaited(h.p.Pid()),
		genWait: procWaited(os.Getpid()),
	}
}

// renewals renews ins at o.renewRate for o.duration, from 32 connections,
// and times each; during runs alongside when set. A renewal answered
// other than 200 is lost.
func renewals(ctx context.Context, h *heurekaProc, ins []*heureka.Instance, o options, during func(context.Context)) renewResult {
	before := serverState(h)
	res := renewLoad(ctx, h, ins, o, during)
	after := serverState(h)
	res.server, res.gcs, res.cpu = after.server.since(before.server), after.gcs-before.gcs, after.cpu-before.cpu
	res.srvWait, res.genWait = after.srvWait-before.srvWait, after.genWait-before.genWait
	return res
}

func procUsage(pid int) time.Duration {
	u, _ := procstat.Read(pid)
	return u.CPU
}

func procWaited(pid int) time.Duration {
	w, _ := procstat.Waited(pid)
	return w
}

// perSecond formats time waited over a window as milliseconds a second.
func perSecond(d, window time.Duration) string {
	return fmt.Sprintf("%.1f ms/s", float64(d.Milliseconds())/window.Seconds())
}

// renewLoad is renewals' load and its timing by the generator.
func renewLoad(ctx context.Context, h *heurekaProc, ins []*heureka.Instance, o options, during func(context.Context)) renewResult {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var bg sync.WaitGroup
	if during != nil {
		bg.Go(func() { during(context.Background()) })
	}
	work := make(chan *heureka.Instance, 1024)
	var mu sync.Mutex
	var res renewResult
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			var lat []time.Duration
			var lost int
			for in := range work {
				req, _ := http.NewRequest(http.MethodPut, h.base+"/apps/"+in.App+"/"+in.ID+"?status=UP", nil)
				start := time.Now()
				resp, err := hc.Do(req)
				took := time.Since(start)
				if err != nil || resp.StatusCode != http.StatusOK {
					lost++
				}
				if resp != nil {
					resp.Body.Close()
				}
				lat = append(lat, took)
			}
			mu.Lock()
			res.lat, res.lost, res.sent = append(res.lat, lat...), res.lost+lost, res.sent+len(lat)
			mu.Unlock()
		})
	}
	interval := time.Duration(float64(time.Second) / o.renewRate)
	next := time.Now()
	for i := 0; ctx.Err() == nil; i++ {
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		select {
		case work <- ins[i%len(ins)]:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	bg.Wait()
	return res
}

// pct returns the p-th percentile of d (100: the maximum).
func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i].Round(time.Microsecond)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

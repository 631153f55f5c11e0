// Command soak loads one heureka peer (or a cluster of three) the way a
// restarted HDFS fleet does, and reports whether the registry kept up.
//
//	cd bench && go run ./soak [-n 100000] [-peers 1] [-soak 3m30s]
//
// Phases, each bounded in time and count:
//  1. storm: every instance registers, from -writers concurrent clients, in
//     a random order (-sorted: in ID order);
//  2. soak: every instance renews every -renew (30 s leases by default),
//     evenly spread, each heartbeat sent when due from whichever of the
//     -renewers connections is free, oldest first, while -readers clients
//     poll /apps/delta every -poll and do a full fetch whenever the delta's
//     apps__hashcode differs from the last one they saw (a harsher rule
//     than a real client's, which compares against the hash of its own
//     reconciled copy);
//  3. quiet: renewals only, to measure the CPU one heartbeat costs;
//  4. restart: the first peer is stopped and started again on the same
//     address; renewals answered 404 register again, as Eureka clients and
//     heureka's agent do; the phase runs until every instance is back and
//     -after more.
//
// Readers never decode a whole body: they inflate the first few hundred
// bytes for the hash code and discard the rest, so their CPU is not what is
// measured. The load generator pins itself to -gen-cpus and the servers to
// -server-cpus (taskset), so on a 2-core machine the two never share a core.
// Only addresses on 127.0.0.1 are used; the servers are stopped at the end.
//
// Two other modes measure renewals alone, against a bare net/http handler:
// -compare drives them with wrk and reports rates, and -instructions counts
// the servers' instructions per renewal under valgrind's callgrind, a figure
// that the machine's other load does not move (instructions.go). A third,
// -storms, times registration storms from the soak's writers and from wrk
// in turn (storms.go): the storm rate, from a second generator.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/internal/proc"
)

func main() {
	if addr := os.Getenv(bareEnv); addr != "" {
		os.Exit(serveBare(addr, os.Getenv(bareTimeoutsEnv) == "1"))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the soak's settings, from flags.
type options struct {
	n, apps, writers, renewers, readers, peers int
	renew, lease, poll, push                   time.Duration
	soak, quiet, after, maxRun                 time.Duration
	bin, repo, genCPUs, serverCPUs             string
	restart                                    bool
	sorted, baseline, everyPeer                bool
	seed                                       int64
	serverArgs                                 string
	settle                                     time.Duration // -instructions: rest after the storm
	compareSettle                              time.Duration // -compare: rest after the storm
	compareTimeouts                            bool          // -compare: also a bare handler with heureka's timeouts
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.n, "n", 100_000, "instances")
	fs.IntVar(&o.apps, "apps", 50, "applications the instances are spread over")
	fs.IntVar(&o.writers, "writers", 64, "concurrent clients in the registration storm")
	fs.IntVar(&o.renewers, "renewers", 512, "connections the renewals are sent from: each sends whichever heartbeat is due next, oldest first")
	fs.IntVar(&o.readers, "readers", 32, "polling readers")
	fs.IntVar(&o.peers, "peers", 1, "registry peers: 1 or 3 (with 3, writes go to the first and replicate)")
	fs.DurationVar(&o.renew, "renew", 10*time.Second, "renewal interval")
	fs.DurationVar(&o.lease, "lease", 30*time.Second, "lease duration")
	fs.DurationVar(&o.poll, "poll", 5*time.Second, "readers' delta poll interval")
	fs.DurationVar(&o.push, "push", 30*time.Minute, "each instance registers again with a changed figure once per this, as heureka's agent pushes its daemon's figures when they drift (its MetadataMaxAge, 30m; 5m before 3 December); 0: no pushes")
	fs.DurationVar(&o.soak, "soak", 3*time.Minute+30*time.Second, "renewals plus readers after the storm (the delta window is 3 min)")
	fs.DurationVar(&o.quiet, "quiet", 30*time.Second, "renewals only, to measure CPU per heartbeat")
	fs.DurationVar(&o.after, "after", time.Minute, "how long to go on once every instance is back after the restart")
	fs.DurationVar(&o.maxRun, "max", 20*time.Minute, "hard bound on the whole run")
	fs.BoolVar(&o.restart, "restart", true, "restart the first peer after the quiet phase")
	fs.BoolVar(&o.sorted, "sorted", false, "register and renew in ID order instead of a random one (kinder to the server than a real fleet)")
	fs.Int64Var(&o.seed, "seed", 1, "seed of the random order")
	fs.BoolVar(&o.everyPeer, "every-peer", false, "with -peers 3: send each successful heartbeat to the other peers too, naming every peer in X-Heureka-Told-Peers, as heureka's agent listing every peer does")
	fs.BoolVar(&o.baseline, "baseline", false, "first renew against a bare net/http handler for -quiet, to show the generator's own latency floor")
	fs.StringVar(&o.bin, "heureka", "", "heureka binary (default: build REPO/cmd/heureka)")
	fs.StringVar(&o.repo, "repo", "..", "the heureka repository, to build the binary from")
	fs.StringVar(&o.genCPUs, "gen-cpus", "0", "CPUs the load generator runs on (empty: no pinning)")
	fs.StringVar(&o.serverCPUs, "server-cpus", "1", "CPUs the servers run on, for taskset (empty: no pinning)")
	fs.StringVar(&o.serverArgs, "server-args", "", "extra flags for every 'heureka server', space-separated")
	compare := fs.Bool("compare", false, "instead of the soak: renewals with wrk against heureka at each -compare-n and against a bare net/http handler")
	compareN := fs.String("compare-n", "1000,100000", "registry sizes for -compare and -instructions, comma-separated")
	compareConns := fs.Int("compare-conns", 64, "wrk connections for -compare (-storms uses -writers)")
	compareFor := fs.Duration("compare-for", 10*time.Second, "how long wrk runs against each server")
	fs.DurationVar(&o.compareSettle, "compare-settle", 0, "how long heureka rests after its storm before -compare measures; past the 3 min delta window it holds what a steady registry holds (the fleet then registers with hour-long leases, so that nothing expires while it rests)")
	fs.BoolVar(&o.compareTimeouts, "compare-timeouts", false, "-compare also measures, in each round, a bare handler whose server keeps heureka's bounds on its clients (header, body, idle and answer timeouts)")
	compareRounds := fs.Int("compare-rounds", 1, "how many times -compare measures each size, each time after its own bare run; with more than one, it reports medians")
	storms := fs.Bool("storms", false, "instead of the soak: registration storms into a fresh heureka at each -compare-n, -compare-rounds times, alternately from the soak's -writers and from wrk with as many connections")
	instr := fs.Bool("instructions", false, "instead of the soak: count the server's instructions per renewal under valgrind's callgrind, for a bare net/http handler and for heureka at each -compare-n")
	instrRenewals := fs.Int("instructions-renewals", 20_000, "renewals counted per server for -instructions")
	fs.DurationVar(&o.settle, "instructions-settle", 0, "how long heureka rests after its storm before -instructions counts; for large sizes set it past the 3 min delta window, which the storm's registrations otherwise leave during the count")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *instrRenewals < 1 || *instrRenewals > 10_000_000 {
		fmt.Fprintf(stderr, "soak: -instructions-renewals %d: want 1 to 10000000\n", *instrRenewals)
		return 2
	}
	if *compareRounds < 1 || *compareRounds > 20 {
		fmt.Fprintf(stderr, "soak: -compare-rounds %d: want 1 to 20\n", *compareRounds)
		return 2
	}
	var sizes []int
	for _, f := range strings.Split(*compareN, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "soak: -compare-n %q: want positive sizes separated by commas\n", *compareN)
			return 2
		}
		sizes = append(sizes, n)
	}
	if o.n <= 0 || o.apps <= 0 || o.writers <= 0 || o.renewers <= 0 || o.readers < 0 {
		fmt.Fprintln(stderr, "soak: -n, -apps, -writers and -renewers must be positive, -readers not negative")
		return 2
	}
	if o.peers != 1 && o.peers != 3 {
		fmt.Fprintln(stderr, "soak: -peers must be 1 or 3")
		return 2
	}
	if o.everyPeer && o.peers == 1 {
		fmt.Fprintln(stderr, "soak: -every-peer needs -peers 3")
		return 2
	}
	if o.renew <= 0 || o.lease <= o.renew || o.poll <= 0 {
		fmt.Fprintln(stderr, "soak: want 0 < -renew < -lease and -poll > 0")
		return 2
	}
	if o.genCPUs != "" {
		if err := proc.PinSelf(o.genCPUs, "HEUREKA_SOAK_PINNED"); err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 1
		}
	}
	// The generator trades memory for fewer collections: it must not be
	// the bottleneck it measures.
	debug.SetGCPercent(400)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.maxRun)
	defer cancel()
	if *instr {
		if err := countInstructions(ctx, o, sizes, *instrRenewals, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 1
		}
		return 0
	}
	if *storms {
		if err := compareStorms(ctx, o, sizes, *compareRounds, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 1
		}
		return 0
	}
	if *compare {
		if err := compareRenewals(ctx, o, sizes, *compareRounds, *compareConns, *compareFor, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 1
		}
		return 0
	}
	res, err := soak(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 1
	}
	res.report(stdout, o)
	if !res.passed() {
		return 3
	}
	return 0
}

func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "%s soak: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func init() { runtime.GOMAXPROCS(max(1, runtime.NumCPU()/2)) }

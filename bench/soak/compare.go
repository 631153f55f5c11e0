package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka/internal/conntime"
	"github.com/heureka-project/heureka/internal/proc"
	"github.com/heureka-project/heureka/server"
)

// bareEnv makes this program serve a bare net/http handler on the address
// it holds instead of running the soak: the ceiling heureka's renewals are
// compared against. With bareTimeoutsEnv set to 1 as well, the handler's
// server bounds its clients as heureka's does.
const (
	bareEnv         = "HEUREKA_SOAK_BARE"
	bareTimeoutsEnv = "HEUREKA_SOAK_BARE_TIMEOUTS"
)

// serveBare answers every request with an empty 200, as a renewal does.
// With timeouts, its server bounds its clients as heureka's default
// server does (server.Config.ConnLimits, kept by internal/conntime): every
// bound heureka's server keeps, and nothing else heureka does.
func serveBare(addr string, timeouts bool) int {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare server:", err)
		return 1
	}
	if timeouts {
		conns, err := conntime.New(server.DefaultConfig().ConnLimits(), slog.Default())
		if err != nil {
			fmt.Fprintln(os.Stderr, "bare server:", err)
			return 1
		}
		conns.Guard(srv)
		ln = conns.Listener(ln)
		go conns.Run(context.Background())
	}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "bare server:", err)
		return 1
	}
	return 0
}

// startBare runs this program as a bare net/http handler pinned to cpus,
// with or without heureka's timeouts, with its log in dir, and returns its
// address and the process.
func startBare(ctx context.Context, cpus, dir string, timeouts bool) (string, *proc.Proc, error) {
	addr, err := proc.FreeAddr("127.0.0.1")
	if err != nil {
		return "", nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	env := []string{bareEnv + "=" + addr}
	if timeouts {
		env = append(env, bareTimeoutsEnv+"=1")
	}
	p, err := proc.StartLogged("bare handler", proc.Command(proc.Taskset(cpus, exe), env...), filepath.Join(dir, "bare.log"), nil)
	if err != nil {
		return "", nil, err
	}
	err = p.WaitReady(ctx, 5*time.Second, accepts(addr))
	if err != nil {
		p.Kill()
		return "", nil, err
	}
	return addr, p, nil
}

// accepts is a readiness check for a server with no health endpoint, the
// bare handler: it is ready once it accepts a connection on addr.
func accepts(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// wrkScript sends heartbeats round-robin over the paths in $SOAK_PATHS,
// each thread from its own starting point.
const wrkScript = `
local paths = {}
for line in io.lines(os.getenv("SOAK_PATHS")) do paths[#paths + 1] = line end
local i = 0
local counter = 0
setup = function(thread)
  thread:set("id", counter)
  counter = counter + 1
end
init = function(args)
  i = (id * 7919) % #paths
end
request = function()
  i = i + 1
  if i > #paths then i = 1 end
  return wrk.format("PUT", paths[i])
end
`

// compareRenewals measures renewals against heureka holding each size in
// sizes and against a bare handler, with the same wrk settings in one run,
// every server pinned to the servers' CPUs and wrk to the generator's. With
// o.compareTimeouts, each round also measures the bare handler with
// heureka's timeouts, between the bare run and heureka's.
func compareRenewals(ctx context.Context, o options, sizes []int, rounds, conns int, dur time.Duration, stdout, log io.Writer) error {
	dir, bin, script, err := wrkWorkDir(ctx, o, "compare", wrkScript)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// One round: heureka at size n and the bare runs just before it.
	type result struct {
		rps float64
		lat string
	}
	type round struct {
		n                    int
		bare, timed, heureka result // timed: the bare handler with heureka's timeouts, if asked
	}
	var rows []round
	// Every server gets the same requests, a real client's heartbeats
	// (PUT /eureka/apps/APP/ID?status=UP&lastDirtyTimestamp=T), so that
	// net/http parses the same bytes for each; the bare handler ignores them.
	bareAt := func(paths string, timeouts bool) (result, error) {
		addr, bare, err := startBare(ctx, o.serverCPUs, dir, timeouts)
		if err != nil {
			return result{}, err
		}
		defer bare.Kill()
		rps, lat, err := runWrk(ctx, o.genCPUs, script, paths, "http://"+addr, conns, dur)
		return result{rps, lat}, err
	}
	for i := range rounds * len(sizes) {
		n := sizes[i%len(sizes)]
		lease := o.lease
		if o.compareSettle > 0 {
			lease = time.Hour
		}
		f := newFleet(n, max(1, min(o.apps, n/100)), o.renew, lease)
		paths := filepath.Join(dir, fmt.Sprintf("renewals-%d.paths", n))
		var b strings.Builder
		for i := range f.ids {
			b.WriteString("/eureka" + f.renewURL[i] + "\n")
		}
		if err := os.WriteFile(paths, []byte(b.String()), 0o644); err != nil {
			return err
		}
		r := round{n: n}
		bare := func() error {
			if r.bare, err = bareAt(paths, false); err != nil {
				return err
			}
			logf(log, "compare: bare handler %.0f req/s", r.bare.rps)
			if !o.compareTimeouts {
				return nil
			}
			if r.timed, err = bareAt(paths, true); err != nil {
				return err
			}
			logf(log, "compare: bare handler with heureka's timeouts %.0f req/s", r.timed.rps)
			return nil
		}
		// The bare runs come just before heureka's: before the storm, or,
		// when heureka rests after it, at the end of the rest, so that
		// minutes of the machine's other load do not come between them.
		if o.compareSettle == 0 {
			if err := bare(); err != nil {
				return err
			}
		}
		peers, err := startPeers(ctx, bin, dir, o.serverCPUs, 1, strings.Fields(o.serverArgs))
		if err != nil {
			return err
		}
		c := &http.Client{Transport: newTransport(o.writers), Timeout: 30 * time.Second}
		var st phaseStats
		if _, err := storm(ctx, c, peers[0].base(), f, o.writers, &st); err != nil {
			stopPeers(peers)
			return err
		}
		if o.compareSettle > 0 {
			logf(log, "compare: heureka at %d instances resting %s after its storm", n, o.compareSettle)
			select {
			case <-ctx.Done():
				stopPeers(peers)
				return ctx.Err()
			case <-time.After(o.compareSettle):
			}
			if err := bare(); err != nil {
				stopPeers(peers)
				return err
			}
		}
		rps, lat, err := runWrk(ctx, o.genCPUs, script, paths, "http://"+peers[0].addr, conns, dur)
		stopPeers(peers)
		if err != nil {
			return err
		}
		r.heureka = result{rps, lat}
		rows = append(rows, r)
		logf(log, "compare: heureka at %d instances %.0f req/s", n, rps)
	}
	ratio := func(x, y float64) string {
		if y <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f×", x/y)
	}
	fmt.Fprintf(stdout, "\n### renewals: heureka against a bare net/http handler, same wrk and requests, one run\n\n")
	fmt.Fprintf(stdout, "Command: `cd bench && go run ./soak %s`; wrk -t1 -c%d -d%s pinned to CPUs %q, servers to %q.\n\n",
		strings.Join(os.Args[1:], " "), conns, dur, o.genCPUs, o.serverCPUs)
	if o.compareTimeouts {
		fmt.Fprintln(stdout, "The bare handler with heureka's timeouts keeps every bound heureka's server keeps on its clients (header, body, idle, answer; server.Config.ConnLimits).")
		fmt.Fprintln(stdout)
	}
	fmt.Fprintln(stdout, "| server | renewals/s | latency p99 (wrk) | ratio to the bare handler before it |")
	fmt.Fprintln(stdout, "|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(stdout, "| bare net/http handler | %.0f | %s | - |\n", r.bare.rps, r.bare.lat)
		if o.compareTimeouts {
			fmt.Fprintf(stdout, "| bare handler with heureka's timeouts | %.0f | %s | %s |\n", r.timed.rps, r.timed.lat, ratio(r.timed.rps, r.bare.rps))
		}
		fmt.Fprintf(stdout, "| heureka, %d instances | %.0f | %s | %s |\n", r.n, r.heureka.rps, r.heureka.lat, ratio(r.heureka.rps, r.bare.rps))
	}
	if rounds == 1 && !o.compareTimeouts {
		return nil
	}
	// The bare handler's own figure moves from run to run on a shared
	// machine; each heureka run is judged against the bare runs just
	// before it, and the medians of those ratios are the result.
	fmt.Fprintf(stdout, "\n| heureka size | rounds | median renewals/s | median ratio to the bare run before it |")
	if o.compareTimeouts {
		fmt.Fprintf(stdout, " the timed bare run to the bare run | heureka to the timed bare run |\n|---|---|---|---|---|---|\n")
	} else {
		fmt.Fprintf(stdout, "\n|---|---|---|---|\n")
	}
	for _, n := range sizes {
		var got, toBare, timedToBare, toTimed []float64
		for _, r := range rows {
			if r.n != n || r.bare.rps <= 0 {
				continue
			}
			got = append(got, r.heureka.rps)
			toBare = append(toBare, r.heureka.rps/r.bare.rps)
			if r.timed.rps > 0 {
				timedToBare = append(timedToBare, r.timed.rps/r.bare.rps)
				toTimed = append(toTimed, r.heureka.rps/r.timed.rps)
			}
		}
		fmt.Fprintf(stdout, "| %d | %d | %.0f | %.2f× |", n, len(got), median(got), median(toBare))
		if o.compareTimeouts {
			fmt.Fprintf(stdout, " %.2f× | %.2f× |", median(timedToBare), median(toTimed))
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Sorted(slices.Values(v))
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

var (
	wrkRPS = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkP99 = regexp.MustCompile(`\s99%\s+([0-9.]+[a-z]+)`)
	wrkBad = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// wrkWorkDir checks that wrk is installed, then makes mode's work
// directory and heureka binary (workDir) and writes script there.
func wrkWorkDir(ctx context.Context, o options, mode, script string) (dir, bin, scriptPath string, err error) {
	if _, err := exec.LookPath("wrk"); err != nil {
		return "", "", "", fmt.Errorf("-%s needs wrk (Debian package wrk): %w", mode, err)
	}
	dir, bin, err = workDir(ctx, o, mode)
	if err != nil {
		return "", "", "", err
	}
	scriptPath = filepath.Join(dir, mode+".lua")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", "", "", err
	}
	return dir, bin, scriptPath, nil
}

func runWrk(ctx context.Context, cpus, script, paths, url string, conns int, dur time.Duration) (float64, string, error) {
	args := []string{"-t1", "-c" + strconv.Itoa(conns), "-d" + dur.String(), "--latency", "-s", script, url}
	argv := proc.Taskset(cpus, append([]string{"wrk"}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "SOAK_PATHS="+paths)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, "", fmt.Errorf("wrk: %w\n%s", err, out)
	}
	if m := wrkBad.FindSubmatch(out); m != nil {
		return 0, "", fmt.Errorf("wrk saw %s answers other than 2xx:\n%s", m[1], out)
	}
	m := wrkRPS.FindSubmatch(out)
	if m == nil {
		return 0, "", fmt.Errorf("wrk printed no Requests/sec:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	return rps, wrkP99Of(out), nil
}

// wrkP99Of returns the p99 latency wrk printed with --latency, or "-".
func wrkP99Of(out []byte) string {
	if m := wrkP99.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return "-"
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka/internal/proc"
)

// wrkStormScript registers every instance in $SOAK_STORM (one line each:
// the registration's path, a tab, its JSON body) once, in the file's
// order, exactly once.
//
// wrk calls request() once before any connection opens, to check the
// request it returns, and never sends that one (script_verify_request,
// on the first thread's own Lua state), so the first call returns GET
// /healthz, not the first registration. Once every line is sent, the
// connections still asking for work get GET /healthz too, and its 200 is
// told apart from a registration's 204: the storm counts registrations
// only, and a request answered on a fast connection never stands in for
// a registration still in flight on a slow one.
//
// The thread keeps the time of its first registration and of the 204
// that makes as many as the file has lines (LuaJIT's FFI, for a monotonic
// clock), stops, and prints "storm done" for wrkStorm to end wrk, which
// otherwise runs out its whole -d.
const wrkStormScript = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
int clock_gettime(int clk, soak_timespec *tp);
]]
local ts = ffi.new("soak_timespec")
local function now()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local paths, bodies = {}, {}
local threads = {}
setup = function(thread) threads[#threads + 1] = thread end
init = function(args)
  for line in io.lines(os.getenv("SOAK_STORM")) do
    local tab = line:find("\t", 1, true)
    paths[#paths + 1] = line:sub(1, tab - 1)
    bodies[#bodies + 1] = line:sub(tab + 1)
  end
end
local headers = {["Content-Type"] = "application/json"}
local i = -1
answered, refused, first, last = 0, 0, 0, 0
request = function()
  i = i + 1
  if i < 1 or i > #paths then return wrk.format("GET", "/healthz") end
  if first == 0 then first = now() end
  return wrk.format("POST", paths[i], headers, bodies[i])
end
response = function(status, hdrs, body)
  if status == 200 then return end
  answered = answered + 1
  if status ~= 204 then refused = refused + 1 end
  if answered == #paths then
    last = now()
    io.write("storm done\n")
    io.flush()
    wrk.thread:stop()
  end
end
done = function(summary, latency, requests)
  for _, t in ipairs(threads) do
    io.write(string.format("storm answered: %d, refused: %d, seconds: %.6f\n",
      t:get("answered"), t:get("refused"), t:get("last") - t:get("first")))
  end
end
`

var wrkStormAnswered = regexp.MustCompile(`storm answered: (\d+), refused: (\d+), seconds: ([0-9.]+)`)

// compareStorms registers each size in sizes into a fresh heureka, rounds
// times, alternately from the soak's own writers and from wrk (the same
// records, bodies and number of connections), and reports both rates side
// by side: a storm figure that holds with a generator other than the
// soak's. After each storm the server must hold every instance.
func compareStorms(ctx context.Context, o options, sizes []int, rounds int, stdout, log io.Writer) error {
	dir, bin, script, err := wrkWorkDir(ctx, o, "storms", wrkStormScript)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	type row struct {
		n          int
		gen        string
		rate       float64
		p99, extra string
	}
	var rows []row
	for round := range rounds * len(sizes) {
		n := sizes[round%len(sizes)]
		f := newFleet(n, max(1, min(o.apps, n/100)), o.renew, o.lease)
		f.shuffle(o.seed)
		lines := filepath.Join(dir, fmt.Sprintf("storm-%d.lines", n))
		if err := writeStormLines(lines, f); err != nil {
			return err
		}
		for _, gen := range []string{"soak writers", "wrk"} {
			peers, err := startPeers(ctx, bin, dir, o.serverCPUs, 1, strings.Fields(o.serverArgs))
			if err != nil {
				return err
			}
			p := peers[0]
			cpu0 := p.totalCPU()
			r := row{n: n, gen: gen}
			if gen == "wrk" {
				r.rate, r.p99, err = wrkStorm(ctx, o.genCPUs, script, lines, "http://"+p.addr, o.writers, n)
			} else {
				c := &http.Client{Transport: newTransport(o.writers), Timeout: 30 * time.Second}
				var st phaseStats
				var took time.Duration
				took, err = storm(ctx, c, p.base(), f, o.writers, &st)
				r.rate, r.p99 = float64(n)/took.Seconds(), ms(st.writes.quantile(0.99))
			}
			cpu := p.totalCPU() - cpu0
			held := p.metricSum("heureka_instances")
			stopPeers(peers)
			if err != nil {
				return fmt.Errorf("storm of %d from %s: %w", n, gen, err)
			}
			if int(held) != n {
				return fmt.Errorf("storm of %d from %s: the server holds %v instances afterwards", n, gen, held)
			}
			r.extra = fmt.Sprintf("%.0f µs", 1e6*cpu/float64(n))
			rows = append(rows, r)
			logf(log, "storms: %d from %s: %.0f/s", n, gen, r.rate)
		}
	}
	fmt.Fprintf(stdout, "\n### registration storms: the soak's writers and wrk, one run\n\n")
	fmt.Fprintf(stdout, "Command: `cd bench && go run ./soak %s`; %d connections each, generators pinned to CPUs %q, servers to %q.\n\n",
		strings.Join(os.Args[1:], " "), o.writers, o.genCPUs, o.serverCPUs)
	fmt.Fprintln(stdout, "| instances | generator | registrations/s | p99 | server CPU per registration |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(stdout, "| %d | %s | %.0f | %s | %s |\n", r.n, r.gen, r.rate, r.p99, r.extra)
	}
	if rounds > 1 {
		fmt.Fprintf(stdout, "\n| instances | generator | rounds | median registrations/s |\n|---|---|---|---|\n")
		for _, n := range sizes {
			for _, gen := range []string{"soak writers", "wrk"} {
				var got []float64
				for _, r := range rows {
					if r.n == n && r.gen == gen {
						got = append(got, r.rate)
					}
				}
				fmt.Fprintf(stdout, "| %d | %s | %d | %.0f |\n", n, gen, len(got), median(got))
			}
		}
	}
	return nil
}

// writeStormLines writes f's registrations for wrkStormScript: the path, a
// tab and the JSON body, one instance a line, in f's order.
func writeStormLines(name string, f *fleet) error {
	var b bytes.Buffer
	for i := range f.ids {
		if bytes.ContainsAny(f.bodies[i], "\t\n") {
			return fmt.Errorf("instance %s: its JSON body holds a tab or a newline, which the wrk script cannot carry", f.ids[i])
		}
		b.WriteString("/eureka/apps/" + f.apps[i] + "\t")
		b.Write(f.bodies[i])
		b.WriteByte('\n')
	}
	return os.WriteFile(name, b.Bytes(), 0o644)
}

// wrkStorm runs wrkStormScript against url from conns connections, one
// wrk thread, and returns the registrations a second from its first
// request to its n-th answer, and wrk's p99. It fails if any registration
// was refused or the storm did not end within its bound.
func wrkStorm(ctx context.Context, cpus, script, lines, url string, conns, n int) (float64, string, error) {
	bound := max(time.Minute, time.Duration(n)*time.Millisecond)
	args := []string{"-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(int(bound.Seconds())) + "s", "--latency", "-s", script, url}
	argv := proc.Taskset(cpus, append([]string{"wrk"}, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "SOAK_STORM="+lines)
	var out, errs bytes.Buffer
	cmd.Stderr = &errs
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return 0, "", err
	}
	if err := cmd.Start(); err != nil {
		return 0, "", fmt.Errorf("wrk: %w", err)
	}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if sc.Text() == "storm done" {
			// wrk ends early on SIGINT, and then reports as usual.
			cmd.Process.Signal(os.Interrupt)
		}
	}
	err = cmd.Wait()
	out.Write(errs.Bytes())
	if err != nil {
		return 0, "", fmt.Errorf("wrk: %w\n%s", err, out.Bytes())
	}
	m := wrkStormAnswered.FindSubmatch(out.Bytes())
	if m == nil {
		return 0, "", fmt.Errorf("wrk's storm script printed no count:\n%s", out.Bytes())
	}
	answered, _ := strconv.Atoi(string(m[1]))
	secs, _ := strconv.ParseFloat(string(m[3]), 64)
	if refused, _ := strconv.Atoi(string(m[2])); refused > 0 {
		return 0, "", fmt.Errorf("wrk: %d of %d registrations were refused:\n%s", refused, answered, out.Bytes())
	}
	if answered < n || secs <= 0 {
		return 0, "", fmt.Errorf("wrk: %d of %d registrations answered within %s:\n%s", answered, n, bound, out.Bytes())
	}
	return float64(n) / secs, wrkP99Of(out.Bytes()), nil
}

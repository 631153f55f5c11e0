package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka/internal/proc"
)

// -instructions counts a server's user-space instructions while it
// answers a fixed number of renewals, with valgrind's callgrind. Unlike
// wrk's rate, which moves by a tenth from one round to the next on a shared
// machine, the count is the same whatever else the machine is doing, so two
// binaries, or heureka and a bare handler, can be compared to a few
// percent. It leaves out the kernel (the socket reads and writes, the same
// for both) and cache misses. Each server is counted twice, as it runs and
// with GOGC=off: the difference is the collector's share. What the server
// does by the clock, whatever the load, is counted in an idle spell and
// taken off (countOne). That holds while it is steady: after a large storm
// (under callgrind, 100k registrations take eight minutes) the
// registrations leave the delta window in bursts during the count, so
// -instructions-settle must let them go first.
//
// Inclusive counts per function would say more, but callgrind follows
// calls by the machine stack, which Go's goroutine switches confuse: work
// done after a switch is charged to whatever the stack held before.
//
// countInstructions runs that count for a bare net/http handler and for
// heureka holding each of sizes instances, renewals sent from 8 kept-alive
// connections after a warm-up of their own.
func countInstructions(ctx context.Context, o options, sizes []int, renewals int, stdout, log io.Writer) error {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("-instructions needs %s (Debian package valgrind): %w", tool, err)
		}
	}
	dir, bin, err := workDir(ctx, o, "instructions")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	type row struct {
		what         string
		total, gcOff int64 // instructions as it runs, and with GOGC=off
	}
	var rows []row
	for _, n := range append([]int{0}, sizes...) {
		r := row{what: "bare net/http handler"}
		if n > 0 {
			r.what = fmt.Sprintf("heureka, %d instances", n)
		}
		for _, gcOff := range []bool{false, true} {
			count, err := countOne(ctx, o, dir, exe, bin, n, renewals, gcOff, log)
			if err != nil {
				return err
			}
			if gcOff {
				r.gcOff = count
			} else {
				r.total = count
			}
		}
		logf(log, "instructions: %s: %d per renewal, %d with GOGC=off",
			r.what, r.total/int64(renewals), r.gcOff/int64(renewals))
		rows = append(rows, r)
	}
	fmt.Fprintf(stdout, "\n### renewals: instructions per renewal under callgrind, one run\n\n")
	fmt.Fprintf(stdout, "Command: `cd bench && go run ./soak %s`; %d renewals from 8 connections after a warm-up, servers on CPUs %q.\n\n",
		strings.Join(os.Args[1:], " "), renewals, o.serverCPUs)
	fmt.Fprintln(stdout, "| server | instructions per renewal | with GOGC=off | the collector's (the difference) | the bare handler's ÷ this |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|")
	for _, r := range rows {
		per := func(v int64) int64 { return v / int64(renewals) }
		fmt.Fprintf(stdout, "| %s | %d | %d | %d | %.2f |\n", r.what, per(r.total), per(r.gcOff), per(r.total-r.gcOff),
			float64(rows[0].total)/float64(r.total))
	}
	return nil
}

// countOne starts one server under callgrind (the bare handler when n is
// 0; with GOGC=off when gcOff), fills it with n instances, warms it up,
// and returns the instructions it spent on renewals.
func countOne(ctx context.Context, o options, dir, exe, bin string, n, renewals int, gcOff bool, log io.Writer) (int64, error) {
	addr, err := proc.FreeAddr("127.0.0.1")
	if err != nil {
		return 0, err
	}
	name := fmt.Sprintf("heureka-%d", n)
	argv := []string{bin, "server", "--listen", addr, "--log-level", "warn"}
	env := []string{"GODEBUG=" + underValgrind}
	ready := proc.HTTPOK("http://" + addr + "/readyz")
	if n == 0 {
		name, argv = "bare", []string{exe}
		env = append(env, bareEnv+"="+addr)
		ready = accepts(addr)
	}
	if gcOff {
		name += "-gcoff"
		env = append(env, "GOGC=off")
	}
	out := filepath.Join(dir, "callgrind-"+name+".out")
	argv = append([]string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + out}, argv...)
	p, err := proc.StartLogged(name+" under callgrind", proc.Command(proc.Taskset(o.serverCPUs, argv...), env...), out+".log", nil)
	if err != nil {
		return 0, err
	}
	defer p.Kill()
	count, err := countRenewals(ctx, o, p, addr, name, out, n, renewals, ready, log)
	if err != nil {
		if reason := valgrindCannotRun(out + ".log"); reason != "" {
			return 0, &cannotRunError{tool: "valgrind", reason: reason, err: err}
		}
		return 0, err
	}
	return count, nil
}

// underValgrind is the GODEBUG a Go program runs with under callgrind.
// callgrind aborts on the signals Go's asynchronous preemption sends, so
// asyncpreemptoff. And the runtime reads the time stamp counter with
// RDTSCP where the CPU has it (runtime.cputicks, which runtime.lock2
// calls when a lock is contended), an instruction Debian's valgrind 3.19
// stops with SIGILL on some AMD EPYC hosts; cpu.rdtscp=off makes the
// runtime fence and use RDTSC, which valgrind runs everywhere.
const underValgrind = "asyncpreemptoff=1,cpu.rdtscp=off"

// cannotRunError says a tool could not run the program on this host (an
// instruction of this CPU it does not know, say): nothing was measured.
type cannotRunError struct {
	tool, reason string
	err          error
}

func (e *cannotRunError) Error() string {
	return fmt.Sprintf("%s cannot run the server on this host (%s), so nothing was measured: %v", e.tool, e.reason, e.err)
}

func (e *cannotRunError) Unwrap() error { return e.err }

// valgrindCannotRun reads the log of a program run under valgrind and
// returns valgrind's own line saying it met an instruction it cannot run,
// or "" when there is none.
func valgrindCannotRun(logPath string) string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		for _, sign := range []string{"unhandled instruction bytes", "Unrecognised instruction", "Illegal opcode", "signal 4 (SIGILL)"} {
			if strings.Contains(line, sign) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// countRenewals fills the server p under callgrind with n instances, warms
// it up and returns the instructions it spent on renewals.
func countRenewals(ctx context.Context, o options, p *proc.Proc, addr, name, out string, n, renewals int,
	ready func(context.Context) error, log io.Writer) (int64, error) {
	if err := p.WaitReady(ctx, 2*time.Minute, ready); err != nil {
		return 0, err
	}
	base := "http://" + addr + "/eureka"
	f := newFleet(max(n, 1000), max(1, min(o.apps, max(n, 1000)/100)), o.renew, time.Hour)
	c := &http.Client{Transport: newTransport(max(o.writers, 8)), Timeout: 5 * time.Minute}
	if n > 0 {
		logf(log, "instructions: registering %d instances in heureka under callgrind", n)
		var st phaseStats
		if _, err := storm(ctx, c, base, f, o.writers, &st); err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(o.settle):
		}
	}
	if err := renewN(ctx, c, base, f, min(renewals, 3000)); err != nil {
		return 0, fmt.Errorf("%s: warm-up: %w", name, err)
	}
	// The server's own timers (lease sweeps, the encoder, the delta window
	// moving on) run by the clock, and under callgrind a second holds some
	// fifty times fewer renewals than it would natively: counted as they
	// are, they would be charged to the renewals. So an idle spell is
	// counted first, and its rate times the renewals' spell is taken off.
	pid := strconv.Itoa(p.Pid())
	spell := func(trigger string, work func() error) (int64, time.Duration, error) {
		if err := runTool(ctx, "callgrind_control", "--zero", pid); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		if err := work(); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", name, err)
		}
		if err := runTool(ctx, "callgrind_control", "--dump="+trigger, pid); err != nil {
			return 0, 0, err
		}
		d := time.Since(t0)
		dump, err := findDump(ctx, out, trigger)
		if err != nil {
			return 0, 0, err
		}
		b, err := os.ReadFile(dump)
		if err != nil {
			return 0, 0, err
		}
		count, err := parseSummary(string(b))
		return count, d, err
	}
	idle, idleFor, err := spell("idle", func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(idleSpell):
			return nil
		}
	})
	if err != nil {
		return 0, err
	}
	busy, busyFor, err := spell("measured", func() error { return renewN(ctx, c, base, f, renewals) })
	if err != nil {
		return 0, err
	}
	background := int64(float64(idle) * busyFor.Seconds() / idleFor.Seconds())
	logf(log, "instructions: %s: %d in %s of renewals, less %d for the %s of background an idle %s showed",
		name, busy, busyFor.Round(time.Second), background, busyFor.Round(time.Second), idleFor.Round(time.Second))
	return busy - background, nil
}

// idleSpell is how long a server is counted idle, for its background rate.
const idleSpell = 15 * time.Second

// renewN sends n renewals round-robin over the fleet from 8 connections;
// any answer but 200 is an error.
func renewN(ctx context.Context, c *http.Client, base string, f *fleet, n int) error {
	var next, bad atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				_, code, err := renew(ctx, c, base, f, i%len(f.ids))
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("renewal of %s answered %d", f.ids[i%len(f.ids)], code)
				}
				if err != nil && bad.Add(1) == 1 {
					first.Store(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if bad.Load() > 0 {
		return fmt.Errorf("%d of %d renewals failed; the first: %v", bad.Load(), n, first.Load())
	}
	return nil
}

func runTool(ctx context.Context, name string, args ...string) error {
	if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// findDump waits up to 30 s for the dump callgrind writes beside out
// (out.1, out.2, ...) with the given trigger, and returns its path.
func findDump(ctx context.Context, out, trigger string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		paths, _ := filepath.Glob(out + ".*")
		for _, path := range paths {
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), "\ndesc: Trigger: dump "+trigger+"\n") &&
				strings.Contains(string(b), "\ntotals: ") {
				return path, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no callgrind dump %q beside %s after 30 s", trigger, out)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// parseSummary reads the instruction count from a callgrind dump's
// "summary:" line.
func parseSummary(dump string) (int64, error) {
	for line := range strings.Lines(dump) {
		if v, ok := strings.CutPrefix(line, "summary:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("callgrind dump: summary %q: %w", strings.TrimSpace(v), err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("callgrind dump has no summary line")
}

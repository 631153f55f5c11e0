package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/proctest"
)

// TestMain lets the test binary serve as the bare handler, as the soak's
// own binary does.
func TestMain(m *testing.M) {
	if addr := os.Getenv(bareEnv); addr != "" {
		os.Exit(serveBare(addr, os.Getenv(bareTimeoutsEnv) == "1"))
	}
	os.Exit(m.Run())
}

// TestTinySoak runs every phase at a tiny size on the real clock: a real
// server process, a storm, renewals with readers, a restart. It checks what
// must hold on any machine, however loaded: nothing renewing is evicted or
// lost, every instance comes back after the restart, and the report says
// so. Latency targets are for the full-size run, not asserted here.
func TestTinySoak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real server processes")
	}
	o := options{n: 300, apps: 5, writers: 8, renewers: 16, readers: 4, peers: 1,
		renew: time.Second, lease: 4 * time.Second, poll: 500 * time.Millisecond,
		soak: 3 * time.Second, quiet: time.Second, after: time.Second, maxRun: 2 * time.Minute,
		restart: true, baseline: true, repo: "../.."}
	var log bytes.Buffer
	res, err := soak(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, log.String())
	}
	if res.evictions != 0 {
		t.Errorf("%.0f instances evicted while renewing", res.evictions)
	}
	if res.recovered != o.n {
		t.Errorf("%d of %d instances renewing again after the restart", res.recovered, o.n)
	}
	for _, st := range res.phases {
		if judged(st) && st.notFound.Load() != 0 {
			t.Errorf("phase %s: %d renewals answered 404 although the server kept running", st.name, st.notFound.Load())
		}
		if st.name == "soak" && st.served["renew"].quantile(0.99) == 0 {
			t.Errorf("soak phase: the server's own histogram shows no renewals (%v)", st.served)
		}
		if st.name == "soak" && (st.deltas.count.Load() == 0 || st.fulls.count.Load() == 0) {
			t.Errorf("soak phase: %d deltas and %d full fetches; the readers did not read", st.deltas.count.Load(), st.fulls.count.Load())
		}
	}
	if got := res.phases[len(res.phases)-1].name; got != "after" {
		t.Errorf("last phase %q, want after", got)
	}
	var out bytes.Buffer
	res.report(&out, o)
	if b := res.phase("baseline: bare handler"); b.renews.count.Load() == 0 {
		t.Errorf("baseline phase: no renewals answered by the bare handler")
	}
	for _, want := range []string{"| baseline: bare handler |", "| storm |", "| restart |", "instances evicted while renewing: 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestTinySoakWithPushes: with -push, every instance registers again with a
// changed figure, none while the quiet phase measures heartbeats alone, and
// the readers, whose hash code counts instances by status, fetch the
// registry in full once each rather than at every poll.
func TestTinySoakWithPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real server processes")
	}
	o := options{n: 300, apps: 5, writers: 8, renewers: 16, readers: 4, peers: 1,
		renew: time.Second, lease: 4 * time.Second, poll: 500 * time.Millisecond, push: time.Second,
		soak: 3 * time.Second, quiet: 2 * time.Second, maxRun: 2 * time.Minute, repo: "../.."}
	var log bytes.Buffer
	res, err := soak(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, log.String())
	}
	sk, q := res.phase("soak"), res.phase("quiet")
	if sk.pushes.count.Load() < int64(o.n) || sk.pushErrors.Load() != 0 {
		t.Errorf("soak phase: %d pushes, %d errors; want every instance pushed at least once, without errors", sk.pushes.count.Load(), sk.pushErrors.Load())
	}
	if n := q.pushes.count.Load(); n > int64(o.n/10) {
		t.Errorf("quiet phase: %d pushes; it measures heartbeats alone", n)
	}
	if d, f := sk.deltas.count.Load(), sk.fulls.count.Load(); d < 2*int64(o.readers) || f != int64(o.readers) {
		t.Errorf("soak phase: %d deltas and %d full fetches; want several deltas and one full fetch per reader", d, f)
	}
	var out bytes.Buffer
	res.report(&out, o)
	if want := "| soak | " + fmt.Sprint(sk.pushes.count.Load()) + " |"; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}

// TestPushBodyChangesTheFigure: each push carries a disk_used that differs
// from the registration's and from the push before, in a body that still
// decodes.
func TestPushBodyChangesTheFigure(t *testing.T) {
	f := newFleet(3, 1, 10*time.Second, 30*time.Second)
	figure := func(b []byte) string {
		in, err := eureka.DecodeInstance(b, eureka.JSON)
		if err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return in.Metadata.Get("disk_used")
	}
	prev := figure(f.bodies[1])
	for k := range 3 {
		b, err := f.pushBody(1, k)
		if err != nil {
			t.Fatal(err)
		}
		got := figure(b)
		if got == prev || len(got) != len(prev) {
			t.Fatalf("push %d: disk_used %q after %q", k, got, prev)
		}
		prev = got
	}
}

// TestTinyEveryPeerSoak: with -every-peer, three real peers answer every
// heartbeat the renewers send them (the others naming every peer in
// toldPeersHeader, with a registration where one answers 404), and the
// report says how they were sent.
func TestTinyEveryPeerSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real server processes")
	}
	o := options{n: 300, apps: 5, writers: 8, renewers: 16, readers: 2, peers: 3, everyPeer: true,
		renew: time.Second, lease: 4 * time.Second, poll: 500 * time.Millisecond,
		soak: 3 * time.Second, quiet: 2 * time.Second, after: time.Second, maxRun: 2 * time.Minute,
		repo: "../.."}
	var log bytes.Buffer
	res, err := soak(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, log.String())
	}
	for _, st := range res.phases {
		if judged(st) && st.renewErrors.Load() != 0 {
			t.Errorf("phase %s: %d renewal errors, at the first peer or the others", st.name, st.renewErrors.Load())
		}
	}
	if q := res.phase("quiet"); q.renews.count.Load() == 0 {
		t.Fatalf("quiet phase: no renewals")
	}
	var out bytes.Buffer
	res.report(&out, o)
	if want := "naming every peer in " + toldPeersHeader; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}

// TestBucketsQuantile: a quantile is the upper bound of the bucket that
// holds it, of counts taken between two scrapes.
func TestBucketsQuantile(t *testing.T) {
	before := buckets{0.001: 10, 0.01: 10, 0.1: 10, math.Inf(1): 10}
	after := buckets{0.001: 950, 0.01: 1005, 0.1: 1010, math.Inf(1): 1011}
	b := after.since(before)
	for _, c := range []struct{ q, want float64 }{{0.5, 0.001}, {0.93, 0.001}, {0.99, 0.01}, {0.999, 0.1}, {1, math.Inf(1)}} {
		if got := b.quantile(c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v (counts %v)", c.q, got, c.want, b)
		}
	}
	if got := (buckets{}).quantile(0.99); got != 0 {
		t.Errorf("quantile of no answers = %v, want 0", got)
	}
}

// TestALateHeartbeatIsGivenUpAndCountedWhereItWasDue starts a renewer two
// and a half periods behind its schedule, against a loopback server that
// counts heartbeats. Its first two beats have waited a whole period: they
// are given up, counted as due and not kept in the phase they were due in,
// and only the third reaches the server.
func TestALateHeartbeatIsGivenUpAndCountedWhereItWasDue(t *testing.T) {
	const n, period = 1, time.Second
	var beats atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			beats.Add(1)
		}
	}))
	defer srv.Close()

	var ph phases
	early := ph.begin("early")
	early.start = time.Now().Add(-time.Hour)
	t0 := time.Now().Add(-5 * period / 2)
	now := ph.begin("now")
	now.start = t0.Add(2 * period) // the third beat is due in this phase
	later := ph.begin("later")     // the current one, which it is sent in
	r := &renewers{f: newFleet(n, 1, period, 3*period), c: srv.Client(), base: srv.URL, period: period,
		t0: t0, phases: &ph, okAfter: make([]atomic.Bool, n)}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond) // the fourth is due in 500 ms
	defer cancel()
	r.run(ctx, 1)

	if got := beats.Load(); got != n {
		t.Fatalf("%d heartbeats reached the server, want %d: the stale ones given up", got, n)
	}
	if s, k := early.scheduled.Load(), early.kept.Load(); s != 2*n || k != 0 {
		t.Errorf("the phase the late beats were due in: %d due, %d kept; want %d due, none kept", s, k, 2*n)
	}
	if s, k := now.scheduled.Load(), now.kept.Load(); s != n || k != n {
		t.Errorf("the phase the sent beat was due in: %d due, %d kept; want %d of %d", s, k, n, n)
	}
	if s := later.scheduled.Load(); s != 0 {
		t.Errorf("the phase the beat was sent in counted %d due, want 0", s)
	}
}

// TestABeatDoesNotWaitBehindAnotherInstance: with two connections and
// four instances, the server holds the first instance's heartbeat until it
// has seen every other instance's. An agent does not wait for another
// agent, so the other three must get through on the second connection,
// whichever connection a partition by index would have given them.
func TestABeatDoesNotWaitBehindAnotherInstance(t *testing.T) {
	const n, period = 4, 400 * time.Millisecond
	f := newFleet(n, 1, period, 3*period)
	seen := make(chan string, 16)
	others := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut {
			return
		}
		if strings.HasSuffix(r.URL.Path, "/"+f.ids[0]) {
			select {
			case <-others:
			case <-time.After(5 * time.Second):
			}
			return
		}
		seen <- r.URL.Path
	}))
	defer srv.Close()
	go func() {
		got := map[string]bool{}
		for len(got) < n-1 {
			got[<-seen] = true
		}
		close(others)
	}()

	var ph phases
	st := ph.begin("now")
	r := &renewers{f: f, c: srv.Client(), base: srv.URL, period: period,
		t0: time.Now(), phases: &ph, okAfter: make([]atomic.Bool, n)}
	ctx, cancel := context.WithTimeout(context.Background(), period)
	defer cancel()
	r.run(ctx, 2)

	if k := st.kept.Load(); k != n {
		t.Errorf("%d of %d first heartbeats kept, want all: one held heartbeat must not hold back the others", k, n)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{0.9, 0.7, 0.8}, 0.8}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.in...)
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("median reordered its input: %v", c.in)
		}
	}
}

func TestCompareRoundsAreBounded(t *testing.T) {
	for _, rounds := range []string{"0", "21"} {
		var out, errs bytes.Buffer
		if code := run([]string{"-compare", "-compare-rounds", rounds}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "want 1 to 20") {
			t.Errorf("-compare-rounds %s: exit %d, stderr %q", rounds, code, errs.String())
		}
	}
}

// TestInstructionsOfTheBareHandler counts, under a real callgrind, the
// instructions the bare handler (this test binary) spends on 2,000
// renewals, as -instructions does for every server, with and without the
// collector. The count must be that of a real request's work: tens of
// thousands of instructions, never nothing, and no more with GOGC=off.
func TestInstructionsOfTheBareHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server under valgrind")
	}
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing and CI=true (apt-get install -y valgrind): %v", tool, err)
			}
			t.Skipf("%s is not installed (apt-get install -y valgrind); CI=true makes this a failure", tool)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := options{apps: 5, writers: 8, renew: 10 * time.Second, serverCPUs: ""}
	const renewals = 2000
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	counts := map[bool]int64{}
	for _, gcOff := range []bool{false, true} {
		n, err := countOne(ctx, o, t.TempDir(), exe, "", 0, renewals, gcOff, &log)
		if cr, ok := errors.AsType[*cannotRunError](err); ok {
			t.Skipf("no instruction count on this host: %v", cr)
		}
		if err != nil {
			t.Fatalf("gcOff=%v: %v\n%s", gcOff, err, log.String())
		}
		counts[gcOff] = n
	}
	per := counts[false] / renewals
	if per < 5_000 || per > 1_000_000 {
		t.Errorf("%d instructions per renewal: not a request's work (%d in all)", per, counts[false])
	}
	if counts[true] > counts[false]+counts[false]/20 {
		t.Errorf("with GOGC=off %d instructions, more than the %d with the collector", counts[true], counts[false])
	}
}

// TestValgrindCannotRunReadsItsLog gives valgrindCannotRun the log
// valgrind 3.19 wrote on an AMD EPYC host where it could not run the
// runtime's RDTSCP, and a log of a clean run.
func TestValgrindCannotRunReadsItsLog(t *testing.T) {
	dir := t.TempDir()
	sigill := filepath.Join(dir, "sigill.log")
	os.WriteFile(sigill, []byte(`==4242== Callgrind, a call-graph generating cache profiler
vex amd64->IR: unhandled instruction bytes: 0xF 0x1 0xF9 0x48 0xC1 0xE2 0x20 0x48 0x9 0xD0
vex amd64->IR:   REX=0 REX.W=0 REX.R=0 REX.X=0 REX.B=0
==4242== valgrind: Unrecognised instruction at address 0x46e6a4.
==4242==    at 0x46E6A4: runtime.cputicks (asm_amd64.s:1261)
==4242== Process terminating with default action of signal 4 (SIGILL)
`), 0o644)
	clean := filepath.Join(dir, "clean.log")
	os.WriteFile(clean, []byte("==4243== Callgrind, a call-graph generating cache profiler\n==4243== Events    : Ir\n"), 0o644)
	if got := valgrindCannotRun(sigill); !strings.Contains(got, "unhandled instruction bytes: 0xF 0x1 0xF9") {
		t.Errorf("the SIGILL log read as %q, want valgrind's line naming the instruction", got)
	}
	if got := valgrindCannotRun(clean); got != "" {
		t.Errorf("a clean log read as %q", got)
	}
	if got := valgrindCannotRun(filepath.Join(dir, "missing.log")); got != "" {
		t.Errorf("a missing log read as %q", got)
	}
	err := &cannotRunError{tool: "valgrind", reason: "x", err: io.EOF}
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "nothing was measured") {
		t.Errorf("cannotRunError %q does not wrap its cause or say nothing was measured", err)
	}
}

func TestParseSummary(t *testing.T) {
	dump := "version: 1\ncreator: callgrind-3.19.0\npid: 7\ncmd:  ./x\npart: 1\ndesc: Trigger: dump measured\nevents: Ir\nsummary: 777617482\ntotals: 777617591\n"
	n, err := parseSummary(dump)
	if err != nil || n != 777617482 {
		t.Fatalf("parseSummary = %d, %v; want 777617482", n, err)
	}
	for _, bad := range []string{"events: Ir\n", "summary: lots\n"} {
		if _, err := parseSummary(bad); err == nil {
			t.Errorf("parseSummary(%q): no error", bad)
		}
	}
}

// needWrk skips a test without wrk, or fails it when CI=true, where
// .ci/run installs it.
func needWrk(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("wrk"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("wrk is missing and CI=true (apt-get install -y wrk): %v", err)
		}
		t.Skipf("wrk is not installed (apt-get install -y wrk); CI=true makes this a failure")
	}
}

// TestWrkStormCountsEveryAnswer drives the wrk storm script against a
// handler that answers 204 to a registration and 200 to /healthz, except
// for one application it refuses: the storm must send every registration
// exactly once, the first line first, stop after the last, and fail when
// any was refused.
func TestWrkStormCountsEveryAnswer(t *testing.T) {
	needWrk(t)
	var mu sync.Mutex
	sent := map[string]int{}
	var order []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
			w.WriteHeader(http.StatusOK)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		mu.Lock()
		sent[string(body)]++
		order = append(order, string(body))
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/REFUSED") {
			http.Error(w, "refused", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	dir := t.TempDir()
	script := dir + "/storm.lua"
	if err := os.WriteFile(script, []byte(wrkStormScript), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFleet(200, 4, 10*time.Second, 30*time.Second)
	lines := dir + "/storm.lines"
	if err := writeStormLines(lines, f); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// One connection: the server sees the lines in the file's order.
	rate, p99, err := wrkStorm(ctx, "", script, lines, srv.URL, 1, len(f.ids))
	if err != nil {
		t.Fatalf("wrkStorm: %v", err)
	}
	if rate <= 0 || p99 == "-" {
		t.Errorf("rate %.0f/s, p99 %s: want both measured", rate, p99)
	}
	mu.Lock()
	if len(order) != len(f.ids) {
		t.Errorf("the server had %d registrations for %d instances", len(order), len(f.ids))
	}
	for i, b := range f.bodies {
		if sent[string(b)] != 1 {
			t.Errorf("instance %d (%s) registered %d times, want once", i, f.ids[i], sent[string(b)])
		}
		if i < len(order) && order[i] != string(b) {
			t.Errorf("registration %d was not line %d of the file", i, i)
			break
		}
	}
	clear(sent)
	order = nil
	mu.Unlock()

	// Four connections: still each instance exactly once.
	if _, _, err := wrkStorm(ctx, "", script, lines, srv.URL, 4, len(f.ids)); err != nil {
		t.Fatalf("wrkStorm from 4 connections: %v", err)
	}
	mu.Lock()
	for i, b := range f.bodies {
		if sent[string(b)] != 1 {
			t.Errorf("from 4 connections, instance %d (%s) registered %d times, want once", i, f.ids[i], sent[string(b)])
		}
	}
	mu.Unlock()

	f.apps[7] = "REFUSED"
	if err := writeStormLines(lines, f); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wrkStorm(ctx, "", script, lines, srv.URL, 4, len(f.ids)); err == nil || !strings.Contains(err.Error(), "1 of") {
		t.Errorf("a storm with one refused registration: err = %v, want it reported", err)
	}
}

// TestTinyStorms runs -storms at a tiny size against real server
// processes: both generators' rows, and each server holding every
// instance afterwards (compareStorms fails otherwise).
func TestTinyStorms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real server processes")
	}
	needWrk(t)
	o := options{apps: 5, writers: 8, renew: 10 * time.Second, lease: 30 * time.Second, seed: 1, repo: "../.."}
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := compareStorms(ctx, o, []int{500}, 1, &out, &log); err != nil {
		t.Fatalf("compareStorms: %v\n%s", err, log.String())
	}
	for _, want := range []string{"| 500 | soak writers | ", "| 500 | wrk | "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestTinyCompare runs -compare with -compare-timeouts at a tiny size
// against a real server process: a row for each of the three servers, and
// the medians of the ratios.
func TestTinyCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real server processes")
	}
	needWrk(t)
	t.Parallel()
	o := options{apps: 5, writers: 8, renew: 10 * time.Second, lease: 30 * time.Second, seed: 1, repo: "../..", compareTimeouts: true}
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := compareRenewals(ctx, o, []int{200}, 1, 4, time.Second, &out, &log); err != nil {
		t.Fatalf("compareRenewals: %v\n%s", err, log.String())
	}
	for _, re := range []string{
		`\| bare net/http handler \| [1-9][0-9]* \| [0-9.]+[mu]?s \| - \|`,
		`\| bare handler with heureka's timeouts \| [1-9][0-9]* \| [0-9.]+[mu]?s \| [0-9.]+× \|`,
		`\| heureka, 200 instances \| [1-9][0-9]* \| [0-9.]+[mu]?s \| [0-9.]+× \|`,
		`\| 200 \| 1 \| [1-9][0-9]* \| [0-9.]+× \| [0-9.]+× \| [0-9.]+× \|`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("report lacks a line like %s:\n%s", re, out.String())
		}
	}
}

// TestBareHandlerWithTimeoutsDropsASlowClient checks that the bare handler
// with heureka's timeouts bounds a client as heureka's server does: one that
// sends half a request header is cut off when the header timeout passes.
func TestBareHandlerWithTimeoutsDropsASlowClient(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s header timeout")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr, p, err := startBare(ctx, "", t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	proctest.ExpectHalfHeaderDropped(t, addr, 40*time.Second)
}

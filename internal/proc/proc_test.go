package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a child process: it says "ready addr=X"
// on stderr, then, for "serve", waits for SIGTERM and exits 0; for "fail",
// exits 3 at once.
const helperEnv = "PROC_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "serve":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "starting")
		fmt.Fprintln(os.Stderr, "ready addr=127.0.0.1:1")
		<-sig
		os.Exit(0)
	case "fail":
		fmt.Fprintln(os.Stderr, "cannot start: port taken")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func startChild(t *testing.T, mode, log string, onLine func(string) bool) *Proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := StartLogged("child", Command([]string{exe}, helperEnv+"="+mode), log, onLine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// A child's stderr lines reach onLine until it returns true, and its log;
// Stop ends it with SIGTERM; a second process appends to the same log.
func TestStartSeesLinesAndStops(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	addr := make(chan string, 1)
	var seen []string
	p := startChild(t, "serve", log, func(line string) bool {
		seen = append(seen, line)
		if a, ok := strings.CutPrefix(line, "ready addr="); ok {
			addr <- a
			return true
		}
		return false
	})
	select {
	case a := <-addr:
		if a != "127.0.0.1:1" {
			t.Errorf("addr %q", a)
		}
	case <-p.Done():
		t.Fatalf("child exited: %v\n%s", p.Err(), p.Tail())
	case <-time.After(time.Minute):
		t.Fatal("no ready line in a minute")
	}
	if len(seen) != 2 || seen[0] != "starting" {
		t.Errorf("onLine saw %q, want the two lines up to the ready one", seen)
	}
	p.Stop(time.Minute)
	if !p.Exited() || p.Err() != nil {
		t.Fatalf("after Stop: exited %v, err %v", p.Exited(), p.Err())
	}
	if err := p.Signal(syscall.SIGTERM); err == nil {
		t.Error("Signal to an exited process: no error")
	}
	p.Stop(time.Second) // idempotent
	p.Kill()

	q := startChild(t, "fail", log, nil)
	<-q.Done()
	if want := "starting\nready addr=127.0.0.1:1\ncannot start: port taken"; q.Tail() != want {
		t.Errorf("log after two processes:\n%s\nwant\n%s", q.Tail(), want)
	}
}

// WaitReady gives up as soon as the process exits, with its log's tail.
func TestWaitReadyExited(t *testing.T) {
	p := startChild(t, "fail", filepath.Join(t.TempDir(), "child.log"), nil)
	err := p.WaitReady(context.Background(), time.Minute, func(context.Context) error { return errors.New("not yet") })
	if err == nil || !strings.Contains(err.Error(), "child exited at start") || !strings.Contains(err.Error(), "port taken") {
		t.Fatalf("WaitReady on an exiting process: %v", err)
	}
}

// WaitReady returns nil at the first nil from ready, and names the last
// error when the time is up.
func TestWaitReady(t *testing.T) {
	p := startChild(t, "serve", filepath.Join(t.TempDir(), "child.log"), nil)
	calls := 0
	err := p.WaitReady(context.Background(), time.Minute, func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("WaitReady: %v after %d calls, want nil after 3", err, calls)
	}
	err = p.WaitReady(context.Background(), 200*time.Millisecond, func(context.Context) error { return errors.New("still warming up") })
	if err == nil || !strings.Contains(err.Error(), "still warming up") {
		t.Fatalf("WaitReady past its timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.WaitReady(ctx, time.Minute, func(context.Context) error { return errors.New("no") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitReady with a cancelled context: %v", err)
	}
}

func TestTaskset(t *testing.T) {
	if got := strings.Join(Taskset("", "wrk", "-t1"), " "); got != "wrk -t1" {
		t.Errorf("no CPUs: %q", got)
	}
	if got := strings.Join(Taskset("0,1", "wrk", "-t1"), " "); got != "taskset -c 0,1 wrk -t1" {
		t.Errorf("CPUs 0,1: %q", got)
	}
}

// FreeAddr and FreePort name ports nobody listens on, on the host asked.
func TestFreeAddr(t *testing.T) {
	addr, err := FreeAddr("127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr, "127.0.0.2:") {
		t.Errorf("FreeAddr(127.0.0.2) = %q", addr)
	}
	port, err := FreePort()
	if err != nil || port <= 0 || port > 65535 {
		t.Fatalf("FreePort: %d, %v", port, err)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("the free port %d cannot be listened on: %v", port, err)
	}
	ln.Close()
}

// Start leaves the output to the caller, and Err reports the exit status.
func TestStartReportsExit(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd := Command([]string{exe}, helperEnv+"=fail")
	cmd.Stderr = &out
	p, err := Start("child", cmd)
	if err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := p.Err(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v, want status 3", err)
	}
	if !strings.Contains(out.String(), "port taken") || p.Tail() != "" {
		t.Errorf("output %q, tail %q: want the output with the caller and no log", out.String(), p.Tail())
	}
	if _, err := Start("missing", Command([]string{"/nonexistent/heureka-proc-test"})); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("start of a missing program: %v", err)
	}
}

func TestHTTPOK(t *testing.T) {
	status := http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	ready := HTTPOK(srv.URL + "/readyz")
	if err := ready(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("503: %v, want an error naming the status", err)
	}
	status = http.StatusOK
	if err := ready(context.Background()); err != nil {
		t.Errorf("200: %v", err)
	}
}

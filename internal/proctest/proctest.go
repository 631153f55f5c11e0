package proctest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proc"
)

var (
	buildOnce sync.Once
	binPath   string
	buildDir  string
	buildErr  error
)

// Main is a TestMain body: it runs the tests, removes the binary if one was
// built, and exits with the tests' code.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// Bin returns the heureka binary: $HEUREKA_BIN if set, else ./cmd/heureka
// built once into a temporary directory (removed by Main). A failed build
// fails t with the compiler's output.
func Bin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(build)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func build() {
	if b := os.Getenv("HEUREKA_BIN"); b != "" {
		binPath = b
		return
	}
	dir, err := os.MkdirTemp("", "heureka-bin-")
	if err != nil {
		buildErr = fmt.Errorf("proctest: %w", err)
		return
	}
	buildDir = dir
	_, file, _, _ := runtime.Caller(0)
	binPath, buildErr = proc.Build(context.Background(), filepath.Join(filepath.Dir(file), "..", ".."), dir)
}

// Proc is one running (or finished) process with its output. Its Name,
// Cmd, Done, Exited, Kill and Stop are package proc's.
type Proc struct {
	*proc.Proc

	t       testing.TB
	mu      sync.Mutex
	out     strings.Builder
	changed chan struct{} // closed and replaced on every write
}

// Start runs the heureka binary with args (a subcommand first). When the
// test ends the process is stopped if still running (Stop), and its output
// is logged if the test failed.
func Start(t testing.TB, name string, args ...string) *Proc {
	t.Helper()
	return StartCmd(t, name, exec.Command(Bin(t), args...))
}

// StartCmd runs cmd, which must not be started yet and whose Stdout and
// Stderr proctest sets, with the same clean-up as Start.
func StartCmd(t testing.TB, name string, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{t: t, changed: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	var err error
	if p.Proc, err = proc.Start(name, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("--- %s (%s) output:\n%s", p.Name, strings.Join(cmd.Args, " "), tail(p.Output(), 64<<10))
		}
	})
	return p
}

// Write collects the process's output.
func (p *Proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.changed)
	p.changed = make(chan struct{})
	return p.out.Write(b)
}

// Output is everything the process has written so far, stdout and stderr
// interleaved.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// WaitFor waits up to d until the output matches re and returns the
// submatches. It fails the test if the process exits first or d passes.
func (p *Proc) WaitFor(re *regexp.Regexp, d time.Duration) []string {
	p.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		p.mu.Lock()
		m := re.FindStringSubmatch(p.out.String())
		changed := p.changed
		p.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-changed:
		case <-p.Done():
			if m := re.FindStringSubmatch(p.Output()); m != nil {
				return m
			}
			p.t.Fatalf("%s exited (%v) before printing %s", p.Name, p.Err(), re)
		case <-timer.C:
			p.t.Fatalf("%s did not print %s within %v", p.Name, re, d)
		}
	}
}

// listeningRE is the line every heureka listener logs once it accepts.
var listeningRE = regexp.MustCompile(`listening.* addr=(\S+)`)

// WaitAddr waits up to d for the "listening … addr=HOST:PORT" line and
// returns HOST:PORT.
func (p *Proc) WaitAddr(d time.Duration) string {
	p.t.Helper()
	return p.WaitFor(listeningRE, d)[1]
}

// Signal sends sig to the process; it fails the test if the process is
// gone.
func (p *Proc) Signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.Proc.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// Exit waits up to d for the process to end and returns its exit code (-1
// when a signal ended it). It fails the test if the process is still
// running after d.
func (p *Proc) Exit(d time.Duration) int {
	p.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.Done():
	case <-timer.C:
		p.t.Fatalf("%s still running after %v", p.Name, d)
	}
	err := p.Err()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	p.t.Fatalf("%s: %v", p.Name, err)
	return -1
}

// Eventually polls cond every 20 ms until it holds, and fails the test
// naming what it waited for once timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := Poll(timeout, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
	if err != nil {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Retry calls fn every 20 ms until it returns nil, and fails the test
// naming what it waited for, and fn's last error, once timeout passes.
func Retry(t testing.TB, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	if err := Poll(timeout, fn); err != nil {
		t.Fatalf("timed out after %v waiting for %s (last: %v)", timeout, what, err)
	}
}

var errNotYet = errors.New("not yet")

// Poll calls fn every 20 ms until it returns nil or timeout passes; then it
// returns fn's last error. It is Retry for callers that report a timeout
// their own way.
func Poll(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		<-tick.C
	}
}

// FreeAddr returns host:port with a port on host (a loopback address such
// as 127.0.0.1 or 127.0.0.2) that nobody listens on right now.
func FreeAddr(t testing.TB, host string) string {
	t.Helper()
	addr, err := proc.FreeAddr(host)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

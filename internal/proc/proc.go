// Package proc starts and stops the real processes that heureka's tests,
// benchmarks and fault harnesses run: a heureka server, an agent, etcd,
// ZooKeeper. It owns a process's life (start, wait, signal, stop with a
// grace period) and the few helpers every harness needs around it: a free
// loopback address, a ready check, a build of cmd/heureka, CPU pinning.
// Errors are returned, never fatal; package proctest wraps it for tests.
//
// Each Proc has one goroutine, which waits for the process and closes Done.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one started process.
type Proc struct {
	Name string // for errors: "heureka", "etcd", "p2", ...
	Cmd  *exec.Cmd

	log    string    // the log file, when StartLogged made it
	closer io.Closer // closed once the process has exited
	done   chan struct{}
	err    error // from Wait, valid once done is closed
}

// Start starts cmd, which must not have been started; its Stdout, Stderr
// and SysProcAttr are the caller's to set.
func Start(name string, cmd *exec.Cmd) (*Proc, error) {
	return start(&Proc{Name: name, Cmd: cmd})
}

// StartLogged starts cmd in its own process group (so that a ^C to the
// harness reaches only the harness, which stops its processes itself),
// with stdout and stderr appended to logPath, which is created if missing
// so that a restarted server keeps one log. onLine, when not nil, sees each
// stderr line until it returns true.
func StartLogged(name string, cmd *exec.Cmd, logPath string, onLine func(string) bool) (*Proc, error) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if onLine != nil {
		cmd.Stderr = &lineTee{w: f, fn: onLine}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	p, err := start(&Proc{Name: name, Cmd: cmd, log: logPath, closer: f})
	if err != nil {
		f.Close()
	}
	return p, err
}

func start(p *Proc) (*Proc, error) {
	if err := p.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", p.Name, strings.Join(p.Cmd.Args, " "), err)
	}
	p.done = make(chan struct{})
	go func() {
		p.err = p.Cmd.Wait()
		if p.closer != nil {
			p.closer.Close()
		}
		close(p.done)
	}()
	return p, nil
}

// lineTee writes everything to w and hands complete lines to fn until fn
// returns true.
type lineTee struct {
	w    io.Writer
	fn   func(string) bool
	mu   sync.Mutex
	buf  []byte
	done bool
}

func (t *lineTee) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		t.buf = append(t.buf, b...)
		for {
			i := strings.IndexByte(string(t.buf), '\n')
			if i < 0 {
				break
			}
			line := string(t.buf[:i])
			t.buf = t.buf[i+1:]
			if t.fn(line) {
				t.done, t.buf = true, nil
				break
			}
		}
	}
	return t.w.Write(b)
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err waits for the process to exit and returns its exit error (nil for
// status 0).
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// Signal sends sig; it is an error if the process has exited.
func (p *Proc) Signal(sig os.Signal) error {
	if p.Exited() {
		return fmt.Errorf("signal %v to %s: it already exited (%v)", sig, p.Name, p.err)
	}
	if err := p.Cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s: %w", sig, p.Name, err)
	}
	return nil
}

// Kill sends SIGKILL (after SIGCONT, in case the process was stopped)
// unless it has exited, and waits for it to end. A nil Proc is a no-op.
func (p *Proc) Kill() {
	if p == nil || p.Exited() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGCONT)
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Stop ends the process if it is running: SIGCONT (in case it was
// stopped), SIGTERM, and SIGKILL if it has not exited within grace. A nil
// Proc is a no-op.
func (p *Proc) Stop(grace time.Duration) {
	if p == nil || p.Exited() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGCONT)
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		p.Kill()
	}
}

// Tail returns the last eight lines of the log StartLogged wrote, for
// error messages; "" for a process started by Start.
func (p *Proc) Tail() string {
	if p.log == "" {
		return ""
	}
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

// WaitReady calls ready every 50 ms, each call bounded to 2 s, until it
// returns nil. It gives up, with the log's tail, when the process exits or
// timeout passes, and with ctx's error when ctx ends. (50 ms: the soak
// reports a restart's gap up to the first ready answer.)
func (p *Proc) WaitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if p.Exited() {
			return fmt.Errorf("%s exited at start: %v\n%s", p.Name, p.err, p.Tail())
		}
		rctx, rcancel := context.WithTimeout(tctx, 2*time.Second)
		last := ready(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-tctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s not ready after %v: %v\n%s", p.Name, timeout, last, p.Tail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// HTTPOK is a ready check for WaitReady: a GET of url that answers 200.
func HTTPOK(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// FreeAddr returns host:port with a port on host (a loopback address such
// as 127.0.0.1 or 127.0.0.2) that nobody listened on a moment ago.
func FreeAddr(host string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("free address on %s: %w", host, err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort returns a port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	addr, err := FreeAddr("127.0.0.1")
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	return strconv.Atoi(port)
}

// Build builds cmd/heureka of the repository at repo into dir and returns
// the binary's path. GOWORK=off: the repository's own go.mod decides.
func Build(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "heureka")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/heureka")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/heureka in %s: %v\n%s", repo, err, out)
	}
	return bin, nil
}

// Command is argv as a command, with env ("K=V") added to this process's
// environment.
func Command(argv []string, env ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	return cmd
}

// Taskset returns argv run by taskset on the CPUs in cpus ("1" or "0,1"),
// or argv itself when cpus is empty. taskset execs the command, so the
// process's id is the command's.
func Taskset(cpus string, argv ...string) []string {
	if cpus == "" {
		return argv
	}
	return append([]string{"taskset", "-c", cpus}, argv...)
}

// PinSelf runs this program again under taskset on the CPUs in cpus ("0"
// or "0,1") and exits with its status, unless it already runs so (the
// environment variable marker says it does): the kernel's affinity then
// covers every thread the Go runtime starts, which setting it from inside
// would not. An empty cpus does nothing.
func PinSelf(cpus, marker string) error {
	if cpus == "" || os.Getenv(marker) == cpus {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	argv := Taskset(cpus, append([]string{exe}, os.Args[1:]...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), marker+"="+cpus)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.ExitCode())
		}
		return fmt.Errorf("pin to CPUs %s with taskset: %w", cpus, err)
	}
	os.Exit(0)
	return nil
}

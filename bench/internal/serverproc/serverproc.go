package serverproc

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a process a harness started. Its stdout and stderr go to a log
// file.
type Proc struct {
	Name string // for errors: "heureka", "etcd", ...

	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // its exit error, valid after done
}

// Start starts argv, with env added to this process's environment and its
// stdout and stderr appended to logPath (created if missing, so that a
// restarted server keeps one log). onLine, when not nil, sees each stderr
// line until it returns true.
func Start(name, logPath string, argv, env []string, onLine func(string) bool) (*Proc, error) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = f
	// Each process gets its own process group, so that a ^C to the
	// harness reaches the harness only and it stops them itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if onLine != nil {
		cmd.Stderr = &lineTee{f: f, fn: onLine}
	} else {
		cmd.Stderr = f
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, strings.Join(argv, " "), err)
	}
	p := &Proc{Name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// lineTee writes everything to f and hands complete lines to fn until fn
// returns true.
type lineTee struct {
	f    io.Writer
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
	return t.f.Write(b)
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the process's exit error (nil for exit status 0); valid once Done
// is closed.
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process; it is an error if it has exited.
func (p *Proc) Signal(sig os.Signal) error {
	if p.Exited() {
		return fmt.Errorf("%s already exited: %v", p.Name, p.err)
	}
	return p.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL, unless the process has exited, and waits for it to
// end.
func (p *Proc) Kill() {
	if p == nil || p.Exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Stop sends SIGTERM, waits up to grace, then SIGKILLs.
func (p *Proc) Stop(grace time.Duration) {
	if p == nil || p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// Tail returns the last lines of the process's log, for error messages.
func (p *Proc) Tail() string {
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
// returns nil; it gives up with the log's tail when the process exits or
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

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Build builds cmd/heureka of the repository at repo into dir and returns
// the binary's path.
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

// Taskset returns argv run by taskset on the CPUs in cpus ("1" or "0,1"),
// or argv itself when cpus is empty. taskset execs the command, so the
// process's id is the command's.
func Taskset(cpus string, argv ...string) []string {
	if cpus == "" {
		return argv
	}
	return append([]string{"taskset", "-c", cpus}, argv...)
}

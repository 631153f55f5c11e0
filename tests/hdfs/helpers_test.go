// Package hdfs_test runs heureka's HDFS pieces as real processes on
// loopback: `heureka server`, simulated daemons (`heureka sim`) and
// `heureka agent`, and reads the registry through the Go client. The
// binary is built once by TestMain (or taken from $HEUREKA_BIN).
package hdfs_test

import (
	"github.com/heureka-project/heureka/internal/testbin"

	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

var heurekaBin string

func TestMain(m *testing.M) { testbin.Main(m, &heurekaBin) }

// proc is one heureka process; its stdout and stderr are collected.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // from Wait, once done is closed

	mu  sync.Mutex
	out strings.Builder
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs heureka with args. When the test ends the process is killed
// if still running, and its output is shown if the test failed.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, done: make(chan struct{})}
	p.cmd = exec.Command(heurekaBin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("--- %s (%s) output:\n%s", p.name, strings.Join(args, " "), p.output())
		}
	})
	return p
}

// waitFor waits until the output matches re and returns the submatches.
func (p *proc) waitFor(t *testing.T, re *regexp.Regexp, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m
		}
		select {
		case <-p.done:
			if m := re.FindStringSubmatch(p.output()); m != nil {
				return m
			}
			t.Fatalf("%s exited (%v) before printing %s", p.name, p.err, re)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %s within %v", p.name, re, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.name, err)
	}
}

// exit waits for the process to end and returns its exit code.
func (p *proc) exit(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("%s still running after %v", p.name, d)
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("%s: %v", p.name, p.err)
	return -1
}

var (
	serverRE = regexp.MustCompile(`heureka server listening.* addr=(\S+)`)
	simRE    = regexp.MustCompile(`heureka sim listening.* http=(\S+) port=(\S+) control=(\S+)`)
)

// server is a running `heureka server`.
type server struct {
	*proc
	addr string
}

// URL is the Eureka base URL.
func (s *server) URL() string { return "http://" + s.addr + "/eureka" }

func startServer(t *testing.T) *server {
	t.Helper()
	p := start(t, "server", "server", "--listen", "127.0.0.1:0")
	m := p.waitFor(t, serverRE, 20*time.Second)
	return &server{proc: p, addr: m[1]}
}

// simDaemon is a running `heureka sim`.
type simDaemon struct {
	*proc
	http, port, control string
}

func startSim(t *testing.T, role string, args ...string) *simDaemon {
	t.Helper()
	p := start(t, "sim "+role, append([]string{"sim", role}, args...)...)
	m := p.waitFor(t, simRE, 20*time.Second)
	return &simDaemon{proc: p, http: m[1], port: m[2], control: m[3]}
}

// portNumber is the port of the data/RPC listener.
func (s *simDaemon) portNumber() string { return s.port[strings.LastIndexByte(s.port, ':')+1:] }

// do POSTs to the control API, e.g. do(t, "/sim/stop").
func (s *simDaemon) do(t *testing.T, path string) {
	t.Helper()
	resp, err := http.Post("http://"+s.control+path, "", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
}

// startAgent runs `heureka agent` for sim d.
func startAgent(t *testing.T, reg *server, role string, d *simDaemon, host, rack string, extra ...string) *proc {
	t.Helper()
	portFlag := "--data-port"
	if role == "namenode" {
		portFlag = "--rpc-port"
	}
	args := []string{"agent", "--role", role, "--cluster", "prod", "--registry", reg.URL(),
		"--jmx", "http://" + d.http, portFlag, d.portNumber(), "--host", host, "--ip", "127.0.0.1", "--rack", rack}
	return start(t, "agent "+host, append(args, extra...)...)
}

func newClient(t *testing.T, reg *server) *client.Client {
	t.Helper()
	// Generous timeouts: the machine may be busy, and a slow answer is
	// not what these tests are about.
	cfg := client.DefaultConfig()
	cfg.URLs, cfg.Logger = []string{reg.URL()}, slog.New(slog.DiscardHandler)
	cfg.ConnectTimeout, cfg.ReadTimeout, cfg.Rounds = 5*time.Second, 10*time.Second, 2
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// statusOf reads an instance's status; "" when it is not registered.
func statusOf(t *testing.T, c *client.Client, app, id string) heureka.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, err := c.Instance(ctx, app, id)
	switch {
	case err == nil:
		return in.Status
	case heureka.ErrorCode(err) == heureka.ENOTFOUND:
		return ""
	}
	t.Fatalf("reading %s/%s: %v", app, id, err)
	return ""
}

// waitStatus polls every 20 ms until the instance has status want ("" =
// gone) and returns when it was first seen; it fails after bound.
func waitStatus(t *testing.T, c *client.Client, app, id string, want heureka.Status, bound time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(bound)
	last := heureka.Status("?")
	for {
		got := statusOf(t, c, app, id)
		if got == want {
			return time.Now()
		}
		last = got
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s is %q after %v; want %q", app, id, last, bound, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

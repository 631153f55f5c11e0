package tour

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// heurekaBin is the binary every test runs: HEUREKA_BIN if set, otherwise
// built once by TestMain from the repository root.
var heurekaBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if bin := os.Getenv("HEUREKA_BIN"); bin != "" {
		heurekaBin = bin
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "heureka-tour-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/tour:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	heurekaBin = filepath.Join(dir, "heureka")
	build := exec.Command("go", "build", "-o", heurekaBin, "./cmd/heureka")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests/tour: building heureka:", err)
		return 1
	}
	return m.Run()
}

// needTools skips (fails in CI) when a program the tour runs is missing.
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; .ci/run installs it", name)
			}
			t.Skipf("%s is not installed; the tour runs it", name)
		}
	}
}

// demoNode is one row of the demo's node table.
type demoNode struct {
	Name, Rack, Role, HA, Control string // Control: "http://127.0.0.1:PORT/sim"
}

// ControlPort is the port of the node's control URL.
func (n demoNode) ControlPort() string {
	u, _ := url.Parse(n.Control)
	return u.Port()
}

// demo is a running `heureka demo`.
type demo struct {
	cmd       *exec.Cmd
	Intro     string // everything it printed up to "Ctrl-C stops everything"
	Dashboard string // "http://127.0.0.1:PORT/"
	Export    string // "export HEUREKA_REGISTRY=..."
	Registry  string // the value exported
	DNSPort   string // the first peer's DNS port ("DNS: dig @127.0.0.1 -p PORT ...")
	Nodes     map[string]demoNode
	stderr    *syncBuffer
	done      chan error
}

var (
	dashboardRE = regexp.MustCompile(`Dashboard:\s+(http://\S+/)`)
	exportRE    = regexp.MustCompile(`(export HEUREKA_REGISTRY=(\S+))`)
	dnsRE       = regexp.MustCompile(`DNS:\s+dig @127\.0\.0\.1 -p (\d+) `)
	nodeRE      = regexp.MustCompile(`^\s+((?:nn|dn)\d+)\s+(\S+)\s+(NameNode|DataNode)\s+(active|standby)?\s*(http://\S+/sim)\s*$`)
)

// startDemo starts `heureka demo --base-port 0` and parses what it
// prints. It is stopped with SIGINT when the test ends.
func startDemo(t *testing.T) *demo {
	t.Helper()
	cmd := exec.Command(heurekaBin, "demo", "--base-port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &demo{cmd: cmd, Nodes: map[string]demoNode{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	intro := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if !sent {
				b.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "Ctrl-C stops everything") {
					intro <- b.String()
					sent = true
				}
			}
		}
		if !sent {
			intro <- b.String()
		}
		d.done <- cmd.Wait()
	}()
	t.Cleanup(func() { d.stop(t) })
	select {
	case d.Intro = <-intro:
	case <-time.After(60 * time.Second):
		t.Fatalf("heureka demo printed no introduction in 60 s; stderr:\n%s", d.stderr)
	}
	if m := dashboardRE.FindStringSubmatch(d.Intro); m != nil {
		d.Dashboard = m[1]
	}
	if m := exportRE.FindStringSubmatch(d.Intro); m != nil {
		d.Export, d.Registry = m[1], m[2]
	}
	if m := dnsRE.FindStringSubmatch(d.Intro); m != nil {
		d.DNSPort = m[1]
	}
	for _, line := range strings.Split(d.Intro, "\n") {
		if m := nodeRE.FindStringSubmatch(line); m != nil {
			d.Nodes[m[1]] = demoNode{Name: m[1], Rack: m[2], Role: m[3], HA: m[4], Control: m[5]}
		}
	}
	if d.Dashboard == "" || d.Registry == "" || d.DNSPort == "" || len(d.Nodes) != 8 {
		t.Fatalf("cannot read the demo's introduction (dashboard %q, registry %q, DNS port %q, %d nodes):\n%s\nstderr:\n%s",
			d.Dashboard, d.Registry, d.DNSPort, len(d.Nodes), d.Intro, d.stderr)
	}
	return d
}

// stop sends Ctrl-C (SIGINT) and waits, at most 60 s, for a clean exit.
func (d *demo) stop(t *testing.T) error {
	if d.cmd.ProcessState != nil {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(60 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Errorf("heureka demo did not stop within 60 s of Ctrl-C; stderr:\n%s", d.stderr)
		return <-d.done
	}
}

// shell runs one command line with bash in dir, with env added, for at
// most a minute.
func shell(t *testing.T, dir string, env []string, line string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%s: %v", line, err)
	}
	return out.String(), errb.String(), code
}

// eventually calls f every 100 ms until it returns "" or timeout passes,
// then fails with f's last complaint.
func eventually(t *testing.T, timeout time.Duration, what string, f func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %s", what, timeout, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)

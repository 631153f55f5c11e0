package fargo_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/op/go-logging"
)

// heurekaBin is the server binary every test runs: HEUREKA_BIN if set,
// otherwise built once by TestMain from the repository root.
var heurekaBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// fargo logs every request at NOTICE and every expected 404 at ERROR;
	// keep the test output for our own failures.
	logging.SetLevel(logging.CRITICAL, "fargo")

	if bin := os.Getenv("HEUREKA_BIN"); bin != "" {
		heurekaBin = bin
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "heureka-fargo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/fargo:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	heurekaBin = filepath.Join(dir, "heureka")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/fargo:", err)
		return 1
	}
	// Build from the root module: ../../cmd/heureka lies outside this
	// module, so the go command must run there.
	build := exec.Command("go", "build", "-o", heurekaBin, "./cmd/heureka")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests/fargo: building heureka:", err)
		return 1
	}
	return m.Run()
}

// server is one heureka process listening on a loopback port.
type server struct {
	Addr string // host:port
	log  *syncBuffer
}

// URL returns the base URL for prefix, e.g. "/eureka/v2".
func (s *server) URL(prefix string) string { return "http://" + s.Addr + prefix }

var addrRE = regexp.MustCompile(`addr=(\S+)`)

// startServer runs the heureka binary on 127.0.0.1:0 and returns once it
// has logged its listening address. The process is stopped with SIGTERM
// when the test ends, and must exit 0; its log is shown if the test failed.
func startServer(t *testing.T) *server {
	t.Helper()
	cmd := exec.Command(heurekaBin, "server", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", heurekaBin, err)
	}

	s := &server{log: &syncBuffer{}}
	addrc := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		found := false
		for sc.Scan() {
			line := sc.Text()
			s.log.WriteLine(line)
			if !found && strings.Contains(line, `msg="heureka server listening"`) {
				if m := addrRE.FindStringSubmatch(line); m != nil {
					found = true
					addrc <- strings.Trim(m[1], `"`)
				}
			}
		}
		// Drain anything past a very long line so the process never blocks.
		_, _ = io.Copy(io.Discard, stderr)
	}()

	exited := make(chan error, 1)
	go func() {
		<-scanned
		exited <- cmd.Wait()
	}()

	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("did not exit within 10s of SIGTERM")
		}
	}

	select {
	case s.Addr = <-addrc:
	case err := <-exited:
		stopped = true
		t.Fatalf("heureka exited before listening (%v); log:\n%s", err, s.log)
	case <-time.After(15 * time.Second):
		err := stop()
		t.Fatalf("heureka did not log its address within 15s (stop: %v); log:\n%s", err, s.log)
	}

	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("heureka server on %s: SIGTERM: %v", s.Addr, err)
		}
		if t.Failed() {
			t.Logf("heureka server log:\n%s", s.log)
		}
	})
	return s
}

// syncBuffer collects a process's log lines for failure reports.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteLine(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
	b.buf.WriteByte('\n')
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls cond every 50 ms until it returns nil or d passes, then
// fails the test with cond's last error.
func waitFor(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: still failing after %v: %v", what, d, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

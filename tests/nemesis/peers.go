package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// peer is one heureka server process in its namespace.
type peer struct {
	i      int
	ns     string
	bin    string
	dir    string
	peers  string // --peers
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	starts []time.Time // every (re)start, for the checker
}

func (p *peer) name() string { return fmt.Sprintf("p%d", p.i) }
func (p *peer) clientURL() string {
	return fmt.Sprintf("http://%s%d:%d/eureka", clientNet, p.i, serverPort)
}
func (p *peer) peerURL() string {
	return fmt.Sprintf("http://%s%d:%d/eureka", peerNet, p.i, serverPort)
}

func (p *peer) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	log, err := os.OpenFile(filepath.Join(p.dir, p.name()+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command("ip", "netns", "exec", p.ns, p.bin, "server",
		"--listen", fmt.Sprintf("0.0.0.0:%d", serverPort),
		"--peers", p.peers, "--self-url", p.peerURL(),
		"--sync-timeout", "5s", "--log-level", "info",
		// The clock the clock fault steps and skews, on the namespace's
		// own loopback.
		"--debug-listen", debugListen)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: a Ctrl-C at the terminal reaches the
	// harness, which stops the peers itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.name(), err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	p.starts = append(p.starts, time.Now())
	return nil
}

// waitReady polls /readyz on the client network.
func (p *peer) waitReady(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	c := &http.Client{Timeout: time.Second}
	for {
		resp, err := c.Get(strings.TrimSuffix(p.clientURL(), "/eureka") + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %v (last: %v)", p.name(), within, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *peer) signal(s syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(s)
	}
}

// kill ends the process with SIGKILL and waits for it.
func (p *peer) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies as well, but say so
	_ = cmd.Process.Kill()
	<-exited
}

func (p *peer) restartedSince(t time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.starts {
		if s.After(t) {
			return true
		}
	}
	return false
}

// debugListen is where each peer serves /debug/clock, inside its own
// namespace: only a process in that namespace reaches it.
const debugListen = "127.0.0.1:6060"

// setClock changes p's clock: query is what POST /debug/clock takes
// (jump=D, rate=R, reset=true). The call is made by this program,
// re-executed inside p's namespace (-clock).
func (p *peer) setClock(query string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	out, err := exec.Command("ip", "netns", "exec", p.ns, self, "-clock", query).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: clock %s: %w: %s", p.name(), query, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// runClock is the -clock mode: one POST to the peer's clock endpoint, in
// the peer's namespace; it prints the clock's new state.
func runClock(query string) int {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post("http://"+debugListen+"/debug/clock?"+query, "", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis clock:", err)
		return 2
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "nemesis clock: %s: %s\n", resp.Status, b)
		return 2
	}
	fmt.Print(string(b))
	return 0
}

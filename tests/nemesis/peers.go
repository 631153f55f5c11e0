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

	"github.com/heureka-project/heureka/internal/proc"
)

// peer is one heureka server process in its namespace.
type peer struct {
	i      int
	ns     string
	bin    string
	dir    string
	peers  string // --peers
	base   string // where clients reach it, when not its address on the client network (tests)
	mu     sync.Mutex
	proc   *proc.Proc  // the latest process
	starts []time.Time // every (re)start, for the checker
}

func (p *peer) name() string { return fmt.Sprintf("p%d", p.i) }
func (p *peer) clientURL() string {
	if p.base != "" {
		return p.base
	}
	return fmt.Sprintf("http://%s%d:%d/eureka", clientNet, p.i, serverPort)
}
func (p *peer) peerURL() string {
	return fmt.Sprintf("http://%s%d:%d/eureka", peerNet, p.i, serverPort)
}

func (p *peer) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command("ip", "netns", "exec", p.ns, p.bin, "server",
		"--listen", fmt.Sprintf("0.0.0.0:%d", serverPort),
		"--peers", p.peers, "--self-url", p.peerURL(),
		"--sync-timeout", "5s", "--log-level", "info",
		// The clock the clock fault steps and skews, on the namespace's
		// own loopback.
		"--debug-listen", debugListen)
	// Die with the harness, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, err := proc.StartLogged(p.name(), cmd, filepath.Join(p.dir, p.name()+".log"), nil)
	if err != nil {
		return err
	}
	p.proc = pr
	p.starts = append(p.starts, time.Now())
	return nil
}

// current is the peer's latest process (nil before the first start).
func (p *peer) current() *proc.Proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proc
}

// waitReady polls /readyz on the client network; it gives up at once if
// the process exits.
func (p *peer) waitReady(ctx context.Context, within time.Duration) error {
	url := strings.TrimSuffix(p.clientURL(), "/eureka") + "/readyz"
	return p.current().WaitReady(ctx, within, proc.HTTPOK(url))
}

func (p *peer) signal(s syscall.Signal) {
	if pr := p.current(); pr != nil {
		_ = pr.Signal(s)
	}
}

// kill ends the process with SIGKILL and waits for it.
func (p *peer) kill() { p.current().Kill() }

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

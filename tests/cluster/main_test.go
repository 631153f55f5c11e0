// Package cluster_test runs heureka servers as real processes on
// 127.0.0.x and checks what a registry cluster must survive: replication,
// a peer killed and restarted, a peer frozen (SIGSTOP) and thawed, and
// self-preservation on the real clock.
package cluster_test

import (
	"github.com/heureka-project/heureka/internal/testbin"

	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var bin string // the heureka binary, built once

func TestMain(m *testing.M) { testbin.Main(m, &bin) }

// proc is one heureka server process.
type proc struct {
	t    testing.TB
	name string
	addr string // host:port
	args []string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
}

func (p *proc) url() string { return "http://" + p.addr + "/eureka" }

// freeAddr picks a free port on ip.
func freeAddr(t testing.TB, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startProc runs `heureka server` on addr with args and waits for its
// "listening" line.
func startProc(t testing.TB, name, addr string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, addr: addr, args: args}
	p.start()
	t.Cleanup(p.kill)
	return p
}

var addrRE = regexp.MustCompile(`addr=(\S+)`)

func (p *proc) start() {
	p.t.Helper()
	args := append([]string{"server", "--listen", p.addr, "--log-level", "debug"}, p.args...)
	p.cmd = exec.Command(bin, args...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if strings.Contains(line, "heureka server listening") && addrRE.MatchString(line) {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
		p.t.Fatalf("%s did not start within 15 s:\n%s", p.name, p.logs())
	}
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *proc) signal(s syscall.Signal) {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(s)
	}
}

func (p *proc) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	p.signal(syscall.SIGCONT)
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	if p.t.Failed() {
		p.t.Logf("%s log:\n%s", p.name, p.logs())
	}
	p.cmd = nil
}

var client = &http.Client{Timeout: 5 * time.Second}

func (p *proc) do(method, path string, body []byte) (int, []byte) {
	p.t.Helper()
	req, _ := http.NewRequest(method, "http://"+p.addr+path, bytes.NewReader(body))
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

const app = "HDFS-DATANODE.PROD"

func (p *proc) register(id string, leaseSecs int) {
	p.t.Helper()
	body := fmt.Sprintf(`{"instance":{"instanceId":%q,"hostName":"%s.example","app":%q,"ipAddr":"127.0.0.1",
		"status":"UP","port":{"$":9866,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
		"leaseInfo":{"renewalIntervalInSecs":%d,"durationInSecs":%d},"metadata":{"rack":"/rack%d"}}}`,
		id, id, app, max(leaseSecs/3, 1), leaseSecs, rackOf(id))
	if code, b := p.do(http.MethodPost, "/eureka/apps/"+app, []byte(body)); code != http.StatusNoContent {
		p.t.Fatalf("%s: register %s: %d %s", p.name, id, code, b)
	}
}

// rackOf spreads instances over four racks.
func rackOf(id string) int {
	n := 0
	for _, c := range id {
		n += int(c)
	}
	return n % 4
}

func (p *proc) renew(id string) int {
	code, _ := p.do(http.MethodPut, "/eureka/apps/"+app+"/"+id, nil)
	return code
}

// statuses returns id → status as p serves them ("" if unreachable).
func (p *proc) statuses() map[string]string {
	code, b := p.do(http.MethodGet, "/eureka/apps/", nil)
	if code != http.StatusOK {
		return nil
	}
	var env struct {
		Applications struct {
			Application []struct {
				Instance []struct {
					InstanceID string `json:"instanceId"`
					Status     string `json:"status"`
				} `json:"instance"`
			} `json:"application"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
	out := map[string]string{}
	for _, a := range env.Applications.Application {
		for _, in := range a.Instance {
			out[in.InstanceID] = in.Status
		}
	}
	return out
}

func (p *proc) ready() bool {
	code, _ := p.do(http.MethodGet, "/readyz", nil)
	return code == http.StatusOK
}

// eventually polls cond every 20 ms for up to limit.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startCluster starts n peers on 127.0.0.2, .3, … each listing all peers.
func startCluster(t testing.TB, n int, extra ...string) []*proc {
	t.Helper()
	addrs := make([]string, n)
	urls := make([]string, n)
	for i := range n {
		addrs[i] = freeAddr(t, fmt.Sprintf("127.0.0.%d", i+2))
		urls[i] = "http://" + addrs[i] + "/eureka"
	}
	procs := make([]*proc, n)
	for i := range n {
		args := append([]string{"--peers", strings.Join(urls, ","), "--sync-timeout", "2s"}, extra...)
		procs[i] = startProc(t, fmt.Sprintf("peer%d", i+1), addrs[i], args...)
	}
	for _, p := range procs {
		eventually(t, 10*time.Second, p.name+" ready", p.ready)
	}
	return procs
}

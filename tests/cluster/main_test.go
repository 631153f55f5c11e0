// Package cluster_test runs heureka servers as real processes on
// 127.0.0.x and checks what a registry cluster must survive: replication,
// a peer killed and restarted, a peer frozen (SIGSTOP) and thawed,
// self-preservation on the real clock, and real agents beside simulated
// DataNodes that list one, two or all three peers (a minute; ten with
// HEUREKA_LONG=1).
package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/replication"
)

func TestMain(m *testing.M) { proctest.Main(m) }

// proc is one heureka server process on a fixed address, so that it can
// be killed and started again where its peers expect it.
type proc struct {
	t    testing.TB
	name string
	addr string // host:port
	args []string
	run  *proctest.Proc
}

func (p *proc) url() string { return "http://" + p.addr + "/eureka" }

// startProc runs `heureka server` on addr with args and waits for its
// "listening" line.
func startProc(t testing.TB, name, addr string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, addr: addr, args: args}
	p.start()
	return p
}

func (p *proc) start() {
	p.t.Helper()
	args := append([]string{"server", "--listen", p.addr, "--log-level", "debug"}, p.args...)
	p.run = proctest.Start(p.t, p.name, args...)
	p.run.WaitAddr(15 * time.Second)
}

func (p *proc) signal(s syscall.Signal) { p.run.Signal(s) }

// kill ends the process with SIGKILL, as a crash would.
func (p *proc) kill() { p.run.Kill() }

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

// peerStatus is what p's /v1/status says about the peer at url.
func (p *proc) peerStatus(url string) (replication.PeerStatus, bool) {
	code, b := p.do(http.MethodGet, "/v1/status", nil)
	if code != http.StatusOK {
		return replication.PeerStatus{}, false
	}
	var st struct {
		Peers []replication.PeerStatus `json:"peers"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		p.t.Fatalf("%s: /v1/status: %v", p.name, err)
	}
	for _, ps := range st.Peers {
		if ps.URL == url {
			return ps, true
		}
	}
	return replication.PeerStatus{}, false
}

// drained reports whether every peer has delivered what it queued for
// every other and reaches each it has called (one never called has no
// Since yet).
func drained(ps []*proc) bool {
	for _, p := range ps {
		for _, q := range ps {
			if q == p {
				continue
			}
			st, ok := p.peerStatus(q.url())
			if !ok || !(st.Reachable || st.Since.IsZero()) || st.Queued > 0 || st.Resync {
				return false
			}
		}
	}
	return true
}

// startCluster starts n peers on 127.0.0.2, .3, … each listing all peers.
func startCluster(t testing.TB, n int, extra ...string) []*proc {
	t.Helper()
	addrs := make([]string, n)
	urls := make([]string, n)
	for i := range n {
		addrs[i] = proctest.FreeAddr(t, fmt.Sprintf("127.0.0.%d", i+2))
		urls[i] = "http://" + addrs[i] + "/eureka"
	}
	procs := make([]*proc, n)
	for i := range n {
		args := append([]string{"--peers", strings.Join(urls, ","), "--sync-timeout", "2s"}, extra...)
		procs[i] = startProc(t, fmt.Sprintf("peer%d", i+1), addrs[i], args...)
	}
	for _, p := range procs {
		proctest.Eventually(t, 10*time.Second, p.name+" ready", p.ready)
	}
	return procs
}

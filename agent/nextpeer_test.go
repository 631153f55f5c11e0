package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry"
)

// peer is one real heureka registry behind an httptest server that counts
// the heartbeats it was sent directly. The two peers of the test do not
// replicate to each other: they stand for peers cut apart by a partition.
type peer struct {
	reg        *registry.Registry
	url        string
	hs         *httptest.Server
	heartbeats atomic.Int64
	// told is heureka.ToldPeersHeader of each heartbeat, in order ("" for
	// none).
	mu   sync.Mutex
	told []string
}

// toldSince returns the headers of the heartbeats from the n-th on.
func (p *peer) toldSince(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.told[min(n, len(p.told)):])
}

// The real client reaches the other peers.
var _ agent.OtherPeers = (*client.Client)(nil)

func startPeer(t *testing.T) *peer {
	t.Helper()
	cfg := registry.DefaultConfig()
	reg, err := registry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.DefaultConfig(), reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.CloseStreams)
	p := &peer{reg: reg}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// PUT /eureka/apps/APP/ID is a heartbeat; .../status and
		// .../metadata have a fifth segment.
		if r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 3 {
			p.mu.Lock()
			p.told = append(p.told, r.Header.Get(heureka.ToldPeersHeader))
			p.mu.Unlock()
			p.heartbeats.Add(1)
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.hs = hs
	p.url = hs.URL + "/eureka"
	return p
}

// runAgent runs a DataNode agent, renewing every second with 3 s leases,
// through a real client over urls, until the test ends, and returns its
// configuration. It does not drain (DrainPeriod 0): no test here looks at
// the drain, and the cleanup need not wait for it on the wall clock.
func runAgent(t *testing.T, urls ...string) testConfig {
	t.Helper()
	ccfg := client.DefaultConfig()
	ccfg.URLs = urls
	reg, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := newTestConfig(t, hdfs.RoleDataNode)
	cfg.RenewInterval, cfg.LeaseDuration = time.Second, 3*time.Second
	cfg.DrainPeriod = 0
	ag, err := newAgent(cfg, reg, &fakeDaemon{alive: true, info: dataNodeInfo()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ag.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		reg.Close()
	})
	return cfg
}

// TestHeartbeatsReachEveryPeer: an agent with three registry URLs renews
// through all of them, and registers itself on the peers that never
// received the registration by replication. So a peer cut off from the
// agent's first peer still hears the node directly, and has no reason to
// expire it. (Real time: the agent's heartbeat period is 1 s, and the test
// waits for conditions, bounded at 20 s.)
func TestHeartbeatsReachEveryPeer(t *testing.T) {
	a, b, c := startPeer(t), startPeer(t), startPeer(t)
	cfg := runAgent(t, a.url, b.url, c.url)

	proctest.Retry(t, 20*time.Second, "3 heartbeats at each peer", func() error {
		if na, nb, nc := a.heartbeats.Load(), b.heartbeats.Load(), c.heartbeats.Load(); na < 3 || nb < 3 || nc < 3 {
			return fmt.Errorf("first peer %d, second peer %d, third peer %d", na, nb, nc)
		}
		return nil
	})
	for name, p := range map[string]*peer{"first": a, "second": b, "third": c} {
		if _, ok := p.reg.LastRenewal(strings.ToUpper(cfg.App()), cfg.InstanceID()); !ok {
			t.Errorf("the %s peer does not hold %s/%s", name, cfg.App(), cfg.InstanceID())
		}
	}
	// Every peer answered: the first peer's heartbeats name all three, so
	// that it does not replicate them to peers that hear the node anyway,
	// and the others' name all three as well.
	every := strings.Join([]string{a.url, b.url, c.url}, ",")
	proctest.Retry(t, 20*time.Second, "heartbeats naming every peer", func() error {
		for name, p := range map[string]*peer{"first": a, "second": b, "third": c} {
			if told := p.toldSince(0); !slices.Contains(told, every) {
				return fmt.Errorf("no heartbeat at the %s peer named every peer: %q", name, told)
			}
		}
		return nil
	})
	// The third peer stops answering: after at most one more heartbeat
	// naming it, the first peer's heartbeats name only the first two, so
	// that the first peer replicates them to the third.
	c.hs.Close()
	first := int(a.heartbeats.Load())
	proctest.Retry(t, 20*time.Second, "two heartbeats at the first peer naming only the first two", func() error {
		told := a.toldSince(first)
		if n := len(told); n < 3 || told[n-1] != a.url+","+b.url || told[n-2] != a.url+","+b.url {
			return fmt.Errorf("since the third peer stopped, the first was sent %q", told)
		}
		return nil
	})
	for i, told := range a.toldSince(first + 2) {
		if told != a.url+","+b.url {
			t.Errorf("heartbeat %d at the first peer, two or more after the third stopped, named %q", first+2+i, told)
		}
	}
}

// TestOneURLHeartbeatsOnePeer: an agent with a single registry URL (the
// packaged default) sends one heartbeat per beat, to that peer, naming
// that peer alone, so that the peer replicates it to every other: a
// heartbeat that claimed the others had been told was the bug of issue
// 39, and the other peers evicted the live node every lease.
func TestOneURLHeartbeatsOnePeer(t *testing.T) {
	a := startPeer(t)
	runAgent(t, a.url)
	proctest.Retry(t, 20*time.Second, "3 heartbeats", func() error {
		if n := a.heartbeats.Load(); n < 3 {
			return fmt.Errorf("%d heartbeats", n)
		}
		return nil
	})
	for i, told := range a.toldSince(0) {
		if told != a.url {
			t.Errorf("heartbeat %d named %q, want only the one URL %q", i, told, a.url)
		}
	}
}

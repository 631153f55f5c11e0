package agent_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
	"github.com/heureka-project/heureka/replication/replicationtest"
)

// peer is one real heureka registry, served in memory on the test's
// network, that counts the heartbeats it was sent directly. The peers of a
// test do not replicate to each other: they stand for peers cut apart by a
// partition.
type peer struct {
	reg        *registry.Registry
	url        string
	host       string // host:port on the network
	net        *replicationtest.MemNetwork
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

// stop takes the peer off the network: calls to it are refused.
func (p *peer) stop() { p.net.Serve(p.host, nil) }

// The real client reaches the other peers.
var _ agent.OtherPeers = (*client.Client)(nil)

// startPeer serves a real registry as name on network, in memory, so that
// a test in a testing/synctest bubble reaches it with no socket.
func startPeer(t *testing.T, network *replicationtest.MemNetwork, name string) *peer {
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
	p := &peer{reg: reg, host: name + ".test:8761", net: network}
	network.Serve(p.host, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	p.url = "http://" + p.host + "/eureka"
	return p
}

// roundTripper sends a real client's requests through a
// replication.Transport (here the test's in-memory network).
type roundTripper struct{ replication.Transport }

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return rt.Do(r) }

// runAgent runs a DataNode agent, renewing every second with 3 s leases,
// through a real client over urls on network, until the test ends, and
// returns its configuration. It does not drain (DrainPeriod 0): no test
// here looks at the drain.
func runAgent(t *testing.T, network *replicationtest.MemNetwork, urls ...string) testConfig {
	t.Helper()
	ccfg := client.DefaultConfig()
	ccfg.URLs = urls
	ccfg.Transport = roundTripper{network.Transport("agent.test")}
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
// expire it. (In a testing/synctest bubble: the agent's heartbeat period
// is 1 s, and each check runs at a known time on the bubble's clock.)
func TestHeartbeatsReachEveryPeer(t *testing.T) { synctest.Test(t, testHeartbeatsReachEveryPeer) }

func testHeartbeatsReachEveryPeer(t *testing.T) {
	network := replicationtest.NewMemNetwork()
	a, b, c := startPeer(t, network, "peer1"), startPeer(t, network, "peer2"), startPeer(t, network, "peer3")
	cfg := runAgent(t, network, a.url, b.url, c.url)

	// Three heartbeat periods: three heartbeats at each peer.
	time.Sleep(3 * cfg.RenewInterval)
	synctest.Wait()
	if na, nb, nc := a.heartbeats.Load(), b.heartbeats.Load(), c.heartbeats.Load(); na != 3 || nb != 3 || nc != 3 {
		t.Fatalf("after 3 heartbeat periods: first peer %d heartbeats, second %d, third %d; want 3 each", na, nb, nc)
	}
	for name, p := range map[string]*peer{"first": a, "second": b, "third": c} {
		if _, ok := p.reg.LastRenewal(strings.ToUpper(cfg.App()), cfg.InstanceID()); !ok {
			t.Errorf("the %s peer does not hold %s/%s", name, cfg.App(), cfg.InstanceID())
		}
	}
	// Every peer answered: the first peer's heartbeats name all three, so
	// that it does not replicate them to peers that hear the node anyway,
	// and the others' name all three as well.
	every := strings.Join([]string{a.url, b.url, c.url}, ",")
	for name, p := range map[string]*peer{"first": a, "second": b, "third": c} {
		if told := p.toldSince(0); !slices.Contains(told, every) {
			t.Errorf("no heartbeat at the %s peer named every peer: %q", name, told)
		}
	}
	// The third peer stops answering: after at most one more heartbeat
	// naming it, the first peer's heartbeats name only the first two, so
	// that the first peer replicates them to the third.
	c.stop()
	first := int(a.heartbeats.Load())
	time.Sleep(3 * cfg.RenewInterval)
	synctest.Wait()
	told := a.toldSince(first)
	if len(told) != 3 {
		t.Fatalf("in 3 heartbeat periods after the third peer stopped, the first was sent %d heartbeats, want 3: %q", len(told), told)
	}
	for i, h := range told[1:] {
		if h != a.url+","+b.url {
			t.Errorf("heartbeat %d at the first peer after the third stopped named %q, want the first two only", i+2, h)
		}
	}
}

// TestOneURLHeartbeatsOnePeer: an agent with a single registry URL (the
// packaged default) sends one heartbeat per beat, to that peer, naming
// that peer alone, so that the peer replicates it to every other: a
// heartbeat that claimed the others had been told was the bug of issue
// 39, and the other peers evicted the live node every lease.
func TestOneURLHeartbeatsOnePeer(t *testing.T) { synctest.Test(t, testOneURLHeartbeatsOnePeer) }

func testOneURLHeartbeatsOnePeer(t *testing.T) {
	network := replicationtest.NewMemNetwork()
	a := startPeer(t, network, "peer1")
	cfg := runAgent(t, network, a.url)
	time.Sleep(3 * cfg.RenewInterval)
	synctest.Wait()
	if n := a.heartbeats.Load(); n != 3 {
		t.Fatalf("%d heartbeats in 3 heartbeat periods, want 3", n)
	}
	for i, told := range a.toldSince(0) {
		if told != a.url {
			t.Errorf("heartbeat %d named %q, want only the one URL %q", i, told, a.url)
		}
	}
}

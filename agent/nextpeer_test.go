package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
	// marked counts the heartbeats that carried heureka.EveryPeerHeader.
	marked atomic.Int64
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
			p.heartbeats.Add(1)
			if r.Header.Get(heureka.EveryPeerHeader) == "true" {
				p.marked.Add(1)
			}
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.hs = hs
	p.url = hs.URL + "/eureka"
	return p
}

// TestHeartbeatsReachEveryPeer: an agent with three registry URLs renews
// through all of them, and registers itself on the peers that never
// received the registration by replication. So a peer cut off from the
// agent's first peer still hears the node directly, and has no reason to
// expire it. (Real time: the agent's heartbeat period is 1 s, and the test
// waits for conditions, bounded at 20 s.)
func TestHeartbeatsReachEveryPeer(t *testing.T) {
	a, b, c := startPeer(t), startPeer(t), startPeer(t)
	ccfg := client.DefaultConfig()
	ccfg.URLs = []string{a.url, b.url, c.url}
	reg, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cfg := newTestConfig(t, hdfs.RoleDataNode)
	cfg.RenewInterval, cfg.LeaseDuration = time.Second, 3*time.Second
	ag, err := newAgent(cfg, reg, &fakeDaemon{alive: true, info: dataNodeInfo()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ag.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

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
	// Every peer answered: the first peer's heartbeats are marked too, so
	// that it does not replicate them to peers that hear the node anyway.
	proctest.Retry(t, 20*time.Second, "a marked heartbeat at the first peer", func() error {
		if n := a.marked.Load(); n == 0 {
			return fmt.Errorf("%d of %d heartbeats at the first peer marked", n, a.heartbeats.Load())
		}
		return nil
	})
	// The third peer stops answering: the first peer's heartbeats go
	// unmarked again (after at most one more marked one), so that
	// replication carries them to it.
	c.hs.Close()
	total0, marked0 := a.heartbeats.Load(), a.marked.Load()
	proctest.Retry(t, 20*time.Second, "two unmarked heartbeats at the first peer", func() error {
		total, marked := a.heartbeats.Load()-total0, a.marked.Load()-marked0
		if total-marked < 2 {
			return fmt.Errorf("%d heartbeats at the first peer since the third stopped, %d of them marked", total, marked)
		}
		return nil
	})
}

// TestOneURLHeartbeatsOnePeer: with a single registry URL nothing changes:
// RenewOthers does nothing, and each heartbeat is one request.
func TestOneURLHeartbeatsOnePeer(t *testing.T) {
	a := startPeer(t)
	ccfg := client.DefaultConfig()
	ccfg.URLs = []string{a.url}
	reg, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	ctx := context.Background()
	if err := reg.RenewOthers(ctx, "HDFS-DATANODE.PROD", "dn1", nil); err != nil {
		t.Fatalf("RenewOthers with one URL: %v, want nil", err)
	}
	if n := a.heartbeats.Load(); n != 0 {
		t.Fatalf("RenewOthers with one URL sent %d heartbeat(s), want 0", n)
	}
}

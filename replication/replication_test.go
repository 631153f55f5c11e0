package replication_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

// node is one in-process registry server with a replicator, on loopback.
type node struct {
	name string
	url  string // Eureka base URL
	reg  *registry.Registry
	rep  *replication.Replicator
	id   string
	cut  atomic.Bool // partitioned: every request to or from it fails
	stop func()
}

func (n *node) partition(on bool) {
	n.cut.Store(on)
	if on {
		cutNodes.Store(n.id, true)
	} else {
		cutNodes.Delete(n.id)
	}
}

// cutNodes holds the node IDs of the nodes currently cut off.
var cutNodes sync.Map

// handler drops every request while the node is cut off, and every request
// from a node that is cut off: a partition in both directions.
func (n *node) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, fromCut := cutNodes.Load(r.Header.Get(replication.NodeHeader))
		if n.cut.Load() || fromCut {
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// cluster starts n nodes that list every node (themselves included) as
// peers.
func startCluster(t *testing.T, n int, mod func(*replication.Config)) []*node {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	nodes := make([]*node, n)
	lns := make([]net.Listener, n)
	var urls []string
	for i := range nodes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
		nodes[i] = &node{name: fmt.Sprintf("peer%d", i+1), url: "http://" + ln.Addr().String() + "/eureka"}
		urls = append(urls, nodes[i].url)
	}
	for i, nd := range nodes {
		startNode(t, nd, lns[i], urls, logger, mod)
	}
	return nodes
}

func startNode(t *testing.T, nd *node, ln net.Listener, peers []string, logger *slog.Logger, mod func(*replication.Config)) {
	t.Helper()
	rcfg := registry.DefaultConfig()
	rcfg.Logger = logger.With("node", nd.name)
	reg, err := registry.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	id := nd.name + "-" + fmt.Sprint(time.Now().UnixNano())
	nd.id = id
	pcfg := replication.DefaultConfig()
	pcfg.Peers = peers
	pcfg.NodeID = id
	pcfg.SyncTimeout = 2 * time.Second
	pcfg.AntiEntropyInterval = 200 * time.Millisecond
	pcfg.Logger = rcfg.Logger
	if mod != nil {
		mod(&pcfg)
	}
	rep, err := replication.New(pcfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetForwarder(rep.Forward)
	hcfg := httpapi.DefaultConfig()
	hcfg.NodeID = id
	hcfg.Ready = rep.Ready
	api, err := httpapi.New(hcfg, reg, rcfg.Logger)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nd.handler(api.Handler()))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = reg.Run(ctx); done <- struct{}{} }()
	go func() { _ = rep.Run(ctx); done <- struct{}{} }()
	nd.reg, nd.rep = reg, rep
	nd.stop = func() {
		cancel()
		<-done
		<-done
		api.CloseStreams()
		hs.Close()
	}
	t.Cleanup(func() {
		if nd.stop != nil {
			nd.stop()
			nd.stop = nil
		}
	})
}

func dn(id string, mods ...func(*heureka.Instance)) *heureka.Instance {
	in := &heureka.Instance{ID: id, App: "HDFS-DATANODE.PROD", HostName: id + ".example", IPAddr: "127.0.0.1",
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
		Metadata: map[string]string{"rack": "/r1"}}
	for _, m := range mods {
		m(in)
	}
	in.Normalize()
	return in
}

// eventually polls cond every 10 ms for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func status(nd *node, id string) heureka.Status {
	in, ok := nd.reg.Snapshot().Instance("HDFS-DATANODE.PROD", id)
	if !ok {
		return ""
	}
	return in.Status
}

func everywhere(nodes []*node, id string, want heureka.Status) func() bool {
	return func() bool {
		for _, nd := range nodes {
			if status(nd, id) != want {
				return false
			}
		}
		return true
	}
}

func TestWritesReachEveryPeer(t *testing.T) {
	nodes := startCluster(t, 3, nil)
	for _, nd := range nodes {
		eventually(t, nd.name+" ready", nd.rep.Ready)
	}
	if err := nodes[0].reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a registered on every peer", everywhere(nodes, "a", heureka.StatusUp))

	if err := nodes[1].reg.SetStatus("HDFS-DATANODE.PROD", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the override seen everywhere", everywhere(nodes, "a", heureka.StatusOutOfService))

	if err := nodes[2].reg.UpdateMetadata("HDFS-DATANODE.PROD", "a", map[string]string{"disk_used": "42"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the metadata everywhere", func() bool {
		for _, nd := range nodes {
			in, ok := nd.reg.Snapshot().Instance("HDFS-DATANODE.PROD", "a")
			if !ok || in.Metadata["disk_used"] != "42" {
				return false
			}
		}
		return true
	})

	if err := nodes[2].reg.DeleteStatusOverride("HDFS-DATANODE.PROD", "a", heureka.StatusUp, 0, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the override removed everywhere", everywhere(nodes, "a", heureka.StatusUp))

	if err := nodes[2].reg.Cancel("HDFS-DATANODE.PROD", "a", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a gone everywhere", everywhere(nodes, "a", ""))

	// Every node recognised itself in the peer list and skipped it.
	for _, nd := range nodes {
		selves := 0
		for _, p := range nd.rep.Status() {
			if p.Self {
				selves++
			}
		}
		if selves != 1 {
			t.Errorf("%s: %d peers marked self, want 1: %+v", nd.name, selves, nd.rep.Status())
		}
	}
}

func TestHeartbeatsKeepPeersLeasesAlive(t *testing.T) {
	nodes := startCluster(t, 2, nil)
	for _, nd := range nodes {
		eventually(t, nd.name+" ready", nd.rep.Ready)
	}
	short := func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 1, 2 }
	if err := nodes[0].reg.Register(dn("a", short), false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a on peer 2", everywhere(nodes, "a", heureka.StatusUp))
	// Renew on peer 1 only, for three lease periods: peer 2 must keep it.
	for range 10 {
		if _, err := nodes[0].reg.Renew(registry.RenewRequest{App: "HDFS-DATANODE.PROD", ID: "a"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if status(nodes[1], "a") != heureka.StatusUp {
			t.Fatal("peer 2 let the lease expire although peer 1 forwarded the renewals")
		}
	}
}

func TestStartupSyncCopiesTheRegistry(t *testing.T) {
	nodes := startCluster(t, 1, nil)
	eventually(t, "peer1 ready", nodes[0].rep.Ready)
	for i := range 50 {
		if err := nodes[0].reg.Register(dn(fmt.Sprint(i)), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := nodes[0].reg.SetStatus("HDFS-DATANODE.PROD", "7", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	late := &node{name: "late", url: "http://" + ln.Addr().String() + "/eureka"}
	startNode(t, late, ln, []string{nodes[0].url, late.url}, logger, nil)
	eventually(t, "the new peer ready", late.rep.Ready)
	if n := late.reg.Snapshot().Len(); n != 50 {
		t.Fatalf("new peer holds %d instances when ready, want 50", n)
	}
	if st := status(late, "7"); st != heureka.StatusOutOfService {
		t.Fatalf("synced status %s, want the override OUT_OF_SERVICE", st)
	}
	// The override itself came along: a client renewal keeps it.
	if _, err := late.reg.Renew(registry.RenewRequest{App: "HDFS-DATANODE.PROD", ID: "7"}); err != nil {
		t.Fatal(err)
	}
	if st := status(late, "7"); st != heureka.StatusOutOfService {
		t.Fatalf("status %s after renew, want OUT_OF_SERVICE", st)
	}
}

func TestStartupSyncGivesUpAndStartsEmpty(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String() + "/eureka"
	dead.Close()
	nd := &node{name: "alone", url: "http://" + ln.Addr().String() + "/eureka"}
	startNode(t, nd, ln, []string{deadURL}, logger, func(c *replication.Config) { c.SyncTimeout = 300 * time.Millisecond })
	eventually(t, "ready after the sync timeout", nd.rep.Ready)
	if msg := nd.rep.SyncResult(); msg == "" || nd.reg.Snapshot().Len() != 0 {
		t.Fatalf("sync result %q with %d instances", msg, nd.reg.Snapshot().Len())
	}
}

func TestPartitionHealsWithoutLossOrResurrection(t *testing.T) {
	nodes := startCluster(t, 3, nil)
	for _, nd := range nodes {
		eventually(t, nd.name+" ready", nd.rep.Ready)
	}
	for _, id := range []string{"stay", "cancelled", "overridden"} {
		if err := nodes[0].reg.Register(dn(id), false); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "all three everywhere", func() bool {
		return everywhere(nodes, "stay", heureka.StatusUp)() && everywhere(nodes, "cancelled", heureka.StatusUp)()
	})

	// Peer 3 is cut off. Meanwhile peer 1 cancels one instance, registers a
	// new one, and peer 2 drains another.
	nodes[2].partition(true)
	if err := nodes[0].reg.Cancel("HDFS-DATANODE.PROD", "cancelled", false); err != nil {
		t.Fatal(err)
	}
	if err := nodes[0].reg.Register(dn("new"), false); err != nil {
		t.Fatal(err)
	}
	if err := nodes[1].reg.SetStatus("HDFS-DATANODE.PROD", "overridden", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // several failed sends and anti-entropy rounds
	if status(nodes[2], "cancelled") != heureka.StatusUp || status(nodes[2], "new") != "" {
		t.Fatal("the partition leaked")
	}

	nodes[2].partition(false)
	eventually(t, "convergence after the partition healed", func() bool {
		return everywhere(nodes, "stay", heureka.StatusUp)() &&
			everywhere(nodes, "new", heureka.StatusUp)() &&
			everywhere(nodes, "overridden", heureka.StatusOutOfService)() &&
			everywhere(nodes, "cancelled", "")()
	})
	// And it stays that way through more anti-entropy rounds.
	time.Sleep(time.Second)
	if !everywhere(nodes, "cancelled", "")() {
		t.Fatal("the cancelled instance was resurrected")
	}
}

func TestOverflowedQueueIsResyncedInFull(t *testing.T) {
	nodes := startCluster(t, 2, func(c *replication.Config) {
		c.QueueSize = 5
		c.AntiEntropyInterval = time.Hour // only the resync may repair
	})
	for _, nd := range nodes {
		eventually(t, nd.name+" ready", nd.rep.Ready)
	}
	nodes[1].partition(true)
	for i := range 20 {
		if err := nodes[0].reg.Register(dn(fmt.Sprint(i)), false); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "peer 1 to give up the queue", func() bool {
		for _, p := range nodes[0].rep.Status() {
			if !p.Self && p.Resync {
				return true
			}
		}
		return false
	})
	nodes[1].partition(false)
	// A write wakes the sender; the resync sends everything.
	if err := nodes[0].reg.Register(dn("last"), false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "peer 2 holds all 21", func() bool { return nodes[1].reg.Snapshot().Len() == 21 })
}

func TestPeerRecognisedAsSelfByNodeID(t *testing.T) {
	// The server is listed under another spelling of its own address.
	nodes := startCluster(t, 1, nil)
	eventually(t, "ready", nodes[0].rep.Ready)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	other := "http://localhost:" + port + "/eureka/"
	nd := &node{name: "self-listed", url: "http://" + ln.Addr().String() + "/eureka"}
	startNode(t, nd, ln, []string{other, nodes[0].url}, logger, nil)
	eventually(t, "ready", nd.rep.Ready)
	if err := nd.reg.Register(dn("x"), false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "localhost URL marked self", func() bool {
		for _, p := range nd.rep.Status() {
			if p.URL == "http://localhost:"+port+"/eureka" && p.Self {
				return true
			}
		}
		return false
	})
}

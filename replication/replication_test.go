package replication_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/internal/testclock"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
	"github.com/heureka-project/heureka/replication/replicationtest"
	"github.com/prometheus/client_golang/prometheus"
)

// node is one in-process registry server with a replicator, on an
// in-memory network.
type node struct {
	name string
	host string // host:port on the network
	url  string // Eureka base URL
	net  *replicationtest.MemNetwork
	reg  *registry.Registry
	rep  *replication.Replicator
	api  http.Handler
	stop func()
}

// partition cuts the node off from every other (on) or reconnects it.
func (n *node) partition(on bool) { n.net.Partition(n.host, on) }

// options adjust a node's registry and replicator before they start.
type options struct {
	repl func(*replication.Config)
	reg  func(*registry.Config)
	api  func(*httpapi.Config)
	// beforeRun writes to the registry once it forwards to the
	// replicator and before either runs.
	beforeRun func(*registry.Registry)
}

// The tests run in testing/synctest bubbles: a MemNetwork has no sockets,
// so replication's waits (batch delays, retries, anti-entropy rounds,
// outages) run on the bubble's clock, and each check runs at a known time
// on it (after), not whenever a poll of the wall clock sees it.
const (
	// oneBatch is how long a write waits to gather a batch before it goes
	// to the peers: the default BatchDelay, which startNode keeps.
	oneBatch = 10 * time.Millisecond
	// antiEntropy is the AntiEntropyInterval startNode sets.
	antiEntropy = 200 * time.Millisecond
	// syncAlone is when the start-up sync of a server listed alone (with
	// itself) is over: its first attempt finds itself, the second, after a
	// 200 ms pause, finds nobody else to copy from.
	syncAlone = 200 * time.Millisecond
	// syncGivenUp is when the start-up sync of a server that no peer
	// answers is over: the first attempt after startNode's SyncTimeout
	// (2 s), with pauses of 200 ms, 400 ms, ... between attempts, gives up.
	syncGivenUp = 3 * time.Second
	// retryUnreachable is the longest a sender waits before it tries a
	// peer that did not answer again (package replication's ceiling).
	retryUnreachable = time.Second
)

// after lets d pass on the bubble's clock, waits until every goroutine in
// the bubble is blocked, and fails t unless cond then holds.
func after(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	time.Sleep(d)
	synctest.Wait()
	if !cond() {
		t.Fatalf("after %v: not %s", d, what)
	}
}

// mustBeReady lets d pass on the bubble's clock, waits until every
// goroutine in it is blocked, and fails t unless every node is ready.
func mustBeReady(t *testing.T, d time.Duration, nodes ...*node) {
	t.Helper()
	time.Sleep(d)
	synctest.Wait()
	for _, nd := range nodes {
		if !nd.rep.Ready() {
			t.Fatalf("%s not ready: %q", nd.name, nd.rep.SyncResult())
		}
	}
}

// startCluster starts n nodes on one network; each lists every node
// (itself included) as a peer.
func startCluster(t *testing.T, n int, opt options) []*node {
	t.Helper()
	nodes, urls := newNodes(replicationtest.NewMemNetwork(), n)
	startNodes(t, nodes, urls, func(*node) options { return opt })
	return nodes
}

// newNodes returns n nodes on network, peer1 to peerN, and their URLs.
func newNodes(network *replicationtest.MemNetwork, n int) ([]*node, []string) {
	nodes := make([]*node, n)
	var urls []string
	for i := range nodes {
		nodes[i] = newNode(network, fmt.Sprintf("peer%d", i+1))
		urls = append(urls, nodes[i].url)
	}
	return nodes, urls
}

// startNodes starts nodes with peers, each with the options opt gives it.
// Every node is on the network before any runs, so that each start-up
// sync finds every peer answering at its first attempt, whichever
// goroutine runs first.
func startNodes(t *testing.T, nodes []*node, peers []string, opt func(*node) options) {
	t.Helper()
	var runs []func()
	for _, nd := range nodes {
		runs = append(runs, setUpNode(t, nd, peers, opt(nd)))
	}
	for _, run := range runs {
		run()
	}
}

func newNode(network *replicationtest.MemNetwork, name string) *node {
	host := name + ".test:8761"
	return &node{name: name, host: host, url: "http://" + host + "/eureka", net: network}
}

func startNode(t *testing.T, nd *node, peers []string, opt options) {
	t.Helper()
	setUpNode(t, nd, peers, opt)()
}

// setUpNode builds nd's registry, replicator and API, and puts it on the
// network; the function it returns runs them until the test ends.
func setUpNode(t *testing.T, nd *node, peers []string, opt options) (run func()) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})).With("node", nd.name)
	rcfg := registry.DefaultConfig()
	rcfg.Logger = logger
	if opt.reg != nil {
		opt.reg(&rcfg)
	}
	reg, err := registry.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	pcfg := replication.DefaultConfig()
	pcfg.Peers = peers
	pcfg.NodeID = nd.name
	pcfg.SyncTimeout = 2 * time.Second
	pcfg.AntiEntropyInterval = antiEntropy
	pcfg.Transport = nd.net.Transport(nd.host)
	pcfg.Logger = logger
	if opt.repl != nil {
		opt.repl(&pcfg)
	}
	rep, err := replication.New(pcfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetForwarder(rep.Forward)
	hcfg := httpapi.DefaultConfig()
	hcfg.NodeID = nd.name
	hcfg.Ready = rep.Ready
	if opt.api != nil {
		opt.api(&hcfg)
	}
	api, err := httpapi.New(hcfg, reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	nd.api = api.Handler()
	nd.net.Serve(nd.host, nd.api)
	if opt.beforeRun != nil {
		opt.beforeRun(reg)
	}
	nd.reg, nd.rep = reg, rep
	return func() { runNode(t, nd, api) }
}

// runNode runs nd's registry and replicator until the test ends.
func runNode(t *testing.T, nd *node, api *httpapi.Server) {
	reg, rep := nd.reg, nd.rep
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = reg.Run(ctx); done <- struct{}{} }()
	go func() { _ = rep.Run(ctx); done <- struct{}{} }()
	nd.stop = func() {
		cancel()
		<-done
		<-done
		api.CloseStreams()
		nd.net.Serve(nd.host, nil)
	}
	t.Cleanup(func() {
		if nd.stop != nil {
			nd.stop()
			nd.stop = nil
		}
	})
}

// peerStatus is what nd says about the peer at url.
func peerStatus(nd *node, url string) replication.PeerStatus {
	for _, p := range nd.rep.Status() {
		if p.URL == url {
			return p
		}
	}
	return replication.PeerStatus{}
}

// quiescent reports whether every node has delivered everything to every
// other: nothing queued, no resync pending, and every peer it has called
// reachable (one never called has no Since yet).
func quiescent(nodes []*node) func() bool {
	return func() bool {
		for _, nd := range nodes {
			for _, p := range nd.rep.Status() {
				if !p.Self && (!(p.Reachable || p.Since.IsZero()) || p.Queued > 0 || p.Resync) {
					return false
				}
			}
		}
		return true
	}
}

func dn(id string, mods ...func(*heureka.Instance)) *heureka.Instance {
	in := &heureka.Instance{ID: id, App: "HDFS-DATANODE.PROD", HostName: id + ".example", IPAddr: "127.0.0.1",
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
		Metadata: heureka.MetadataOf(map[string]string{"rack": "/r1"})}
	for _, m := range mods {
		m(in)
	}
	in.Normalize()
	return in
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

func TestWritesReachEveryPeer(t *testing.T) { synctest.Test(t, testWritesReachEveryPeer) }

func testWritesReachEveryPeer(t *testing.T) {
	nodes := startCluster(t, 3, options{})
	mustBeReady(t, 0, nodes...)
	if err := nodes[0].reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "a registered on every peer", everywhere(nodes, "a", heureka.StatusUp))

	if err := nodes[1].reg.SetStatus("HDFS-DATANODE.PROD", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "the override seen everywhere", everywhere(nodes, "a", heureka.StatusOutOfService))

	if err := nodes[2].reg.UpdateMetadata("HDFS-DATANODE.PROD", "a", map[string]string{"disk_used": "42"}); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "the metadata everywhere", func() bool {
		for _, nd := range nodes {
			in, ok := nd.reg.Snapshot().Instance("HDFS-DATANODE.PROD", "a")
			if !ok || in.Metadata.Get("disk_used") != "42" {
				return false
			}
		}
		return true
	})

	if err := nodes[2].reg.DeleteStatusOverride("HDFS-DATANODE.PROD", "a", heureka.StatusUp, 0, false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "the override removed everywhere", everywhere(nodes, "a", heureka.StatusUp))

	if err := nodes[2].reg.Cancel(registry.CancelRequest{App: "HDFS-DATANODE.PROD", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "a gone everywhere", everywhere(nodes, "a", ""))

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
	synctest.Test(t, testHeartbeatsKeepPeersLeasesAlive)
}

func testHeartbeatsKeepPeersLeasesAlive(t *testing.T) {
	// Both registries read one clock that the test moves; replication
	// runs on the bubble's, and each renewal arrives one batch delay later.
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	nodes := startCluster(t, 2, options{reg: func(c *registry.Config) { c.Clock = clock.Now }})
	mustBeReady(t, 0, nodes...)
	short := func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 1, 2 }
	if err := nodes[0].reg.Register(dn("a", short), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "a on peer 2", everywhere(nodes, "a", heureka.StatusUp))
	renewedAt := func(nd *node) int64 {
		app, ok := nd.reg.LiveApp("HDFS-DATANODE.PROD")
		if !ok || len(app.Instances) != 1 {
			return 0
		}
		return app.Instances[0].Lease.LastRenewalTimestamp
	}
	// Renew on peer 1 only, for three lease periods: peer 2 must keep it.
	for range 20 {
		clock.Advance(300 * time.Millisecond)
		if _, err := nodes[0].reg.Renew(registry.RenewRequest{App: "HDFS-DATANODE.PROD", ID: "a"}); err != nil {
			t.Fatal(err)
		}
		after(t, oneBatch, "the renewal on peer 2", func() bool { return renewedAt(nodes[1]) == clock.Now().UnixMilli() })
		nodes[1].reg.Tick()
		if status(nodes[1], "a") != heureka.StatusUp {
			t.Fatal("peer 2 let the lease expire although peer 1 forwarded the renewals")
		}
	}
	// Without renewals the lease ends on peer 2 too: the check above could fail.
	clock.Advance(3 * time.Second)
	nodes[1].reg.Tick()
	if status(nodes[1], "a") != "" && !nodes[1].reg.Protection().Active {
		t.Fatal("peer 2 kept a lease nobody renewed")
	}
}

func TestStartupSyncCopiesTheRegistry(t *testing.T) {
	synctest.Test(t, testStartupSyncCopiesTheRegistry)
}

func testStartupSyncCopiesTheRegistry(t *testing.T) {
	nodes := startCluster(t, 1, options{})
	mustBeReady(t, syncAlone, nodes[0])
	for i := range 50 {
		if err := nodes[0].reg.Register(dn(fmt.Sprint(i)), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := nodes[0].reg.SetStatus("HDFS-DATANODE.PROD", "7", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	late := newNode(nodes[0].net, "late")
	startNode(t, late, []string{nodes[0].url, late.url}, options{})
	mustBeReady(t, 0, late)
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
	synctest.Test(t, testStartupSyncGivesUpAndStartsEmpty)
}

func testStartupSyncGivesUpAndStartsEmpty(t *testing.T) {
	nd := newNode(replicationtest.NewMemNetwork(), "alone")
	deadURL := "http://dead.test:8761/eureka" // nothing serves it
	const timeout = 300 * time.Millisecond
	startNode(t, nd, []string{deadURL}, options{repl: func(c *replication.Config) { c.SyncTimeout = timeout }})
	notReady := func() bool { return !nd.rep.Ready() }
	after(t, timeout-time.Millisecond, "still waiting for a peer just before the sync timeout", notReady)
	// The attempts are 200 ms apart, then 400, ... up to 2 s: the one after
	// the timeout gives up.
	after(t, 2*time.Second, "ready after the sync timeout", nd.rep.Ready)
	if msg := nd.rep.SyncResult(); msg == "" || nd.reg.Snapshot().Len() != 0 {
		t.Fatalf("sync result %q with %d instances", msg, nd.reg.Snapshot().Len())
	}
}

func TestPartitionHealsWithoutLossOrResurrection(t *testing.T) {
	synctest.Test(t, testPartitionHealsWithoutLossOrResurrection)
}

func testPartitionHealsWithoutLossOrResurrection(t *testing.T) {
	nodes := startCluster(t, 3, options{})
	mustBeReady(t, 0, nodes...)
	for _, id := range []string{"stay", "cancelled", "overridden"} {
		if err := nodes[0].reg.Register(dn(id), false); err != nil {
			t.Fatal(err)
		}
	}
	after(t, oneBatch, "all three everywhere", func() bool {
		return everywhere(nodes, "stay", heureka.StatusUp)() && everywhere(nodes, "cancelled", heureka.StatusUp)()
	})

	// Peer 3 is cut off. Meanwhile peer 1 cancels one instance, registers a
	// new one, and peer 2 drains another.
	nodes[2].partition(true)
	if err := nodes[0].reg.Cancel(registry.CancelRequest{App: "HDFS-DATANODE.PROD", ID: "cancelled"}); err != nil {
		t.Fatal(err)
	}
	if err := nodes[0].reg.Register(dn("new"), false); err != nil {
		t.Fatal(err)
	}
	if err := nodes[1].reg.SetStatus("HDFS-DATANODE.PROD", "overridden", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	// Each has a write for peer 3: its first attempt finds it cut off.
	after(t, oneBatch, "peers 1 and 2 to find peer 3 cut off", func() bool {
		for _, nd := range nodes[:2] {
			st := peerStatus(nd, nodes[2].url)
			if st.Reachable || !strings.Contains(st.LastError, "partitioned") {
				return false
			}
		}
		return true
	})
	if status(nodes[2], "cancelled") != heureka.StatusUp || status(nodes[2], "new") != "" {
		t.Fatal("the partition leaked")
	}

	nodes[2].partition(false)
	after(t, retryUnreachable, "convergence after the partition healed", func() bool {
		return everywhere(nodes, "stay", heureka.StatusUp)() &&
			everywhere(nodes, "new", heureka.StatusUp)() &&
			everywhere(nodes, "overridden", heureka.StatusOutOfService)() &&
			everywhere(nodes, "cancelled", "")()
	})
	// And it stays that way once everything in flight has been delivered.
	after(t, retryUnreachable, "every queue drained", quiescent(nodes))
	if !everywhere(nodes, "cancelled", "")() {
		t.Fatal("the cancelled instance was resurrected")
	}
}

// TestLateRenewalDoesNotUndoACancel: a peer cut off while a client
// cancels through another still takes that client's last renewal (sent
// before the cancel, answered after it, as by a paused server), and the
// peer that took the cancel dies before it could tell the late one. When
// the late peer is back, its heartbeat finds nothing on the third, and it
// sends its copy as a registration, as Eureka's peers do; the cancel must
// stand on both survivors.
func TestLateRenewalDoesNotUndoACancel(t *testing.T) {
	synctest.Test(t, testLateRenewalDoesNotUndoACancel)
}

func testLateRenewalDoesNotUndoACancel(t *testing.T) {
	nodes := startCluster(t, 3, options{})
	mustBeReady(t, 0, nodes...)
	if err := nodes[0].reg.Register(dn("late"), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "late everywhere", everywhere(nodes, "late", heureka.StatusUp))

	nodes[0].partition(true)
	if err := nodes[1].reg.Cancel(registry.CancelRequest{App: "HDFS-DATANODE.PROD", ID: "late"}); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "the cancel on peer 3", func() bool { return status(nodes[2], "late") == "" })
	if _, err := nodes[0].reg.Renew(registry.RenewRequest{App: "HDFS-DATANODE.PROD", ID: "late"}); err != nil {
		t.Fatal(err)
	}
	nodes[1].stop() // with the cancel still queued for peer 1
	nodes[1].stop = nil
	nodes[0].partition(false)
	live := []*node{nodes[0], nodes[2]}
	after(t, retryUnreachable, "the cancel on both survivors", everywhere(live, "late", ""))
	// Anti-entropy compares digests every 200 ms: give it a few rounds
	// after the late peer's heartbeat and registration have gone out.
	time.Sleep(time.Second)
	synctest.Wait()
	for _, nd := range live {
		if st := status(nd, "late"); st != "" {
			t.Errorf("%s serves the cancelled instance again (%s)", nd.name, st)
		}
	}
}

func TestOverflowedQueueIsResyncedInFull(t *testing.T) {
	synctest.Test(t, testOverflowedQueueIsResyncedInFull)
}

func testOverflowedQueueIsResyncedInFull(t *testing.T) {
	nodes := startCluster(t, 2, options{repl: func(c *replication.Config) {
		c.QueueSize = 5
		c.AntiEntropyInterval = time.Hour // only the resync may repair
	}})
	mustBeReady(t, 0, nodes...)
	nodes[1].partition(true)
	for i := range 20 {
		if err := nodes[0].reg.Register(dn(fmt.Sprint(i)), false); err != nil {
			t.Fatal(err)
		}
	}
	after(t, oneBatch, "peer 1 to give up the queue", func() bool {
		for _, p := range nodes[0].rep.Status() {
			if !p.Self && p.Resync {
				return true
			}
		}
		return false
	})
	// Six writes passed the limit of five: every one queued was dropped,
	// and /metrics says so, with the peer down.
	got := peerMetrics(t, nodes[0].rep)
	if d := got["heureka_replication_dropped_total|"+nodes[1].url]; d < 6 {
		t.Errorf("heureka_replication_dropped_total for %s = %v, want at least 6 (queue size 5, 20 writes); all: %v", nodes[1].url, d, got)
	}
	after(t, 0, "heureka_peer_up 0 for the partitioned peer", func() bool {
		up, ok := peerMetrics(t, nodes[0].rep)["heureka_peer_up|"+nodes[1].url]
		return ok && up == 0
	})
	if _, ok := got["heureka_peer_up|"+nodes[0].url]; ok {
		t.Errorf("the server's own URL is exported as a peer: %v", got)
	}
	nodes[1].partition(false)
	// A write wakes the sender; the resync sends everything.
	if err := nodes[0].reg.Register(dn("last"), false); err != nil {
		t.Fatal(err)
	}
	after(t, retryUnreachable, "peer 2 holds all 21", func() bool { return nodes[1].reg.Snapshot().Len() == 21 })
}

func TestPeerRecognisedAsSelfByNodeID(t *testing.T) {
	synctest.Test(t, testPeerRecognisedAsSelfByNodeID)
}

func testPeerRecognisedAsSelfByNodeID(t *testing.T) {
	// The server is listed under another spelling of its own address.
	nodes := startCluster(t, 1, options{})
	mustBeReady(t, syncAlone, nodes[0])
	nd := newNode(nodes[0].net, "self-listed")
	const port = "8761"
	other := "http://localhost:" + port + "/eureka/"
	startNode(t, nd, []string{other, nodes[0].url}, options{})
	nd.net.Serve("localhost:"+port, nd.api) // the same server under another name
	mustBeReady(t, 0, nd)
	if err := nd.reg.Register(dn("x"), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "localhost URL marked self", func() bool {
		for _, p := range nd.rep.Status() {
			if p.URL == "http://localhost:"+port+"/eureka" && p.Self {
				return true
			}
		}
		return false
	})
}

func TestLongOutageIsResyncedInFull(t *testing.T) { synctest.Test(t, testLongOutageIsResyncedInFull) }

func testLongOutageIsResyncedInFull(t *testing.T) {
	// The outage lasts as long as the test says on the bubble's clock. The
	// registries' clock stands still, so that no lease ends meanwhile:
	// leases are not under test.
	const maxOutage = 5 * time.Minute
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	nodes := startCluster(t, 2, options{
		reg: func(c *registry.Config) { c.Clock = clock.Now },
		repl: func(c *replication.Config) {
			c.MaxOutage = maxOutage
			c.AntiEntropyInterval = time.Hour // only the resync may repair
		},
	})
	mustBeReady(t, 0, nodes...)
	nodes[1].partition(true)
	if err := nodes[0].reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "peer 1 to find peer 2 unreachable", func() bool {
		st := peerStatus(nodes[0], nodes[1].url)
		return !st.Reachable && st.Queued == 1
	})
	if peerStatus(nodes[0], nodes[1].url).Resync {
		t.Fatal("a short outage already asks for a full resync")
	}
	// The outage began with the first failed attempt, one batch delay in.
	after(t, maxOutage-time.Second, "peer 1 to keep the queue until MaxOutage", func() bool {
		st := peerStatus(nodes[0], nodes[1].url)
		return !st.Resync && st.Queued == 1
	})
	after(t, time.Second+retryUnreachable, "peer 1 to give up the queue after MaxOutage", func() bool {
		st := peerStatus(nodes[0], nodes[1].url)
		return st.Resync && st.Queued == 0
	})
	nodes[1].partition(false)
	if err := nodes[0].reg.Register(dn("b"), false); err != nil { // wakes the sender
		t.Fatal(err)
	}
	after(t, retryUnreachable, "peer 2 to hold a", everywhere(nodes, "a", heureka.StatusUp))
	after(t, 0, "peer 2 to hold b", everywhere(nodes, "b", heureka.StatusUp))
}

// A backlog of whole batches goes out batch after batch, without a
// BatchDelay before each: the delay gathers a burst, and a backlog has
// gathered already. Waiting before every batch capped a peer's
// replication at BatchSize writes per BatchDelay plus a round trip.
func TestABacklogGoesOutWithoutBatchDelays(t *testing.T) {
	synctest.Test(t, testABacklogGoesOutWithoutBatchDelays)
}

func testABacklogGoesOutWithoutBatchDelays(t *testing.T) {
	network := replicationtest.NewMemNetwork()
	first, second := newNode(network, "peer1"), newNode(network, "peer2")
	peers := []string{first.url, second.url}
	repl := func(c *replication.Config) {
		c.BatchSize = 10
		c.BatchDelay = time.Hour
		c.AntiEntropyInterval = time.Hour // only the batches may deliver
	}
	startNode(t, second, peers, options{repl: repl})
	// Peer 2's start-up sync must be over (it finds no one), or it would
	// copy the 50 from peer 1 itself.
	mustBeReady(t, syncGivenUp, second)
	startNode(t, first, peers, options{repl: repl, beforeRun: func(reg *registry.Registry) {
		for i := range 50 {
			if err := reg.Register(dn(fmt.Sprint(i)), false); err != nil {
				t.Fatal(err)
			}
		}
	}})
	after(t, 0, "peer 2 to hold all 50, five batches of 10, at once", func() bool {
		return second.reg.Snapshot().Len() == 50
	})
}

func TestConfigZeroIsAValue(t *testing.T) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	base := replication.DefaultConfig()
	base.NodeID = "me"
	for _, c := range []struct {
		name string
		mod  func(*replication.Config)
		want string // "" = valid
	}{
		{"defaults", func(*replication.Config) {}, ""},
		{"no batch delay", func(c *replication.Config) { c.BatchDelay = 0 }, ""},
		{"no sync wait", func(c *replication.Config) { c.SyncTimeout = 0 }, ""},
		{"zero batch", func(c *replication.Config) { c.BatchSize = 0 }, "BatchSize 0"},
		{"zero request timeout", func(c *replication.Config) { c.RequestTimeout = 0 }, "RequestTimeout 0s"},
		{"zero anti-entropy", func(c *replication.Config) { c.AntiEntropyInterval = 0 }, "AntiEntropyInterval 0s"},
		{"negative delay", func(c *replication.Config) { c.BatchDelay = -time.Second }, "BatchDelay -1s"},
		{"no clock", func(c *replication.Config) { c.Clock = nil }, "Clock: is nil"},
		{"no logger", func(c *replication.Config) { c.Logger = nil }, "Logger: is nil"},
	} {
		cfg := base
		c.mod(&cfg)
		_, err := replication.New(cfg, reg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}

// peerMetrics gathers rep's collector: "name|peer" to value.
func peerMetrics(t *testing.T, rep *replication.Replicator) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(rep.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var v float64
			switch {
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			}
			out[f.GetName()+"|"+m.GetLabel()[0].GetValue()] = v
		}
	}
	return out
}

// TestIdlePeerReachabilityFollowsAntiEntropy: a peer this server never has
// a write for is still called for digests, and those calls say whether it
// is reachable (heureka_peer_up must not report an idle peer as down).
func TestIdlePeerReachabilityFollowsAntiEntropy(t *testing.T) {
	synctest.Test(t, testIdlePeerReachabilityFollowsAntiEntropy)
}

func testIdlePeerReachabilityFollowsAntiEntropy(t *testing.T) {
	nodes := startCluster(t, 2, options{})
	up := func(want bool) func() bool {
		return func() bool { return peerStatus(nodes[0], nodes[1].url).Reachable == want }
	}
	after(t, 0, "the idle peer reachable", up(true))
	nodes[1].partition(true)
	after(t, antiEntropy, "the idle peer unreachable once cut off", up(false))
	nodes[1].partition(false)
	after(t, antiEntropy, "the idle peer reachable again", up(true))
}

// TestSenderNumbersAboveWhatThePeerApplied: a server whose batch numbers
// fall below what its peer has applied from it (it restarted with its
// clock set back) is told so, numbers above, and is not held up.
func TestSenderNumbersAboveWhatThePeerApplied(t *testing.T) {
	synctest.Test(t, testSenderNumbersAboveWhatThePeerApplied)
}

func testSenderNumbersAboveWhatThePeerApplied(t *testing.T) {
	nodes := startCluster(t, 2, options{repl: func(c *replication.Config) {
		c.AntiEntropyInterval = time.Hour // only the batch may carry a
	}})
	mustBeReady(t, 0, nodes...)
	// peer2 has applied a batch from peer1 numbered an hour ahead of
	// peer1's clock.
	ahead := time.Now().Add(time.Hour).UnixNano()
	req, err := http.NewRequest(http.MethodPost, nodes[1].url+"/peerreplication/batch", strings.NewReader(`{"replicationList":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(replication.NodeHeader, nodes[0].name)
	req.Header.Set(replication.BatchSeqHeader, fmt.Sprint(ahead))
	resp, err := nodes[0].net.Transport("test.local").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the batch numbered ahead: %s", resp.Status)
	}
	if err := nodes[0].reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "a on peer 2", everywhere(nodes, "a", heureka.StatusUp))
	if st := peerStatus(nodes[0], nodes[1].url); !st.Reachable || st.Dropped != 0 {
		t.Fatalf("peer 1's view of peer 2: %+v", st)
	}
}

// TestResyncFitsAPeersBodyLimit: a full resync larger than the peer
// accepts in one body (413) is sent in smaller batches, and arrives whole.
func TestResyncFitsAPeersBodyLimit(t *testing.T) { synctest.Test(t, testResyncFitsAPeersBodyLimit) }

func testResyncFitsAPeersBodyLimit(t *testing.T) {
	nodes := startCluster(t, 2, options{
		repl: func(c *replication.Config) {
			c.QueueSize = 5
			c.AntiEntropyInterval = time.Hour // only the resync may repair
		},
		api: func(c *httpapi.Config) { c.MaxBodyBytes = 16 << 10 },
	})
	mustBeReady(t, 0, nodes...)
	nodes[1].partition(true)
	for i := range 200 { // ~600 bytes each: 120 KB in all
		if err := nodes[0].reg.Register(dn(fmt.Sprint(i)), false); err != nil {
			t.Fatal(err)
		}
	}
	after(t, oneBatch, "peer 1 to give up the queue", func() bool {
		return peerStatus(nodes[0], nodes[1].url).Resync
	})
	nodes[1].partition(false)
	if err := nodes[0].reg.Register(dn("last"), false); err != nil { // wakes the sender
		t.Fatal(err)
	}
	after(t, retryUnreachable, "peer 2 holds all 201", func() bool { return nodes[1].reg.Snapshot().Len() == 201 })
	if st := peerStatus(nodes[0], nodes[1].url); st.Refused != 0 || !st.Reachable {
		t.Fatalf("peer 1's view of peer 2 after the resync: %+v", st)
	}
}

// TestAntiEntropyPullsOnlyTheInstancesThatDiffer: a peer whose digest of
// an application differs compares the digests of its instances and pulls
// only those that differ, not the whole application; a peer that has no
// per-instance digests (an older version: 404) is asked for the whole
// application, and the difference is repaired either way.
func TestAntiEntropyPullsOnlyTheInstancesThatDiffer(t *testing.T) {
	synctest.Test(t, testAntiEntropyPullsOnlyTheInstancesThatDiffer)
}

func testAntiEntropyPullsOnlyTheInstancesThatDiffer(t *testing.T) {
	nodes := startCluster(t, 2, options{})
	mustBeReady(t, 0, nodes...)
	const app = "HDFS-DATANODE.PROD"
	for i := range 40 {
		if err := nodes[0].reg.Register(dn(fmt.Sprintf("dn-%02d", i)), false); err != nil {
			t.Fatal(err)
		}
	}
	after(t, oneBatch, "every instance on the second peer", func() bool {
		return nodes[1].reg.Snapshot().Len() == 40
	})

	// The first peer's handler, recording what the second asks of it, and
	// answering 404 to per-instance digests while old is set.
	var mu sync.Mutex
	var asked []string
	var old atomic.Bool
	api := nodes[0].api
	nodes[0].net.Serve(nodes[0].host, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/v1/replication/apps/") {
			if old.Load() && strings.HasSuffix(r.URL.Path, "/digests") {
				http.NotFound(w, r)
				return
			}
			mu.Lock()
			asked = append(asked, r.URL.RequestURI())
			mu.Unlock()
		}
		api.ServeHTTP(w, r)
	}))
	pulls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
	// The second peer refuses the first's batches, so that the first's own
	// comparisons, which send its newer copies, cannot deliver them: the
	// change reaches the second peer only by the pull this test watches.
	api1 := nodes[1].api
	nodes[1].net.Serve(nodes[1].host, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/peerreplication/batch") {
			http.Error(w, "refused by the test", http.StatusServiceUnavailable)
			return
		}
		api1.ServeHTTP(w, r)
	}))
	// change writes instance id on the first peer alone, as a replicated
	// write is stored (not forwarded), with a figure the second peer lacks.
	change := func(id, figure string) {
		t.Helper()
		in := dn(id, func(in *heureka.Instance) {
			in.LastDirtyTimestamp = time.Now().UnixMilli() + 1
			in.Metadata = heureka.MetadataOf(map[string]string{"rack": "/r1", "figure": figure})
		})
		if err := nodes[0].reg.Register(in, true); err != nil {
			t.Fatal(err)
		}
		after(t, antiEntropy, id+" repaired on the second peer", func() bool {
			in, ok := nodes[1].reg.Snapshot().Instance(app, id)
			return ok && in.Metadata.Get("figure") == figure
		})
	}

	change("dn-07", "1")
	whole := "/v1/replication/apps/" + app
	for _, u := range pulls() {
		if u == whole {
			t.Fatalf("the whole application was pulled to repair one instance: %q", pulls())
		}
	}
	if !slices.Contains(pulls(), whole+"?id=dn-07") {
		t.Fatalf("dn-07 was not pulled by ID: %q", pulls())
	}

	old.Store(true)
	change("dn-08", "2")
	if !slices.Contains(pulls(), whole) {
		t.Fatalf("a peer without per-instance digests was not asked for the whole application: %q", pulls())
	}
}

// TestAntiEntropyLeavesNoGoroutinesBehind: a server's goroutines do not
// grow with its anti-entropy rounds. The loop used to start, at every
// round, a goroutine that watched for a repair being asked for, and left
// it running until one was, which on a quiet cluster is never: at the
// default 30 s interval, 2,880 more goroutines a day, each waking ten
// times a second.
func TestAntiEntropyLeavesNoGoroutinesBehind(t *testing.T) {
	synctest.Test(t, testAntiEntropyLeavesNoGoroutinesBehind)
}

func testAntiEntropyLeavesNoGoroutinesBehind(t *testing.T) {
	nodes := startCluster(t, 2, options{})
	mustBeReady(t, 0, nodes...)
	after(t, time.Second, "the cluster quiet", quiescent(nodes))
	before := runtime.NumGoroutine()
	rounds := time.Minute / antiEntropy
	time.Sleep(time.Minute)
	synctest.Wait()
	// A little slack for goroutines outside the bubble; each leaked round
	// would add one per server.
	if n := runtime.NumGoroutine(); n > before+10 {
		t.Errorf("%d goroutines after %d anti-entropy rounds on each of 2 servers, %d before", n, rounds, before)
	}
}

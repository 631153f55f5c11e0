package replication_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/testclock"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
	"github.com/heureka-project/heureka/replication/replicationtest"
)

// heldRequest is a batch a sender gave up on that the network still holds.
type heldRequest struct {
	from   string
	url    string
	header http.Header
	body   []byte
}

// lateNet is a MemNetwork whose cuts behave like a TCP path through a
// proxy that keeps accepting while its upstream is unreachable: a batch
// sent to a held host fails for its sender (as a timeout does), yet the
// request is kept, and the test delivers it later, after the heal. It also
// counts the digests each host asks for, to know when anti-entropy ran.
type lateNet struct {
	net     *replicationtest.MemNetwork
	mu      sync.Mutex
	hold    map[string]bool
	held    []heldRequest
	digests map[string]int // by the asking host
}

func newLateNet() *lateNet {
	return &lateNet{net: replicationtest.NewMemNetwork(), hold: map[string]bool{}, digests: map[string]int{}}
}

func (n *lateNet) transport(from string) replication.Transport {
	return lateTransport{n: n, from: from, next: n.net.Transport(from)}
}

// cut cuts host off in both directions (on), keeping the batches sent to
// it, or reconnects it.
func (n *lateNet) cut(host string, on bool) {
	n.mu.Lock()
	n.hold[host] = on
	n.mu.Unlock()
	n.net.Partition(host, on)
}

// heldBatches returns the batches kept so far whose bodies contain every
// one of words.
func (n *lateNet) heldBatches(words ...string) []heldRequest {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []heldRequest
	for _, h := range n.held {
		ok := true
		for _, w := range words {
			ok = ok && bytes.Contains(h.body, []byte(w))
		}
		if ok {
			out = append(out, h)
		}
	}
	return out
}

func (n *lateNet) digestCount(from string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.digests[from]
}

// deliver hands h to its destination now, as the network would once the
// path is back; the answer goes nowhere (its sender has long given up).
func (n *lateNet) deliver(t *testing.T, h heldRequest) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(h.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.header.Clone()
	resp, err := n.net.Transport(h.from).Do(req)
	if err != nil {
		t.Fatalf("late delivery of a batch from %s: %v", h.from, err)
	}
	resp.Body.Close()
}

type lateTransport struct {
	n    *lateNet
	from string
	next replication.Transport
}

func (t lateTransport) Do(req *http.Request) (*http.Response, error) {
	t.n.mu.Lock()
	held := t.n.hold[req.URL.Host]
	if strings.HasSuffix(req.URL.Path, "/v1/replication/digest") {
		t.n.digests[t.from]++
	}
	t.n.mu.Unlock()
	if held && req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		t.n.mu.Lock()
		t.n.held = append(t.n.held, heldRequest{from: t.from, url: req.URL.String(), header: req.Header.Clone(), body: body})
		t.n.mu.Unlock()
		return nil, fmt.Errorf("POST %s: timeout awaiting the answer (the request is held in the network)", req.URL)
	}
	return t.next.Do(req)
}

// TestLateBatchDoesNotBringBackAClearedOverride is the nemesis run's
// "acknowledged clear lost" (seed 99, docs/reliability.md). Peer 3 is cut
// off while an operator sets and clears OUT_OF_SERVICE through peer 2 and
// then through peer 1, and it expires the instance meanwhile. Batches the
// other peers gave up on during the cut still reach peer 3 after the heal,
// older ones after newer ones. A late batch holding the override but not
// its clear must not put OUT_OF_SERVICE back on peer 3, from where
// anti-entropy used to spread it to every peer, the one that acknowledged
// the clear included.
func TestLateBatchDoesNotBringBackAClearedOverride(t *testing.T) {
	synctest.Test(t, testLateBatchDoesNotBringBackAClearedOverride)
}

func testLateBatchDoesNotBringBackAClearedOverride(t *testing.T) {
	const app = "HDFS-DATANODE.PROD"
	// One clock for the three registries, moved by hand; replication runs
	// on the bubble's.
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ln := newLateNet()
	nodes, urls := newNodes(ln.net, 3)
	startNodes(t, nodes, urls, func(nd *node) options {
		return options{
			reg: func(c *registry.Config) {
				c.Clock = clock.Now
				c.SelfPreservation = registry.ModeOff
				c.PauseThreshold = 0 // the test's clock jumps are not pauses
			},
			repl: func(c *replication.Config) { c.Transport = ln.transport(nd.host) },
		}
	})
	p1, p2, p3 := nodes[0], nodes[1], nodes[2]
	mustBeReady(t, 0, nodes...)
	short := func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 1, 3 }
	if err := p1.reg.Register(dn("x", short), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "x on every peer", everywhere(nodes, "x", heureka.StatusUp))

	// renewedAt is when nd last renewed x, in milliseconds of the clock.
	renewedAt := func(nd *node) int64 {
		a, ok := nd.reg.LiveApp(app)
		if !ok {
			return 0
		}
		for _, in := range a.Instances {
			if in.ID == "x" {
				return in.Lease.LastRenewalTimestamp
			}
		}
		return 0
	}
	// beat moves the registries' clock a second on and renews x through
	// peer 1, as its agent does, and checks, d later on the bubble's clock,
	// that each of want has the renewal.
	beat := func(d time.Duration, want ...*node) {
		t.Helper()
		clock.Advance(time.Second)
		if _, err := p1.reg.Renew(registry.RenewRequest{App: app, ID: "x"}); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, nd := range want {
			names = append(names, nd.name)
		}
		after(t, d, "the renewal on "+strings.Join(names, ", "), func() bool {
			for _, nd := range want {
				if renewedAt(nd) != clock.Now().UnixMilli() {
					return false
				}
			}
			return true
		})
	}
	// operate sets or clears the override through via and waits until
	// every connected peer shows it and the cut-off one has been sent a
	// batch carrying it (which it will receive late).
	operate := func(via *node, set bool) {
		t.Helper()
		var err error
		want, word := heureka.StatusOutOfService, `"StatusUpdate"`
		if set {
			err = via.reg.SetStatus(app, "x", heureka.StatusOutOfService, 0, false)
		} else {
			want, word = heureka.StatusUp, `"DeleteStatusOverride"`
			err = via.reg.DeleteStatusOverride(app, "x", heureka.StatusUp, 0, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		after(t, oneBatch, "the change on peers 1 and 2", everywhere(nodes[:2], "x", want))
		// The sender tries peer 3 again at most a second after its last
		// attempt failed.
		after(t, retryUnreachable, via.name+" to try sending it to peer 3", func() bool {
			for _, h := range ln.heldBatches(word) {
				if h.from == via.host {
					return true
				}
			}
			return false
		})
	}

	ln.cut(p3.host, true)
	operate(p2, true)
	operate(p2, false)
	operate(p1, true)
	operate(p1, false)
	// Peer 3 hears nothing, and its lease of x runs out; peer 1 keeps
	// hearing from x and tells peer 2.
	for range 4 {
		beat(oneBatch, p1, p2)
		p3.reg.Tick()
	}
	if st := status(p3, "x"); st != "" {
		t.Fatalf("peer 3 still serves x (%s) after its lease ran out", st)
	}
	// Among the batches held for peer 3 are some that carry an override
	// and not the clear that followed it.
	var stale []heldRequest
	for _, h := range slices.Backward(ln.heldBatches(`"StatusUpdate"`)) {
		if !bytes.Contains(h.body, []byte(`"DeleteStatusOverride"`)) || h.from == p2.host {
			stale = append(stale, h)
		}
	}
	if len(stale) == 0 {
		t.Fatal("no batch held for peer 3 carries an override without its clear; the test no longer models the run")
	}

	ln.cut(p3.host, false)
	// The replicated heartbeat, answered 404, brings x back to peer 3, at
	// peer 1's next attempt.
	beat(retryUnreachable, p1, p2, p3)
	after(t, 0, "x UP on every peer after the heal", everywhere(nodes, "x", heureka.StatusUp))
	after(t, retryUnreachable, "every queue drained", quiescent(nodes))

	// Now the batches the senders gave up on arrive, newest first, so the
	// oldest (an override without its clear) lands last.
	for _, h := range stale {
		ln.deliver(t, h)
	}
	// Let anti-entropy compare every pair of peers twice over.
	base := make([]int, len(nodes))
	for i, nd := range nodes {
		base[i] = ln.digestCount(nd.host)
	}
	after(t, 2*antiEntropy, "two anti-entropy rounds on every peer", func() bool {
		for i, nd := range nodes {
			if ln.digestCount(nd.host) < base[i]+2*(len(nodes)-1) {
				return false
			}
		}
		return true
	})
	after(t, 0, "every queue drained", quiescent(nodes))
	for _, nd := range nodes {
		if st := status(nd, "x"); st != heureka.StatusUp {
			t.Errorf("%s serves x as %q after the heal; the last acknowledged operator call was a clear (UP)", nd.name, st)
		}
	}

	// Peer 3 keeps x as long as x renews through peer 1.
	for range 4 {
		beat(oneBatch, p1, p2, p3)
		p3.reg.Tick()
	}
	if st := status(p3, "x"); st != heureka.StatusUp {
		t.Fatalf("peer 3 serves x as %q while it renews through peer 1, want UP", st)
	}
}

// gatedNet is a MemNetwork whose links can be blocked one direction at a
// time: a request from a blocked sender to a blocked destination fails
// for its sender, as a timeout during a partition does, and is not
// delivered.
type gatedNet struct {
	net     *replicationtest.MemNetwork
	mu      sync.Mutex
	blocked map[[2]string]bool // from host, to host
}

func (g *gatedNet) transport(from string) replication.Transport {
	return gatedTransport{g: g, from: from, next: g.net.Transport(from)}
}

// block blocks (on) or opens both directions between a and b.
func (g *gatedNet) block(a, b string, on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.blocked[[2]string{a, b}], g.blocked[[2]string{b, a}] = on, on
}

type gatedTransport struct {
	g    *gatedNet
	from string
	next replication.Transport
}

func (t gatedTransport) Do(req *http.Request) (*http.Response, error) {
	t.g.mu.Lock()
	blocked := t.g.blocked[[2]string{t.from, req.URL.Host}]
	t.g.mu.Unlock()
	if blocked {
		return nil, fmt.Errorf("%s %s: timeout awaiting the answer (%s cannot reach it)", req.Method, req.URL, t.from)
	}
	return t.next.Do(req)
}

// TestAStaleQueuedRegistrationDoesNotOutliveTheHeal is the nemesis's slow
// and non-converging heals (docs/reliability.md, "Heals that waited for
// anti-entropy"). Peer 3 is cut off. An instance registers through peer 2,
// which queues the registration for peer 3; then its metadata changes
// through peer 1, which queues the change for peer 3 and tells peer 2.
// The change carries the same lastDirtyTimestamp, as Eureka's metadata
// updates do. At the heal peer 1 delivers first and peer 2 last, so peer
// 3 gets the registration after the change it predates, and peer 2's
// repair then takes peer 3's copy, the last one applied. No periodic
// anti-entropy round runs (its interval is an hour here; 30 s in servers,
// as long as the nemesis allows a heal), so the peers must agree, on the
// change, from replication and the repairs a heal triggers alone.
func TestAStaleQueuedRegistrationDoesNotOutliveTheHeal(t *testing.T) {
	synctest.Test(t, testAStaleQueuedRegistrationDoesNotOutliveTheHeal)
}

func testAStaleQueuedRegistrationDoesNotOutliveTheHeal(t *testing.T) {
	const app = "HDFS-DATANODE.PROD"
	g, nodes := startGatedCluster(t)
	p1, p2, p3 := nodes[0], nodes[1], nodes[2]
	rev := func(nd *node) string {
		in, ok := nd.reg.Snapshot().Instance(app, "x")
		if !ok {
			return "absent"
		}
		return in.Metadata.Get("rev")
	}
	revs := func() string { return fmt.Sprintf("peer1 %s, peer2 %s, peer3 %s", rev(p1), rev(p2), rev(p3)) }

	g.block(p3.host, p1.host, true)
	g.block(p3.host, p2.host, true)
	if err := p2.reg.Register(dn("x", func(in *heureka.Instance) { in.Metadata = in.Metadata.With("rev", "0") }), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "x on peer 1", func() bool { return rev(p1) == "0" })
	if err := p1.reg.UpdateMetadata(app, "x", map[string]string{"rev": "1"}); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "the change on peer 2", func() bool { return rev(p2) == "1" })
	if q := peerStatus(p2, p3.url).Queued; q == 0 {
		t.Fatalf("peer 2 holds nothing for peer 3 (%s); the test no longer models the run", revs())
	}

	// Peer 1 delivers first, at its next attempt.
	g.block(p3.host, p1.host, false)
	after(t, retryUnreachable, "the change on peer 3", func() bool { return rev(p3) == "1" })
	// Then peer 2.
	g.block(p3.host, p2.host, false)
	waitQuiescent(t, retryUnreachable, nodes)
	// The repairs the heal triggered have run.
	if rev(p1) != "1" || rev(p2) != "1" || rev(p3) != "1" {
		t.Fatalf("once the queues drained after the heal the peers serve %s; want rev 1 everywhere, the last acknowledged write", revs())
	}
}

// startGatedCluster starts three peers on a gatedNet, with no periodic
// anti-entropy round (its interval is an hour), and checks they are ready.
func startGatedCluster(t *testing.T) (*gatedNet, []*node) {
	t.Helper()
	g := &gatedNet{net: replicationtest.NewMemNetwork(), blocked: map[[2]string]bool{}}
	nodes, urls := newNodes(g.net, 3)
	startNodes(t, nodes, urls, func(nd *node) options {
		return options{repl: func(c *replication.Config) {
			c.Transport = g.transport(nd.host)
			c.AntiEntropyInterval = time.Hour
		}}
	})
	mustBeReady(t, 0, nodes...)
	// A peer first found reachable is compared with at the anti-entropy
	// loop's next look, within 100 ms: those comparisons are over before
	// a test cuts a link, or one could find its link cut and, with no
	// periodic round, never call that peer again.
	time.Sleep(200 * time.Millisecond)
	synctest.Wait()
	return g, nodes
}

// TestWritesThroughTwoPeersReorderedAtAHealConverge is the slowest heal of
// the nemesis (29.8 s, docs/reliability.md): an operator sets
// OUT_OF_SERVICE through peer 2 while peer 3 cannot hear it, and clears
// it through peer 3 as peer 3 comes back, so peer 3 gets the clear (which
// changes nothing there) before the override, and peer 2 the override
// before the clear. Batches from two senders have no order between them,
// as in Eureka, so which status wins is not the test's business; that
// every peer serves the same one soon after the heal is. Anti-entropy's
// periodic round is an hour away here: the repairs the heal triggers must
// do it.
func TestWritesThroughTwoPeersReorderedAtAHealConverge(t *testing.T) {
	synctest.Test(t, testWritesThroughTwoPeersReorderedAtAHealConverge)
}

func testWritesThroughTwoPeersReorderedAtAHealConverge(t *testing.T) {
	const app = "HDFS-DATANODE.PROD"
	g, nodes := startGatedCluster(t)
	p1, p2, p3 := nodes[0], nodes[1], nodes[2]
	if err := p1.reg.Register(dn("x"), false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "x on every peer", everywhere(nodes, "x", heureka.StatusUp))
	statuses := func() string {
		return fmt.Sprintf("peer1 %s, peer2 %s, peer3 %s", status(p1, "x"), status(p2, "x"), status(p3, "x"))
	}

	// Peer 3 is cut off from both others, so that no comparison through
	// peer 1 carries the override or the clear across before the heal.
	g.block(p2.host, p3.host, true)
	g.block(p1.host, p3.host, true)
	if err := p2.reg.SetStatus(app, "x", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	after(t, oneBatch, "the override on peer 1", everywhere(nodes[:1], "x", heureka.StatusOutOfService))
	if err := p3.reg.DeleteStatusOverride(app, "x", heureka.StatusUp, 0, false); err != nil {
		t.Fatal(err)
	}
	if status(p1, "x") != heureka.StatusOutOfService || status(p2, "x") != heureka.StatusOutOfService || status(p3, "x") != heureka.StatusUp {
		t.Fatalf("before the heal: %s; want OUT_OF_SERVICE on peers 1 and 2, UP on peer 3", statuses())
	}

	g.block(p1.host, p3.host, false)
	g.block(p2.host, p3.host, false)
	waitQuiescent(t, retryUnreachable, nodes)
	// The repairs the heal triggered have run.
	if status(p1, "x") != status(p2, "x") || status(p2, "x") != status(p3, "x") {
		t.Fatalf("once the queues drained after the heal the peers serve %s", statuses())
	}
}

// waitQuiescent lets d pass on the bubble's clock, waits until every
// goroutine in it is blocked, and fails t unless every queue has drained
// (quiescent), saying what each peer holds.
func waitQuiescent(t *testing.T, d time.Duration, nodes []*node) {
	t.Helper()
	time.Sleep(d)
	synctest.Wait()
	if quiescent(nodes)() {
		return
	}
	for _, nd := range nodes {
		for _, p := range nd.rep.Status() {
			if !p.Self {
				t.Logf("%s → %s: reachable %v, queued %d, resync %v, sent %d, last error %q", nd.name, p.URL, p.Reachable, p.Queued, p.Resync, p.Sent, p.LastError)
			}
		}
	}
	t.Fatalf("the queues had not drained %v after the heal", d)
}

// attempts is a transport that records when each batch was sent to host,
// delivered or not.
type attempts struct {
	next replication.Transport
	host string
	mu   sync.Mutex
	at   []time.Time
}

func (a *attempts) Do(req *http.Request) (*http.Response, error) {
	if req.URL.Host == a.host && strings.HasSuffix(req.URL.Path, "/peerreplication/batch") {
		a.mu.Lock()
		a.at = append(a.at, time.Now())
		a.mu.Unlock()
	}
	return a.next.Do(req)
}

func (a *attempts) times() []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.at)
}

// TestASenderRetriesAnUnreachablePeerWithinASecond: however long a peer
// stays unreachable, its sender tries it again at most a second later
// (Eureka's serverUnavailableSleepTimeMs), so a peer back from a partition
// hears the heartbeats it missed within about a second. The nemesis found
// five seconds of back-off too long for its 3 s leases: a peer back from an
// isolation took the others' nodes back by anti-entropy, each lease with its
// last renewal, and dropped them before the renewals reached it (seed 2718).
func TestASenderRetriesAnUnreachablePeerWithinASecond(t *testing.T) {
	synctest.Test(t, testASenderRetriesAnUnreachablePeerWithinASecond)
}

func testASenderRetriesAnUnreachablePeerWithinASecond(t *testing.T) {
	network := replicationtest.NewMemNetwork()
	first, second := newNode(network, "peer1"), newNode(network, "peer2")
	sent := &attempts{next: network.Transport(first.host), host: second.host}
	// The registries' clock stands still, so that no lease ends during the
	// outage: leases are not under test.
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	startNodes(t, []*node{first, second}, []string{first.url, second.url}, func(nd *node) options {
		return options{
			reg: func(c *registry.Config) { c.Clock = clock.Now },
			repl: func(c *replication.Config) {
				if nd == first {
					c.Transport = sent
				}
				c.AntiEntropyInterval = time.Hour
			},
		}
	})
	nodes := []*node{first, second}
	mustBeReady(t, 0, nodes...)
	second.partition(true)
	if err := first.reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	// A minute of outage: the back-off, doubling from 100 ms at each failed
	// attempt, has long met any ceiling.
	outage := time.Now()
	after(t, time.Minute, "a queued for peer 2", func() bool { return peerStatus(first, second.url).Queued == 1 })
	at := sent.times()
	if len(at) < 2 {
		t.Fatalf("%d attempts in a minute of outage", len(at))
	}
	var longest time.Duration
	var from time.Time
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap > longest {
			longest, from = gap, at[i-1]
		}
	}
	if longest > time.Second {
		t.Errorf("the sender waited %v (from %v into the outage) before trying an unreachable peer again; want a second at most", longest, from.Sub(outage))
	}
	if last := time.Since(at[len(at)-1]); last > time.Second {
		t.Errorf("no attempt in the last %v of the outage", last)
	}
	second.partition(false)
	after(t, retryUnreachable, "a on peer 2 after the heal", everywhere(nodes, "a", heureka.StatusUp))
}

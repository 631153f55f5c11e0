package replication

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/urlcheck"
)

// NodeHeader carries a server's node ID on every request and response
// between peers, so that a server recognises its own URL in its peer list.
const NodeHeader = "X-Heureka-Node"

// BatchSeqHeader numbers every batch a heureka server sends, increasing
// across all its peers (from its clock in nanoseconds, so the numbers keep
// increasing across restarts where a node ID is kept; heureka server draws
// a new one at every start). The receiving heureka server applies a batch
// only if its number is above every one it has applied from that sender,
// by NodeHeader (Receiver.BatchInOrder): a batch whose sender gave up waiting, yet
// which the network delivered after a newer one, is refused, since the
// newer one carried everything it did. A 409 answer carries the highest
// number applied. Java peers neither send nor read it.
const BatchSeqHeader = "X-Heureka-Batch-Seq"

// Config holds the replicator's settings. Start from DefaultConfig: every
// field is used as given (zero is a value, not "the default"), and
// Validate refuses what cannot work.
type Config struct {
	// Peers are the other servers' Eureka base URLs, e.g.
	// http://10.0.0.2:8761/eureka. The list may include this server's own
	// URL: it is recognised (by SelfURL or by node ID) and skipped.
	Peers []string
	// SelfURL is this server's own base URL as peers know it, if known.
	SelfURL string
	// NodeID identifies this server; it must be unique in the cluster.
	NodeID string
	// BatchSize bounds the items in one batch (Eureka's is 250).
	BatchSize int
	// MaxBatchBytes bounds the body of one batch: a batch that encodes to
	// more is sent in halves. A peer that answers 413 gets halves too.
	MaxBatchBytes int
	// BatchDelay is how long a worker waits for more writes before sending.
	BatchDelay time.Duration
	// QueueSize bounds the writes (other than heartbeats, which are
	// coalesced per instance) waiting for one peer. Past it the queue is
	// dropped and the peer is resynchronised in full.
	QueueSize int
	// MaxOutage is how long a peer may stay unreachable before its queue
	// is dropped in favour of a full resynchronisation when it returns.
	MaxOutage time.Duration
	// ConnectTimeout and RequestTimeout bound each call to a peer.
	ConnectTimeout time.Duration
	RequestTimeout time.Duration
	// AntiEntropyInterval is how often digests are compared with each peer.
	AntiEntropyInterval time.Duration
	// SyncTimeout bounds the wait, at start, for a peer to copy the registry
	// from; past it the server starts empty and says so.
	SyncTimeout time.Duration
	// TLS configures calls to https peers: the CA that signs their
	// certificates (RootCAs) and this server's client certificate for
	// mutual TLS (GetClientCertificate, so that a reloaded certificate is
	// used from the next connection on). nil means the system's roots and
	// no client certificate.
	TLS *tls.Config
	// Authorization, when set, gives the Authorization header sent with
	// every call to a peer (the peer role's credentials); it is called per
	// request, so credentials can change without a restart.
	Authorization func() string
	// Transport carries the calls to peers; nil means the HTTP transport
	// built from ConnectTimeout, RequestTimeout and TLS (NewHTTPTransport).
	// Tests connect replicators through a replicationtest.MemNetwork.
	Transport Transport
	// Clock is the time replication reads and waits on.
	Clock  Clock
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		// Eureka's batch size: a batch stays well under a megabyte.
		BatchSize: 250,
		// Half the body limit of a heureka server (1 MiB): a resync of
		// large DataNode registrations (1.5 KB each) fits with room.
		MaxBatchBytes: 512 << 10,
		// Short enough for sub-second propagation, long enough to coalesce
		// a burst (Eureka waits up to 500 ms).
		BatchDelay: 10 * time.Millisecond,
		// Eureka's acceptor queue size.
		QueueSize: 10_000,
		// A peer gone for five minutes gets everything anew; a shorter
		// outage is healed by replaying its queue.
		MaxOutage: 5 * time.Minute,
		// Peers are near: a second to connect (Netflix's 1000 ms), five to
		// answer (Netflix's 5000 ms; Spring's 200 ms causes false alarms).
		ConnectTimeout: time.Second,
		RequestTimeout: 5 * time.Second,
		// Repairs what replication missed within half a minute.
		AntiEntropyInterval: 30 * time.Second,
		// A live peer answers in well under this.
		SyncTimeout: 30 * time.Second,
		Clock:       SystemClock{},
		Logger:      slog.Default(),
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c Config) Validate() error {
	for i, p := range c.Peers {
		field := fmt.Sprintf("Peers[%d]", i)
		u, err := urlcheck.Parse(p)
		if err != nil {
			return heureka.InvalidConfig(field, p, "want http(s)://host:port/eureka")
		}
		if u.User != nil {
			// Peer URLs are shown in /v1/status and logs.
			return heureka.InvalidConfig(field, u.Redacted(), "carries credentials; give them as Config.Authorization instead")
		}
	}
	switch {
	case c.NodeID == "":
		return heureka.InvalidConfig("NodeID", nil, "is empty")
	case c.BatchSize <= 0:
		return heureka.InvalidConfig("BatchSize", c.BatchSize, "want at least 1")
	case c.MaxBatchBytes <= 0:
		return heureka.InvalidConfig("MaxBatchBytes", c.MaxBatchBytes, "want a positive size")
	case c.QueueSize <= 0:
		return heureka.InvalidConfig("QueueSize", c.QueueSize, "want at least 1")
	case c.BatchDelay < 0:
		return heureka.InvalidConfig("BatchDelay", c.BatchDelay, "want 0 (send at once) or more")
	case c.MaxOutage < 0:
		return heureka.InvalidConfig("MaxOutage", c.MaxOutage, "want 0 (resynchronise at once) or more")
	case c.SyncTimeout < 0:
		return heureka.InvalidConfig("SyncTimeout", c.SyncTimeout, "want 0 (start empty at once) or more")
	case c.Clock == nil:
		return heureka.InvalidConfig("Clock", nil, "is nil; start from DefaultConfig")
	case c.Logger == nil:
		return heureka.InvalidConfig("Logger", nil, "is nil; start from DefaultConfig, or give slog.New(slog.DiscardHandler) for none")
	}
	return heureka.Positive(
		heureka.NamedDuration{Field: "ConnectTimeout", Value: c.ConnectTimeout},
		heureka.NamedDuration{Field: "RequestTimeout", Value: c.RequestTimeout},
		heureka.NamedDuration{Field: "AntiEntropyInterval", Value: c.AntiEntropyInterval},
	)
}

// Replicator forwards this server's client writes to its peers, copies the
// registry from a peer at start, and repairs differences by anti-entropy.
type Replicator struct {
	cfg    Config
	reg    *registry.Registry
	log    *slog.Logger
	client Transport
	clock  Clock
	peers  []*peer
	told   *told // which peers a write's heureka.ToldPeersHeader names
	ready  atomic.Bool
	synced atomic.Value  // string: how the start-up sync ended
	seq    atomic.Uint64 // the last batch number used (BatchSeqHeader)
}

// nextSeq returns the next batch number: above the last one, and at least
// the clock in nanoseconds, so that a restarted server numbers above its
// earlier life.
func (rp *Replicator) nextSeq() uint64 {
	for {
		cur := rp.seq.Load()
		n := cur + 1
		if now := rp.clock.Now().UnixNano(); now > 0 && uint64(now) > n {
			n = uint64(now)
		}
		if rp.seq.CompareAndSwap(cur, n) {
			return n
		}
	}
}

// raiseSeq makes the next batch number exceed last.
func (rp *Replicator) raiseSeq(last uint64) {
	for {
		cur := rp.seq.Load()
		if cur >= last || rp.seq.CompareAndSwap(cur, last) {
			return
		}
	}
}

// New returns a replicator for reg; it starts nothing. Call Run to start.
func New(cfg Config, reg *registry.Registry) (*Replicator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rp := &Replicator{
		cfg:   cfg,
		reg:   reg,
		log:   cfg.Logger.With("subsystem", "replication"),
		clock: cfg.Clock,
	}
	if cfg.Transport != nil {
		rp.client = cfg.Transport
	} else {
		rp.client = NewHTTPTransport(cfg.ConnectTimeout, cfg.RequestTimeout, cfg.TLS)
	}
	self := normalize(cfg.SelfURL)
	seen := map[string]bool{}
	for _, u := range cfg.Peers {
		n := normalize(u)
		if seen[n] {
			continue
		}
		seen[n] = true
		p := newPeer(rp, n)
		if n == self {
			p.self = true
		}
		rp.peers = append(rp.peers, p)
	}
	urls := make([]string, len(rp.peers))
	for i, p := range rp.peers {
		urls[i] = p.url
	}
	rp.told = newTold(urls)
	rp.synced.Store("")
	return rp, nil
}

// normalize gives a peer URL one spelling: no trailing slash, and /eureka
// when no path was given.
func normalize(raw string) string {
	raw = strings.TrimRight(strings.TrimSpace(raw), "/")
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Path == "" {
		u.Path = "/eureka"
	}
	return u.String()
}

// Forward queues a client write for every peer but those its sender
// tells itself (op.Told, heureka.ToldPeersHeader; see told for the
// matching, which replicates whenever in doubt). It never blocks; the
// registry calls it with its lock held.
func (rp *Replicator) Forward(op registry.Op) {
	var skip uint64
	if op.Told != "" {
		skip = rp.told.mask(op.Told)
		op.Told = "" // the queues need not keep the request's header alive
	}
	for i, p := range rp.peers {
		if i < maxSkippable && skip&(1<<i) != 0 {
			continue
		}
		p.enqueue(op)
	}
}

// Ready reports whether the start-up sync has ended (copied, or given up).
func (rp *Replicator) Ready() bool { return rp.ready.Load() }

// Run copies the registry from a live peer, then replicates and repairs
// until ctx is done. It returns nil on cancellation.
func (rp *Replicator) Run(ctx context.Context) error {
	rp.startupSync(ctx)
	rp.ready.Store(true)
	var wg sync.WaitGroup
	for _, p := range rp.peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.run(ctx)
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		rp.antiEntropyLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		rp.firstContact(ctx)
	}()
	wg.Wait()
	if c, ok := rp.client.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	return nil
}

// updatePeers tells the registry how many peers are reachable, for
// self-preservation.
func (rp *Replicator) updatePeers() {
	up, total := 0, 0
	for _, p := range rp.peers {
		st := p.status()
		if st.Self {
			continue
		}
		total++
		if st.Reachable {
			up++
		}
	}
	rp.reg.SetPeers(up, total)
}

// PeerStatus describes one peer for /v1/status and the dashboard.
type PeerStatus struct {
	URL       string    `json:"url"`
	Self      bool      `json:"self,omitempty"`
	Reachable bool      `json:"reachable"`
	Since     time.Time `json:"since,omitzero"` // when Reachable last changed
	LastError string    `json:"lastError,omitempty"`
	Queued    int       `json:"queued"`
	Resync    bool      `json:"resyncPending,omitempty"`
	Sent      uint64    `json:"sent"`      // items delivered
	Batches   uint64    `json:"batches"`   // batches delivered
	BytesSent uint64    `json:"bytesSent"` // request bytes delivered
	// Dropped counts queued writes discarded since start because the peer
	// is to be resynchronised in full (queue overflow, a refused batch, a
	// long outage); the resync carries their effect.
	Dropped uint64 `json:"dropped"`
	// Refused counts batches the peer refused (an answer of 4xx other
	// than 401, 403 and 429) or answered with something unusable; each
	// starts a full resync after a backoff, and LastError says why.
	Refused uint64 `json:"refused"`
}

// Status returns every peer's state.
func (rp *Replicator) Status() []PeerStatus {
	out := make([]PeerStatus, 0, len(rp.peers))
	for _, p := range rp.peers {
		out = append(out, p.status())
	}
	return out
}

// SyncResult says how the start-up sync ended ("" while it runs).
func (rp *Replicator) SyncResult() string { return rp.synced.Load().(string) }

func (rp *Replicator) newRequest(ctx context.Context, method, u string, body []byte) (*http.Request, error) {
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, err = http.NewRequestWithContext(ctx, method, u, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, u, err)
	}
	req.Header.Set("Accept", "application/json")
	if rp.cfg.Authorization != nil {
		if a := rp.cfg.Authorization(); a != "" {
			req.Header.Set("Authorization", a)
		}
	}
	req.Header.Set(NodeHeader, rp.cfg.NodeID)
	req.Header.Set("DiscoveryIdentity-Name", "DefaultServer")
	return req, nil
}

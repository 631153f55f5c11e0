package httpapi

import (
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
	"github.com/prometheus/client_golang/prometheus"
)

// Config holds the HTTP layer's settings. Start from DefaultConfig; every
// field means what it says, zero included (Validate says which zeros cannot
// work).
type Config struct {
	// MaxBodyBytes bounds a request body, both as sent and after gzip
	// inflation. Larger bodies get 413.
	MaxBodyBytes int64
	// Limits are checked on a registration before the registry sees it, so
	// that Eureka's validation order and messages are kept. Use the same
	// limits as the registry.
	Limits heureka.Limits
	// Ready reports whether GET /readyz answers 200; nil means always ready.
	Ready func() bool
	// CacheEntries bounds how many encoded payloads are kept for one
	// registry version.
	CacheEntries int
	// NodeID identifies this server process; it is sent as X-Heureka-Node
	// on every answer to a GET or HEAD (a registry version means something
	// only to the process that issued it) and on every answer to a peer (so
	// that a peer list naming this server is recognised). Other writes go
	// without.
	NodeID string
	// Status adds sections (peers, start-up sync) to GET /v1/status.
	Status func() map[string]any
	// Collectors are added to GET /metrics beside the registry's and the
	// HTTP layer's own (the replicator's per-peer state, for one).
	Collectors []prometheus.Collector
	// MaxWatchers bounds open watch and event streams; more get 503.
	MaxWatchers int
	// MaxWatchLag is how many changes a watcher may fall behind before it is
	// told to resync.
	MaxWatchLag int
	// KeepAlive is how often an idle stream gets a comment line.
	KeepAlive time.Duration
	// WriteTimeout bounds one write to a stream; a watcher that cannot take
	// data for that long is dropped.
	WriteTimeout time.Duration

	// Auth, when set, authenticates every request but those to /healthz,
	// /readyz and /metrics and authorises it by role (see internal/auth);
	// nil serves everyone, as Eureka does.
	Auth *auth.Store
	// WriteRate and WriteBurst are each client's token bucket for writes
	// (register, renew, cancel, status, metadata): WriteRate a second,
	// bursts of WriteBurst. A client is its user and address when
	// authenticated, else its address; peers and anonymous loopback clients
	// are exempt. A WriteRate of 0 turns the limit off. Over it: 429
	// with Retry-After.
	WriteRate  float64
	WriteBurst int
	// MaxWatchersPerClient bounds one client's open watch and event
	// streams (clients as for WriteRate); more get 429. 0: no bound but
	// MaxWatchers.
	MaxWatchersPerClient int
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		// The largest honest registration is a few KiB (metadata is capped at
		// 8 KiB); 1 MiB leaves room for verbose XML while bounding memory per
		// request.
		MaxBodyBytes: 1 << 20,
		Limits:       heureka.DefaultLimits(),
		// Full, delta and per-app payloads in two formats, with and without
		// gzip, for a few hundred apps and VIPs; a version change empties it.
		CacheEntries: 1024,
		// Thousands of watchers per peer; each costs a goroutine and a
		// connection, no queue.
		MaxWatchers: 10_000,
		// Beyond this a full fetch is cheaper than replaying the log.
		MaxWatchLag: 50_000,
		// Under the idle timeouts of common proxies (60 s).
		KeepAlive: 15 * time.Second,
		// A watcher that cannot take a write for this long is gone.
		WriteTimeout: 10 * time.Second,
		// An agent renews every 10 s and writes a status or metadata
		// change now and then; a host with a dozen daemons stays far
		// below 20 a second, and a restart that registers them all at
		// once fits in the burst. A client past it is broken or hostile.
		WriteRate:  20,
		WriteBurst: 100,
		// A heureka client keeps one stream per registry cluster; a host
		// with many clients, or a few dashboards, stays below this, while
		// one client cannot take the whole MaxWatchers.
		MaxWatchersPerClient: 64,
	}
}

// Server serves the Eureka REST API and heureka's own endpoints for one
// registry. Build it with New; it is an http.Handler and has no goroutines.
type Server struct {
	cfg     Config
	reg     *registry.Registry
	logger  *slog.Logger
	enc     *encoder      // chooses the snapshot listings are read from, and encodes ahead
	cache   *payloadCache // listings that depend on the version alone
	deltas  *payloadCache // /apps/delta, which also moves with its window
	peers   *replication.Receiver
	metrics *metrics
	routes  routeSet // Eureka resources, matched after the prefix
	own     routeSet // heureka's endpoints, matched on the whole path
	now     func() time.Time
	audit   *slog.Logger
	writes  *rateLimiter // nil when writes are not limited

	refusals peerRefusals // what was refused of peers (peerrefusals.go)

	watchState watchState
	picks      pickSets      // prepared DataNode sets for /v1/hdfs/pick (hdfspick.go)
	done       chan struct{} // closed by CloseStreams
	closeOnce  sync.Once
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c Config) Validate() error {
	switch {
	case c.MaxBodyBytes <= 0:
		return heureka.InvalidConfig("MaxBodyBytes", c.MaxBodyBytes, "want a positive size")
	case c.CacheEntries <= 0:
		return heureka.InvalidConfig("CacheEntries", c.CacheEntries, "want at least 1")
	case c.MaxWatchers < 0:
		return heureka.InvalidConfig("MaxWatchers", c.MaxWatchers, "want 0 (no streams) or more")
	case c.MaxWatchLag <= 0:
		return heureka.InvalidConfig("MaxWatchLag", c.MaxWatchLag, "want at least 1")
	case c.WriteRate < 0 || math.IsNaN(c.WriteRate) || math.IsInf(c.WriteRate, 0):
		return heureka.InvalidConfig("WriteRate", c.WriteRate, "want a finite number, 0 or more (0 turns the limit off)")
	case c.WriteRate > 0 && c.WriteBurst < 1:
		return heureka.InvalidConfig("WriteBurst", c.WriteBurst, "want at least 1")
	case c.MaxWatchersPerClient < 0:
		return heureka.InvalidConfig("MaxWatchersPerClient", c.MaxWatchersPerClient, "want 0 (no per-client bound) or more")
	}
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "KeepAlive", Value: c.KeepAlive},
		heureka.NamedDuration{Field: "WriteTimeout", Value: c.WriteTimeout},
	); err != nil {
		return err
	}
	return heureka.ConfigIn("Limits", c.Limits.Validate())
}

// New returns a Server that serves reg, or the error of cfg.Validate.
// Nothing listens until the caller mounts Handler on an http.Server, but
// with a registry New starts the background encoder, which holds reg until
// CloseStreams stops it.
func New(cfg Config, reg *registry.Registry, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Ready == nil {
		cfg.Ready = func() bool { return true }
	}
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{
		cfg:    cfg,
		reg:    reg,
		logger: logger.With("subsystem", "http"),
		audit:  logger.With("subsystem", "audit"),
		enc:    newEncoder(reg, time.Now),
		cache:  newPayloadCache(cfg.CacheEntries),
		deltas: newPayloadCache(cfg.CacheEntries),
		peers:  replication.NewReceiver(reg, cfg.NodeID, logger.With("subsystem", "replication")),
		now:    time.Now,
		done:   make(chan struct{}),
	}
	if cfg.WriteRate > 0 {
		s.writes = newRateLimiter(cfg.WriteRate, cfg.WriteBurst)
	}
	s.watchState.perClient = map[string]int{}
	s.metrics = newMetrics(reg, s.Watchers, cfg.Collectors)
	eurekaRoutes, own := s.routeTable()
	classify(eurekaRoutes, own)
	s.routes, s.own = newRouteSet(eurekaRoutes), newRouteSet(own)
	if reg != nil {
		go s.enc.run(s.done, reg.Changed())
	}
	return s, nil
}

// Handler returns the handler to mount at the root of an http.Server.
func (s *Server) Handler() http.Handler { return s }

// ServeHTTP routes one request, admits it (credentials, role, rate
// limit), maps a handler's error to a response, writes the audit line of an
// operator action, and records the request's duration and outcome.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.now()
	sw := &statusWriter{ResponseWriter: w}
	if s.cfg.NodeID != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead || header(r, replication.NodeHeader) != "") {
		// Readers learn from it which server process issued a registry
		// version (package client's resume and restart detection); a peer
		// sends its own and reads ours back, to recognise its own URL in
		// its peer list. Other writes, renewals above all, go without: an
		// answer whose handler never touches the header map spares
		// net/http the map and its copy, a third of what a renewal
		// allocates, which the collector pays for at every cycle of a
		// large registry.
		w.Header().Set(replication.NodeHeader, s.cfg.NodeID)
	}

	rt, h, p, err := s.match(r)
	if err == nil {
		p.who, err = s.admit(r, rt, p, start)
	}
	if err == nil {
		err = h(sw, r, p)
	}
	if err != nil {
		s.writeError(sw, r, err)
		s.notePeerRefusal(r, rt, p.who, sw.code(), err)
	}
	if p.who.audit {
		s.auditLog(r, rt, p, sw.code())
	}

	name := "unmatched"
	if rt != nil {
		name = rt.pattern
	}
	d := s.now().Sub(start)
	code := sw.code()
	s.metrics.observe(name, r.Method, code, d)
	s.logger.LogAttrs(r.Context(), slog.LevelDebug, "request",
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", code),
		slog.Duration("duration", d))
}

// statusWriter remembers the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

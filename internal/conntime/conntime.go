package conntime

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/tick"
	"github.com/prometheus/client_golang/prometheus"
)

// Limits are the bounds a Watchdog keeps; see the package comment.
type Limits struct {
	Header time.Duration
	Body   time.Duration
	Idle   time.Duration
	Answer time.Duration
}

// Validate reports the first limit that is not positive, as a
// *heureka.ConfigError naming it.
func (l Limits) Validate() error {
	return heureka.Positive(
		heureka.NamedDuration{Field: "Header", Value: l.Header},
		heureka.NamedDuration{Field: "Body", Value: l.Body},
		heureka.NamedDuration{Field: "Idle", Value: l.Idle},
		heureka.NamedDuration{Field: "Answer", Value: l.Answer},
	)
}

// Tick is how often a Watchdog with these limits looks at its connections.
func (l Limits) Tick() time.Duration {
	return max(time.Millisecond, min(time.Second, min(l.Idle, l.Answer)/10))
}

// Reasons a connection is cut, the label of the cut counter.
const (
	cutIdle   = "idle"
	cutAnswer = "answer"
)

// Watchdog keeps Limits on the connections of one http.Server.
type Watchdog struct {
	limits Limits
	tick   time.Duration
	logger *slog.Logger
	start  time.Time
	now    atomic.Int64 // nanoseconds since start, as of the last sweep
	cuts   *prometheus.CounterVec

	mu    sync.Mutex
	conns map[*conn]struct{}
}

// New returns a Watchdog keeping l. It does nothing until Guard, Listener
// and Run are called.
func New(l Limits, logger *slog.Logger) (*Watchdog, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	w := &Watchdog{
		limits: l,
		tick:   l.Tick(),
		logger: logger,
		start:  time.Now(),
		cuts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heureka_http_connections_cut_total",
			Help: "Client connections closed for idling past the idle timeout or for not reading an answer, by reason (idle, answer).",
		}, []string{"reason"}),
		conns: make(map[*conn]struct{}),
	}
	for _, why := range []string{cutIdle, cutAnswer} {
		w.cuts.WithLabelValues(why) // exported at 0 from the start
	}
	return w, nil
}

// Guard sets srv up for w: net/http's header timeout, and none of the
// timeouts w replaces; a hook on srv.ConnState that keeps any hook set
// before; and a handler around srv.Handler that gives a request with a
// body its read deadline (and an HTTP/2 request its write deadline).
func (w *Watchdog) Guard(srv *http.Server) {
	srv.ReadHeaderTimeout = w.limits.Header
	srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = 0, 0, 0
	before := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		w.noteState(c, s)
		if before != nil {
			before(c, s)
		}
	}
	next := srv.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	srv.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 || r.ProtoMajor > 1 {
			w.setDeadlines(rw, r)
		}
		next.ServeHTTP(rw, r)
	})
}

// setDeadlines gives a request with a body its Body deadline and an
// HTTP/2 request its Answer deadline. net/http lifts the read deadline
// once the body has been read, before it waits for the next request.
func (w *Watchdog) setDeadlines(rw http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(rw)
	now := time.Now()
	if r.ContentLength != 0 {
		_ = rc.SetReadDeadline(now.Add(w.limits.Body))
	}
	if r.ProtoMajor > 1 {
		_ = rc.SetWriteDeadline(now.Add(w.limits.Answer))
	}
}

// Listener returns ln with every connection it accepts watched by w.
func (w *Watchdog) Listener(ln net.Listener) net.Listener { return listener{ln, w} }

// Collector counts the connections w cut, by reason.
func (w *Watchdog) Collector() prometheus.Collector { return w.cuts }

// Run sweeps w's connections every Tick until ctx ends; it returns nil.
func (w *Watchdog) Run(ctx context.Context) error {
	tick.Every(ctx, w.tick, nil, func() { w.sweep(time.Since(w.start).Nanoseconds()) })
	return nil
}

// sweep closes every connection past a bound at now (nanoseconds since
// start). A write counts as blocked once it has lasted two ticks: one it
// began in, and a whole one after.
func (w *Watchdog) sweep(now int64) {
	w.now.Store(now)
	idle, answer, stuck := w.limits.Idle.Nanoseconds(), w.limits.Answer.Nanoseconds(), 2*w.tick.Nanoseconds()
	type cutting struct {
		c   *conn
		why string
	}
	var cut []cutting
	w.mu.Lock()
	for c := range w.conns {
		since := c.since.Load()
		switch c.state.Load() {
		case stateIdle:
			if now-max(since, c.lastRead.Load()) > idle {
				cut = append(cut, cutting{c, cutIdle})
			}
		case stateActive:
			if c.http2.Load() || c.ownWrite.Load() {
				continue
			}
			if ws := c.writeSince.Load(); ws != 0 && now-ws >= stuck && now-since > answer {
				cut = append(cut, cutting{c, cutAnswer})
			}
		}
	}
	w.mu.Unlock()
	for _, x := range cut {
		c := x.c
		w.cuts.WithLabelValues(x.why).Inc()
		w.logger.Debug("cut a client's connection", "reason", x.why, "remote", c.RemoteAddr().String())
		if l, ok := c.Conn.(interface{ SetLinger(int) error }); ok && x.why == cutAnswer {
			// Reset rather than close: the client is not reading, and a
			// closed socket would keep the unsent part of its answer (up
			// to the send buffer, megabytes) until the kernel gives up.
			_ = l.SetLinger(0)
		}
		_ = c.Close()
	}
}

// The states the sweep tells apart; a new connection's first header is
// bounded by net/http's header timeout alone.
const (
	stateNew int32 = iota
	stateActive
	stateIdle
)

// noteState records a connection's move to s, as net/http reports it.
func (w *Watchdog) noteState(nc net.Conn, s http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		c, ok := tc.NetConn().(*conn)
		if !ok {
			return
		}
		// The handshake is over before a first request: its protocol is
		// known then, and looked up once, not on every request.
		if s == http.StateActive && !c.protoKnown.Load() {
			c.http2.Store(tc.ConnectionState().NegotiatedProtocol == "h2")
			c.protoKnown.Store(true)
		}
		nc = c
	}
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	switch s {
	case http.StateActive:
		c.since.Store(w.now.Load())
		c.state.Store(stateActive)
	case http.StateIdle:
		c.since.Store(w.now.Load())
		c.state.Store(stateIdle)
	case http.StateHijacked, http.StateClosed:
		w.forget(c)
	}
}

func (w *Watchdog) forget(c *conn) {
	w.mu.Lock()
	delete(w.conns, c)
	w.mu.Unlock()
}

type listener struct {
	net.Listener
	w *Watchdog
}

func (l listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, w: l.w}
	l.w.mu.Lock()
	l.w.conns[c] = struct{}{}
	l.w.mu.Unlock()
	return c, nil
}

// conn is one watched connection. Times are the watchdog's nanoseconds
// since its start, as of its last sweep. It has no ReadFrom, so that
// net/http writes every answer through Write, where it is watched.
type conn struct {
	net.Conn
	w *Watchdog

	state      atomic.Int32
	since      atomic.Int64 // when state began
	lastRead   atomic.Int64 // when a read last returned bytes
	writeSince atomic.Int64 // when the write in progress began; 0: none
	ownWrite   atomic.Bool  // the handler set a write deadline
	http2      atomic.Bool  // HTTP/2 over TLS, once protoKnown
	protoKnown atomic.Bool
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lastRead.Store(c.w.now.Load())
	}
	return n, err
}

func (c *conn) Write(p []byte) (int, error) {
	// 1, not 0, before the first sweep: 0 means no write in progress.
	c.writeSince.Store(max(1, c.w.now.Load()))
	n, err := c.Conn.Write(p)
	c.writeSince.Store(0)
	return n, err
}

func (c *conn) SetDeadline(t time.Time) error {
	c.ownWrite.Store(!t.IsZero())
	return c.Conn.SetDeadline(t)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.ownWrite.Store(!t.IsZero())
	return c.Conn.SetWriteDeadline(t)
}

// CloseWrite lets net/http half-close a connection it is done with, as it
// does a bare TCP connection.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *conn) Close() error {
	c.w.forget(c)
	return c.Conn.Close()
}

package httpapi

import (
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/heureka-project/heureka/internal/auth"
	"golang.org/x/time/rate"
)

// caller is who sent a request, as far as authorisation, limits and audit
// care.
type caller struct {
	principal *auth.Principal // nil: anonymous, or auth is off
	host      string          // the remote IP address
	// key names the client for per-client limits: user@host when
	// authenticated, else host.
	key string
	// exempt callers have no per-client limits: peers, and anonymous
	// clients on loopback, which cannot be told apart (every local
	// process, a simulator of a hundred agents included, is 127.0.0.1).
	exempt bool
	// audit marks an operator action: logged once the answer is known.
	audit bool
}

// name is the caller for logs.
func (c caller) name() string {
	if c.principal != nil {
		return c.principal.Name
	}
	return "anonymous"
}

// admit authenticates and authorises r for route rt when auth is on, and
// applies the per-client write rate limit at now, the time ServeHTTP
// took when r came (the clock is read once per request). It returns who r
// comes from.
//
// With auth off every request is served, as in Eureka; writes carrying the
// replication header and peer endpoints are exempt from the rate limit then,
// since peers cannot be told from clients.
func (s *Server) admit(r *http.Request, rt *route, p params, now time.Time) (caller, error) {
	acc := rt.access[r.Method]
	if acc.open {
		return caller{exempt: true}, nil
	}
	c := caller{host: remoteHost(r)}
	repl := isReplication(r)
	if s.cfg.Auth != nil {
		pr, err := s.cfg.Auth.Authenticate(r)
		if err != nil {
			return c, err
		}
		c.principal = pr // named in the log of a refusal, too
		req := auth.Request{Action: acc.action, Verb: acc.verb, App: p.app, ID: p.id}
		if repl && acc.action == auth.Write {
			// A replicated write skips the rules that protect an
			// instance's own status; only peers may send one.
			req.Action, req.Verb = auth.Replicate, "send a replicated write ("+replicationHeader+") to"
		}
		dec, err := s.cfg.Auth.Authorize(pr, req)
		if err != nil {
			return c, err
		}
		c.principal, c.audit = pr, dec.Audit
		c.exempt = pr.Has(auth.RolePeer)
	} else {
		c.exempt = repl || acc.action == auth.Replicate
	}
	if c.principal != nil {
		c.key = c.principal.Name + "@" + c.host
	} else {
		c.key = c.host
		if a, err := netip.ParseAddr(c.host); err == nil && a.IsLoopback() {
			c.exempt = true
		}
	}
	if isWrite(r.Method) && !c.exempt && s.writes != nil {
		if ok, wait := s.writes.allow(c.key, now); !ok {
			return c, &limitError{retryAfter: wait, msg: fmt.Sprintf(
				"too many writes from %s: the limit is %g per second with bursts of %d; retry in %s",
				c.key, s.cfg.WriteRate, s.cfg.WriteBurst, wait.Round(time.Millisecond))}
		}
	}
	return c, nil
}

func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// remoteHost is the IP address of r's peer; forwarded-for headers are not
// trusted.
func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// auditLog writes the one line of an operator action, with its outcome.
func (s *Server) auditLog(r *http.Request, rt *route, p params, code int) {
	acc := rt.access[r.Method]
	detail := r.URL.RawQuery
	if len(detail) > 512 {
		detail = detail[:512] + "…"
	}
	method := ""
	if p.who.principal != nil {
		method = p.who.principal.Method
	}
	s.audit.LogAttrs(r.Context(), slog.LevelInfo, "operator action",
		slog.String("user", p.who.name()),
		slog.String("auth", method),
		slog.String("action", acc.verb),
		slog.String("app", p.app),
		slog.String("id", p.id),
		slog.String("query", detail),
		slog.Int("status", code),
		slog.String("remote", p.who.host))
}

// limitError is a per-client limit reached: 429 with Retry-After.
type limitError struct {
	msg        string
	retryAfter time.Duration
}

func (e *limitError) Error() string { return e.msg }

// retryAfterSeconds is Retry-After's value: whole seconds, at least one.
func (e *limitError) retryAfterSeconds() string {
	return strconv.Itoa(max(1, int(math.Ceil(e.retryAfter.Seconds()))))
}

// rateLimiter keeps a token bucket per client (golang.org/x/time/rate):
// rate tokens a second, at most burst saved up, one per write. It is safe
// for concurrent use.
type rateLimiter struct {
	rate  rate.Limit
	burst int

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
}

func newRateLimiter(r float64, burst int) *rateLimiter {
	return &rateLimiter{rate: rate.Limit(r), burst: burst, buckets: map[string]*rate.Limiter{}}
}

// allow takes a token from key's bucket, or says how long until one is
// there. A refused write takes nothing.
func (l *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(l.rate, l.burst)
		l.buckets[key] = b
	}
	res := b.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep forgets buckets that have filled up again, so that the map holds
// only clients that wrote within the last burst/rate seconds. It runs at
// most every ten seconds.
func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < 10*time.Second {
		return
	}
	l.lastSweep = now
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
}

// size is the number of clients tracked, for tests.
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

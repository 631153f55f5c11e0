package httpapi

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/heureka-project/heureka/internal/auth"
)

// peerRefusals counts what this server refused of what claims to come from
// a peer: any refused request to a peer endpoint (/peerreplication/batch,
// the anti-entropy reads), and a write carrying the replication header
// that was not allowed to. /v1/status shows the counts by reason and the
// last refusal; each is also logged.
type peerRefusals struct {
	mu       sync.Mutex
	byReason map[string]uint64
	last     *lastRefusal
}

// lastRefusal is the latest refused peer request, for /v1/status.
type lastRefusal struct {
	Time   time.Time `json:"time"`
	From   string    `json:"from"`           // the remote address
	User   string    `json:"user,omitempty"` // the authenticated caller, if any
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Status int       `json:"status"`
	Error  string    `json:"error"`
}

// refusalReason names a refused status for the counts.
func refusalReason(code int) string {
	switch {
	case code == http.StatusUnauthorized:
		return "unauthenticated"
	case code == http.StatusForbidden:
		return "forbidden"
	case code == http.StatusRequestEntityTooLarge:
		return "tooLarge"
	case code == http.StatusConflict:
		return "lateBatch"
	case code == http.StatusTooManyRequests:
		return "rateLimited"
	case code >= 500:
		return "failed"
	}
	return "invalid"
}

// notePeerRefusal counts and logs r's refusal when r claims to come from
// a peer: on a peer endpoint, any error; on a write with the replication
// header, a refused authorisation (the rest, such as a 404 heartbeat, is
// the protocol).
func (s *Server) notePeerRefusal(r *http.Request, rt *route, who caller, code int, err error) {
	if err == nil || code < 400 || rt == nil {
		return
	}
	peerEndpoint := rt.access[r.Method].action == auth.Replicate
	if !peerEndpoint && !(isReplication(r) && (code == http.StatusUnauthorized || code == http.StatusForbidden)) {
		return
	}
	lr := &lastRefusal{Time: s.now().UTC(), From: r.RemoteAddr, Method: r.Method, Path: r.URL.Path, Status: code, Error: err.Error()}
	if who.principal != nil {
		lr.User = who.principal.Name
	}
	reason := refusalReason(code)
	s.refusals.mu.Lock()
	if s.refusals.byReason == nil {
		s.refusals.byReason = map[string]uint64{}
	}
	s.refusals.byReason[reason]++
	s.refusals.last = lr
	s.refusals.mu.Unlock()
	s.logger.LogAttrs(r.Context(), slog.LevelWarn, "refused a request claiming to come from a peer",
		slog.String("reason", reason), slog.String("from", lr.From), slog.String("user", lr.User),
		slog.String("method", r.Method), slog.String("path", lr.Path), slog.Int("status", code), slog.Any("err", err))
}

// peerRefusalStatus is the "peerRefusals" entry of /v1/status.
func (s *Server) peerRefusalStatus() map[string]any {
	s.refusals.mu.Lock()
	defer s.refusals.mu.Unlock()
	by := make(map[string]uint64, len(s.refusals.byReason))
	for k, v := range s.refusals.byReason {
		by[k] = v
	}
	out := map[string]any{"requests": by, "items": s.peers.ItemsRefused()}
	if s.refusals.last != nil {
		out["last"] = *s.refusals.last
	}
	return out
}

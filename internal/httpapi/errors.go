package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/auth"
)

// statusOf is the one place an error becomes an HTTP status.
func statusOf(err error) int {
	// errors.AsType, not As, here and in errorHeaders: As's reflection was
	// a fifth of a renewal's 404, which a restarted registry answers every
	// agent once (BenchmarkRenewUnknown).
	if _, ok := errors.AsType[*methodError](err); ok {
		return http.StatusMethodNotAllowed
	}
	if ae, ok := errors.AsType[*auth.Error](err); ok {
		if ae.Kind == auth.Forbidden {
			return http.StatusForbidden
		}
		return http.StatusUnauthorized
	}
	if _, ok := errors.AsType[*limitError](err); ok {
		return http.StatusTooManyRequests
	}
	return heureka.HTTPStatus(err)
}

// writeError answers r with err's status and message, as JSON to clients
// whose Accept mentions json and as XML to everyone else (Eureka's error
// shapes). An internal error's text is logged here, once, and replaced by a
// generic message; every 5xx is logged at Error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	msg := err.Error()
	if code == http.StatusInternalServerError {
		msg = "internal server error"
	}
	if code >= 500 {
		s.logger.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", code),
			slog.Any("err", err))
	}

	errorHeaders(w.Header(), err, code)
	f := eureka.FormatFor(r.Header.Get("Accept"))
	body := eureka.AppendError(make([]byte, 0, 64+len(msg)), f, msg)
	h := w.Header()
	h.Set("Content-Type", f.ContentType())
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// errorHeaders sets the headers that come with an error of heureka's
// transports: Allow for a wrong method, the auth schemes for a 401,
// Retry-After for a limit.
func errorHeaders(h http.Header, err error, code int) {
	if me, ok := errors.AsType[*methodError](err); ok {
		h.Set("Allow", strings.Join(me.allow, ", "))
	}
	if code == http.StatusUnauthorized {
		// Both schemes are offered: Eureka clients answer Basic; heureka's
		// own clients and agents may send a token.
		bearer := `Bearer realm="heureka"`
		if ae, ok := errors.AsType[*auth.Error](err); ok && ae.InvalidToken {
			bearer += `, error="invalid_token"`
		}
		h.Add("WWW-Authenticate", `Basic realm="heureka", charset="UTF-8"`)
		h.Add("WWW-Authenticate", bearer)
	}
	if le, ok := errors.AsType[*limitError](err); ok {
		h.Set("Retry-After", le.retryAfterSeconds())
	}
}

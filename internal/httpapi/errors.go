package httpapi

import (
	"encoding/json"
	"encoding/xml"
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
	var me *methodError
	if errors.As(err, &me) {
		return http.StatusMethodNotAllowed
	}
	var ae *auth.Error
	if errors.As(err, &ae) {
		if ae.Kind == auth.Forbidden {
			return http.StatusForbidden
		}
		return http.StatusUnauthorized
	}
	var le *limitError
	if errors.As(err, &le) {
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

	var me *methodError
	if errors.As(err, &me) {
		w.Header().Set("Allow", strings.Join(me.allow, ", "))
	}
	if code == http.StatusUnauthorized {
		// Both schemes are offered: Eureka clients answer Basic; heureka's
		// own clients and agents may send a token.
		bearer := `Bearer realm="heureka"`
		var ae *auth.Error
		if errors.As(err, &ae) && ae.InvalidToken {
			bearer += `, error="invalid_token"`
		}
		w.Header().Add("WWW-Authenticate", `Basic realm="heureka", charset="UTF-8"`)
		w.Header().Add("WWW-Authenticate", bearer)
	}
	var le *limitError
	if errors.As(err, &le) {
		w.Header().Set("Retry-After", le.retryAfterSeconds())
	}
	var body []byte
	f := eureka.FormatFor(r.Header.Get("Accept"))
	if f == eureka.JSON {
		body, _ = json.Marshal(struct {
			Error string `json:"error"`
		}{msg})
	} else {
		var b strings.Builder
		b.WriteString("<error><message>")
		_ = xml.EscapeText(&b, []byte(msg))
		b.WriteString("</message></error>")
		body = []byte(b.String())
	}
	w.Header().Set("Content-Type", f.ContentType())
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

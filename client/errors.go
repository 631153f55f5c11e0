package client

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/heureka-project/heureka"
)

// Sentinel causes; every error a call returns is an *Error wrapping one of
// these, a context error, or a transport error. Test with errors.Is. They
// are *heureka.Error values, so heureka.ErrorCode works on them too.
var (
	// ErrNotRegistered: the registry does not know the instance (it
	// answered 404). An agent registers again.
	ErrNotRegistered error = heureka.Errorf(heureka.ENOTFOUND, "instance is not registered")
	// ErrUnavailable: no registry of the cluster gave an answer (every
	// attempt failed to connect, timed out or got a 5xx). The wrapped
	// chain also holds the last attempt's own error.
	ErrUnavailable error = heureka.Errorf(heureka.EUNAVAILABLE, "no registry answered")
	// ErrRejected: a registry answered with a 4xx other than 404 (a bad
	// request, a body too large, …). Retrying the same call will not help.
	ErrRejected error = heureka.Errorf(heureka.EINVALID, "request rejected")
)

// Error describes a failed call: which call, which URL, what the server
// said. Err is the cause (see the sentinels above).
type Error struct {
	Op      string // the call: "register", "renew", "fetch", "watch", …
	Method  string
	URL     string // the last URL tried, with any password redacted
	Status  int    // the last HTTP status, 0 when no answer came
	Message string // the server's message, or a summary of the failure
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Method != "" {
		b.WriteString(" ")
		b.WriteString(e.Method)
	}
	if e.URL != "" {
		b.WriteString(" ")
		b.WriteString(e.URL)
	}
	b.WriteString(": ")
	if e.Status != 0 && !errors.Is(e.Err, ErrUnavailable) {
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
		if e.Message != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	if e.Message == "" && e.Status == 0 && e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// serverMessage extracts a registry's error message from a response body:
// heureka's and Eureka's {"error":"…"} JSON, <error><message>…</message>
// </error> XML, or short plain text; at most 512 bytes of it.
func serverMessage(contentType string, body []byte) string {
	const limit = 512
	var msg string
	var j struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	var x struct {
		Message string `xml:"message"`
	}
	switch {
	case len(body) == 0:
		return ""
	case strings.Contains(contentType, "json") && json.Unmarshal(body, &j) == nil:
		switch v := j.Error.(type) {
		case string:
			msg = v
		case map[string]any:
			msg, _ = v["message"].(string)
		}
		if msg == "" {
			msg = j.Message
		}
	case strings.Contains(contentType, "xml") && xml.Unmarshal(body, &x) == nil:
		msg = x.Message
	case strings.HasPrefix(contentType, "text/plain"):
		msg = string(body)
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// isNotRegistered reports whether err is a 404 from the registry.
func isNotRegistered(err error) bool { return errors.Is(err, ErrNotRegistered) }

package server

import (
	"log/slog"
	"net"
	"strings"
	"testing"
)

// TestServerWarnsWhenExposed: no warning on loopback; a loud one on any
// other address without auth, and another when auth is on without TLS.
func TestServerWarnsWhenExposed(t *testing.T) {
	logs := &strings.Builder{}
	s := New(DefaultConfig(), slog.New(slog.NewTextHandler(logs, nil)))
	s.warnIfExposed(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8761}, false, false)
	s.warnIfExposed(&net.TCPAddr{IP: net.IPv6loopback, Port: 8761}, false, false)
	if logs.String() != "" {
		t.Fatalf("warning on loopback: %s", logs)
	}
	s.warnIfExposed(&net.TCPAddr{IP: net.IPv4zero, Port: 8761}, false, false)
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "INSECURE: listening on a non-loopback address without authentication") ||
		!strings.Contains(logs.String(), "--auth-file") {
		t.Fatalf("no loud warning for 0.0.0.0 without auth: %s", logs)
	}
	before := logs.String()
	s.warnIfExposed(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 8761}, true, false)
	if after := strings.TrimPrefix(logs.String(), before); !strings.Contains(after, "TLS is off") {
		t.Fatalf("no warning for auth without TLS: %s", after)
	}
	before = logs.String()
	s.warnIfExposed(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 8761}, true, true)
	if logs.String() != before {
		t.Fatalf("warning with auth and TLS on: %s", strings.TrimPrefix(logs.String(), before))
	}
}

// Package servertest runs real registry servers for the tests of the
// packages around them, as net/http/httptest runs HTTP servers: the real
// wiring (server.Server) on a free loopback port, stopped when the test
// ends.
//
// Its functions are safe for concurrent use by parallel tests; each server
// is its own.
package servertest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/server"
)

// Open runs a server with the default configuration, changed by edit when
// it is not nil, on a free loopback port, and closes it when the test
// ends. Its logs of warnings and worse go to the test's output.
func Open(t testing.TB, edit func(*server.Config)) *server.Server {
	t.Helper()
	return OpenLogged(t, edit, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// OpenLogged is Open with the server's logs going to logger.
func OpenLogged(t testing.TB, edit func(*server.Config), logger *slog.Logger) *server.Server {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	if edit != nil {
		edit(&cfg)
	}
	s := server.New(cfg, logger)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// URL is s's Eureka base URL, http://127.0.0.1:PORT/eureka.
func URL(s *server.Server) string { return "http://" + s.Addr().String() + "/eureka" }

// Register registers each of ins with s over HTTP, in Eureka's JSON, as a
// client does.
func Register(t testing.TB, s *server.Server, ins ...*heureka.Instance) {
	t.Helper()
	for _, in := range ins {
		body := eureka.EncodeInstance(eureka.JSON, in)
		resp, err := http.Post(URL(s)+"/apps/"+in.App, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("register %s: %v", in, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("register %s: %s %s", in, resp.Status, msg)
		}
	}
}

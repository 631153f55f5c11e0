package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/proctest"
)

// TestFollowResyncsAfterARestart follows /v1/events of a real server, then
// restarts the server's registry empty: the resumed stream cannot go on
// from the old version, so Follow calls Sync again and follows the new
// registry from its version, missing nothing registered after.
func TestFollowResyncsAfterARestart(t *testing.T) {
	s := startServer(t)
	s.versionHeader.Store(true)
	s.register(t, "ORDERS", "o1", heureka.StatusUp)
	c := newClient(t, s.URL)

	var mu sync.Mutex
	var reasons []string
	events := make(chan heureka.Event, 16)
	cfg := client.DefaultFollowConfig()
	cfg.Stream = client.EventsStream
	cfg.FirstBackoff, cfg.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	cfg.Sync = func(ctx context.Context, reason string) (client.Position, error) {
		_, pos, err := c.Listing(ctx)
		mu.Lock()
		reasons = append(reasons, reason)
		mu.Unlock()
		return pos, err
	}
	cfg.Handle = func(ev client.Event) error {
		if ev.Type == heureka.StreamProgress {
			return nil
		}
		var e heureka.Event
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return err
		}
		events <- e
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Follow(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Follow: %v", err)
		}
	})

	nextRegistered := func(id string) {
		t.Helper()
		for {
			select {
			case e := <-events:
				if e.Type == heureka.EventRegistered {
					if e.ID != id {
						t.Fatalf("registered %s, want %s (the listing already had what came before)", e.ID, id)
					}
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no registered event for %s", id)
			}
		}
	}
	// The stream is open once the server counts a watcher.
	proctest.Eventually(t, 10*time.Second, "the stream to open", func() bool { return s.api.Load().Watchers() == 1 })
	s.register(t, "ORDERS", "o2", heureka.StatusUp)
	nextRegistered("o2")

	old := s.api.Load()
	s.restartEmpty(t)
	old.CloseStreams() // the restarted process has none of the old streams
	proctest.Eventually(t, 10*time.Second, "a resync", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reasons) == 2
	})
	mu.Lock()
	if reasons[0] != "" || reasons[1] == "" {
		t.Fatalf("Sync reasons %q: want the start (\"\") then a resync with its reason", reasons)
	}
	mu.Unlock()
	proctest.Eventually(t, 10*time.Second, "the stream to reopen", func() bool { return s.api.Load().Watchers() == 1 })
	s.register(t, "ORDERS", "o3", heureka.StatusUp)
	nextRegistered("o3")
}

// TestFollowReportsHandleErrors: a handler's error ends Follow with it.
func TestFollowReportsHandleErrors(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s.URL)
	stop := errors.New("enough")
	cfg := client.DefaultFollowConfig()
	cfg.Stream = client.EventsStream
	cfg.From = &client.Position{Version: 0} // replay from the start
	cfg.Handle = func(client.Event) error { return stop }
	s.register(t, "ORDERS", "o1", heureka.StatusUp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Follow(ctx, cfg); !errors.Is(err, stop) {
		t.Fatalf("Follow = %v, want the handler's error", err)
	}
}

func TestFollowConfigValidate(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:9/eureka")
	cfg := client.DefaultFollowConfig()
	cfg.Handle = func(client.Event) error { return nil }
	cfg.Stream = "/v1/other"
	if err := c.Follow(context.Background(), cfg); err == nil || heureka.ErrorCode(err) != heureka.EINVALID {
		t.Fatalf("Follow with stream %q: %v, want EINVALID", cfg.Stream, err)
	}
}

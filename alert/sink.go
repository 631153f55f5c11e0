package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// sink delivers alert changes to one destination, in order, retrying
// until each is delivered (or refused as invalid).
type sink struct {
	name     string
	url      string
	webhook  bool
	client   *http.Client
	maxQueue int
	log      *slog.Logger

	mu    sync.Mutex
	queue []queuedAlert
	next  uint64 // number of the next queued alert
	wake  chan struct{}
	busy  bool
}

// queuedAlert is an alert change waiting for delivery; n orders them.
type queuedAlert struct {
	n uint64
	WebhookAlert
}

func newAlertSink(name, u string, webhook bool, client *http.Client, maxQueue int, log *slog.Logger) *sink {
	return &sink{name: name, url: u, webhook: webhook, client: client, maxQueue: maxQueue,
		log: log.With("destination", name), wake: make(chan struct{}, 1)}
}

func (s *sink) enqueue(a Alert, status string) {
	s.mu.Lock()
	a.Labels, a.Annotations = maps.Clone(a.Labels), maps.Clone(a.Annotations)
	s.next++
	s.queue = append(s.queue, queuedAlert{n: s.next, WebhookAlert: WebhookAlert{Status: status, Alert: a}})
	if over := len(s.queue) - s.maxQueue; over > 0 {
		s.log.Error("too many undelivered alerts; dropping the oldest", "dropped", over)
		s.queue = slices.Delete(s.queue, 0, over)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run sends batches until ctx ends.
func (s *sink) run(ctx context.Context) {
	backoff := 500 * time.Millisecond
	for {
		if s.sendBatch(ctx) {
			backoff = 500 * time.Millisecond
			continue
		}
		s.mu.Lock()
		pending := len(s.queue) > 0
		s.mu.Unlock()
		wait := time.Duration(1<<62 - 1)
		if pending {
			wait = backoff
			backoff = min(backoff*2, 30*time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-time.After(wait):
		}
	}
}

// sendBatch posts what is queued; it reports whether it made progress.
func (s *sink) sendBatch(ctx context.Context) bool {
	s.mu.Lock()
	if len(s.queue) == 0 || s.busy {
		s.mu.Unlock()
		return false
	}
	s.busy = true
	batch := slices.Clone(s.queue[:min(len(s.queue), 500)])
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()

	var body []byte
	if s.webhook {
		hooks := make([]WebhookAlert, len(batch))
		for i, a := range batch {
			hooks[i] = a.WebhookAlert
		}
		body, _ = json.Marshal(hooks)
	} else {
		plain := make([]Alert, len(batch))
		for i, a := range batch {
			plain[i] = a.Alert
		}
		body, _ = json.Marshal(plain)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		s.log.Error("bad destination URL", "err", err)
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cannot deliver alerts; will retry", "url", s.url, "alerts", len(batch), "err", err)
		}
		return false
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		s.log.Debug("alerts delivered", "alerts", len(batch))
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusRequestTimeout:
		// Sending the same again will not help.
		s.log.Error("destination refused the alerts; dropping them", "url", s.url, "status", resp.Status,
			"answer", strings.TrimSpace(string(msg)), "alerts", len(batch))
	default:
		s.log.Warn("destination failed; will retry", "url", s.url, "status", resp.Status, "alerts", len(batch))
		return false
	}
	// Drop what was sent; the oldest may have been dropped meanwhile.
	last := batch[len(batch)-1].n
	s.mu.Lock()
	i := 0
	for i < len(s.queue) && s.queue[i].n <= last {
		i++
	}
	s.queue = s.queue[i:]
	s.mu.Unlock()
	return true
}

// drain tries to deliver what is queued until deadline.
func (s *sink) drain(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for ctx.Err() == nil {
		s.mu.Lock()
		n, busy := len(s.queue), s.busy
		s.mu.Unlock()
		if n == 0 && !busy {
			return
		}
		if !busy && !s.sendBatch(ctx) {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		} else if busy {
			time.Sleep(20 * time.Millisecond)
		}
	}
	s.mu.Lock()
	if n := len(s.queue); n > 0 {
		s.log.Error("undelivered alerts at exit", "alerts", n)
	}
	s.mu.Unlock()
}

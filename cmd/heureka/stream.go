package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heureka-project/heureka/client"
)

// This file follows heureka's Server-Sent Event streams (GET /v1/watch and
// GET /v1/events) for watch, events and alert: it reads the SSE format,
// resumes a dropped stream with Last-Event-ID, and handles the server's
// resync event (and a server that restarted) by re-reading.

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	typ  string // "message" when the stream names none
	id   string
	data []byte
}

// sseReader reads the text/event-stream format with the client package's
// reader.
type sseReader struct{ r *client.EventReader }

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: client.NewEventReader(r, 16<<20)}
}

func (s *sseReader) next() (sseEvent, error) {
	ev, err := s.r.Next()
	return sseEvent{typ: ev.Type, id: ev.ID, data: ev.Data}, err
}

// streamFollower follows one SSE stream of a heureka server across
// disconnects. The position is the registry version of the last event
// handled; it belongs to one server process (node), so a stream served by
// another node, or a resync event, is handled by sync (re-read the
// registry) or, without sync, by following from the server's latest
// version and saying so.
type streamFollower struct {
	rc   *registryConn
	path string   // "/v1/watch" or "/v1/events"
	apps []string // ?app= filters; nil means every app

	since    uint64 // the last version handled
	hasSince bool   // false: start from the server's latest version
	node     string // the server process that since belongs to

	// sync, if set, re-reads the registry: it is called before the first
	// connection (reason "") and on every resync, and returns the version
	// to follow from and the node that served the listing.
	sync func(ctx context.Context, reason string) (version uint64, node string, err error)
	// handle is called for every event that carries an id, in order; the
	// position moves past the event once it returns nil.
	handle func(ev sseEvent) error
	// note reports what the follower does (reconnects, resyncs); nil
	// discards.
	note func(format string, args ...any)

	idle       time.Duration // a stream silent this long is dropped (default 45 s)
	maxBackoff time.Duration // between reconnection attempts (default 15 s)
}

// errNotHeureka is a registry without heureka's streams.
var errNotHeureka = errors.New("not a heureka server")

// run follows the stream until ctx ends (then it returns nil). It fails
// only if the first connection (or the first sync) fails, or the server
// does not serve the stream at all.
func (f *streamFollower) run(ctx context.Context) error {
	if f.note == nil {
		f.note = func(string, ...any) {}
	}
	if f.idle <= 0 {
		f.idle = 45 * time.Second // three of the server's keep-alives
	}
	if f.maxBackoff <= 0 {
		f.maxBackoff = 15 * time.Second
	}
	if f.sync != nil && !f.hasSince {
		v, node, err := f.sync(ctx, "")
		if err != nil {
			return err
		}
		f.since, f.hasSince, f.node = v, true, node
	}
	backoff := 250 * time.Millisecond
	connectedOnce := false
	for {
		connected, err := f.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if connected {
			connectedOnce = true
			backoff = 250 * time.Millisecond
		}
		if err == nil {
			continue // resynced or switched: reconnect at once
		}
		if errors.Is(err, errNotHeureka) || (!connectedOnce && !connected) {
			return err
		}
		f.note("event stream: %v; reconnecting in %v", err, backoff.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, f.maxBackoff)
	}
}

// once makes one connection and reads it to its end. connected says the
// server accepted the stream; a nil error means reconnect at once.
func (f *streamFollower) once(ctx context.Context) (connected bool, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := url.Values{}
	for _, a := range f.apps {
		q.Add("app", a)
	}
	path := f.path
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	hdr := http.Header{"Accept": {"text/event-stream"}}
	if f.hasSince {
		hdr.Set("Last-Event-ID", strconv.FormatUint(f.since, 10))
	}
	resp, base, err := f.rc.get(cctx, false, path, hdr)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return false, fmt.Errorf("%w: %s answers 404 to %s; point --registry at a heureka server", errNotHeureka, rootOf(base), f.path)
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, fmt.Errorf("%s%s: %s%s%s", rootOf(base), f.path, resp.Status, serverSays(body), authHint(resp.StatusCode))
	}
	node := resp.Header.Get("X-Heureka-Node")
	if f.hasSince && f.node != "" && node != "" && node != f.node {
		// Versions are per server process: ours means nothing here.
		return true, f.resync(ctx, fmt.Sprintf("the registry at %s is another server process now (node %s, was %s)", rootOf(base), node, f.node), 0, node)
	}
	if f.node == "" {
		f.node = node
	}

	// A stream that stays silent past the server's keep-alives is dead.
	timer := time.AfterFunc(f.idle, cancel)
	defer timer.Stop()
	body := readerFunc(func(p []byte) (int, error) {
		n, err := resp.Body.Read(p)
		timer.Reset(f.idle)
		return n, err
	})
	r := newSSEReader(body)
	for {
		ev, err := r.next()
		if err != nil {
			if ctx.Err() != nil {
				return true, nil
			}
			if cctx.Err() != nil {
				return true, fmt.Errorf("%s%s was silent for %v", rootOf(base), f.path, f.idle)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return true, fmt.Errorf("%s%s closed the stream", rootOf(base), f.path)
			}
			return true, err
		}
		switch ev.typ {
		case "hello":
			var h struct {
				Version uint64 `json:"version"`
			}
			if json.Unmarshal(ev.data, &h) == nil && !f.hasSince {
				f.since, f.hasSince = h.Version, true
			}
			continue
		case "resync":
			var rs struct {
				Reason  string `json:"reason"`
				Version uint64 `json:"version"`
			}
			_ = json.Unmarshal(ev.data, &rs)
			return true, f.resync(ctx, rs.Reason, rs.Version, node)
		}
		if ev.id == "" {
			continue
		}
		seq, err := strconv.ParseUint(ev.id, 10, 64)
		if err != nil {
			return true, fmt.Errorf("the stream sent event id %q, not a version", ev.id)
		}
		if err := f.handle(ev); err != nil {
			return true, err
		}
		f.since, f.hasSince = seq, true
	}
}

// resync moves the position after the server could not resume it.
func (f *streamFollower) resync(ctx context.Context, reason string, version uint64, node string) error {
	if f.sync != nil {
		v, n, err := f.sync(ctx, reason)
		if err != nil {
			return fmt.Errorf("re-reading the registry after a resync: %w", err)
		}
		f.since, f.hasSince, f.node = v, true, n
		return nil
	}
	if version > 0 && (node == "" || node == f.node) {
		f.note("resync: %s; following from version %d", reason, version)
		f.since, f.hasSince = version, true
		return nil
	}
	f.note("resync: %s; following from the server's latest version", reason)
	f.since, f.hasSince, f.node = 0, false, node
	return nil
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
)

// The watch stream (GET /v1/watch) and the event stream (GET /v1/events)
// are Server-Sent Events read straight from the registry's change log:
//
//   - every event's id is the registry version (change sequence number) it
//     carries, so a client that reconnects with Last-Event-ID (or ?since=)
//     gets every change after it, in order;
//   - when that version is no longer in the log (or lies in the future, as
//     after a server restart) the stream sends one "resync" event and ends:
//     the client fetches the full registry and watches again from its
//     version (served as X-Heureka-Version on /eureka/apps);
//   - a watcher has no queue of its own: it reads the shared, immutable log
//     at its own pace, so a slow watcher slows nobody else. One that falls
//     further behind than MaxWatchLag changes, or that the log has left
//     behind, is told to resync instead;
//   - idle streams get a keep-alive comment every KeepAlive.

// versionHeader carries the registry version a listing was read at.
const versionHeader = "X-Heureka-Version"

// watchState is shared by all streams of one Server.
type watchState struct {
	mu        sync.Mutex
	watchers  int
	perClient map[string]int // open streams by caller.key, exempt callers aside
	changes   eventCache     // encoded watch events
	events    eventCache     // encoded monitor events
}

// eventCache memoises the encoded data of recent changes, so that a change
// fanned out to thousands of watchers is encoded once per stream kind.
type eventCache struct {
	mu      sync.Mutex
	entries [4096]struct {
		seq  uint64
		data []byte
	}
}

func (c *eventCache) get(seq uint64, build func() []byte) []byte {
	i := seq % uint64(len(c.entries))
	c.mu.Lock()
	e := &c.entries[i]
	if e.seq == seq && e.data != nil {
		data := e.data
		c.mu.Unlock()
		return data
	}
	c.mu.Unlock()
	data := build()
	c.mu.Lock()
	e.seq, e.data = seq, data
	c.mu.Unlock()
	return data
}

// streamKind selects what a stream sends for each change.
type streamKind byte

const (
	kindWatch  streamKind = 'w'
	kindEvents streamKind = 'e'
)

func (s *Server) watch(w http.ResponseWriter, r *http.Request, p params) error {
	return s.stream(w, r, p.who, kindWatch)
}

func (s *Server) events(w http.ResponseWriter, r *http.Request, p params) error {
	return s.stream(w, r, p.who, kindEvents)
}

// stream serves one SSE connection until the client goes, the server shuts
// down, or the client must resync.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, who caller, kind streamKind) error {
	apps, err := appFilter(r, s.cfg.Limits.MaxIDLength)
	if err != nil {
		return err
	}
	since, hasSince, err := resumePoint(r)
	if err != nil {
		return err
	}
	if err := s.addWatcher(who); err != nil {
		return err
	}
	defer s.removeWatcher(who)

	rc := http.NewResponseController(w)
	// The server's read timeout bounds reading a request; a stream's
	// request is read, and its connection lives on, so no read deadline
	// may end it (net/http does not today; this keeps it so). Each write
	// has its own deadline (flush), which the server's bound on answers
	// (internal/conntime) gives way to.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")

	changed := s.reg.Changed()
	_, latest, _ := s.reg.ChangesSince(0)
	if !hasSince {
		since = latest
	}
	h.Set(versionHeader, strconv.FormatUint(latest, 10))
	w.WriteHeader(http.StatusOK)
	buf := fmt.Appendf(nil, "event: hello\ndata: {\"version\":%d}\n\n", latest)
	if err := s.flush(w, rc, buf); err != nil {
		return nil
	}

	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	ctx := r.Context()
	for {
		changes, latest, ok := s.reg.ChangesSince(since)
		switch {
		case !ok:
			s.resync(w, rc, latest, fmt.Sprintf("version %d is not in the change log (it holds the changes up to %d); fetch the registry and watch from its version", since, latest))
			return nil
		case len(changes) > s.cfg.MaxWatchLag:
			s.resync(w, rc, latest, fmt.Sprintf("%d changes behind, more than the limit of %d; fetch the registry and watch from its version", len(changes), s.cfg.MaxWatchLag))
			return nil
		}
		buf = buf[:0]
		var skipped uint64 // the last change this stream does not carry
		for _, c := range changes {
			if !carries(kind, c, apps) {
				skipped = c.Seq
				continue
			}
			if skipped != 0 && kind == kindWatch {
				buf = appendProgress(buf, skipped)
			}
			skipped = 0
			buf = s.appendEvent(buf, c, kind)
		}
		if skipped != 0 && kind == kindWatch {
			buf = appendProgress(buf, skipped)
		}
		if len(changes) > 0 {
			since = changes[len(changes)-1].Seq
		}
		if len(buf) > 0 {
			if err := s.flush(w, rc, buf); err != nil {
				return nil // the client went away or could not keep up
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.done:
			return nil
		case <-changed:
			changed = s.reg.Changed()
		case <-keepAlive.C:
			if err := s.flush(w, rc, []byte(": keep-alive\n\n")); err != nil {
				return nil
			}
		}
	}
}

// carries reports whether a stream of kind sends change c: the watch
// stream sends instance changes of the watched apps; the event stream sends
// those and every notice about the registry itself.
func carries(kind streamKind, c registry.Change, apps []string) bool {
	if c.Notice != nil {
		return kind == kindEvents
	}
	return apps == nil || slices.Contains(apps, c.App())
}

// flush writes buf and pushes it to the client within WriteTimeout.
func (s *Server) flush(w http.ResponseWriter, rc *http.ResponseController, buf []byte) error {
	_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	if _, err := w.Write(buf); err != nil {
		return err
	}
	return rc.Flush()
}

func (s *Server) resync(w http.ResponseWriter, rc *http.ResponseController, latest uint64, reason string) {
	data, _ := json.Marshal(heureka.Resync{Reason: reason, Version: latest})
	_ = s.flush(w, rc, fmt.Appendf(nil, "event: resync\ndata: %s\n\n", data))
}

func (s *Server) appendEvent(buf []byte, c registry.Change, kind streamKind) []byte {
	// Whole frames are cached, so fanning a change out to thousands of
	// watchers costs each of them one copy and one write.
	if kind == kindWatch {
		return append(buf, s.watchState.changes.get(c.Seq, func() []byte { return changeFrame(c) })...)
	}
	// The event stream may send several events for one change (a
	// registration can change status and metadata at once); all carry the
	// change's id.
	return append(buf, s.watchState.events.get(c.Seq, func() []byte { return encodeEvents(c) })...)
}

// appFilter reads ?app=A&app=B (upper-cased, as Eureka names apps); nil
// means every app.
func appFilter(r *http.Request, maxLen int) ([]string, error) {
	names := r.URL.Query()["app"]
	if len(names) == 0 {
		return nil, nil
	}
	if len(names) > 256 {
		return nil, heureka.Errorf(heureka.EINVALID, "%d app filters; the limit is 256", len(names))
	}
	apps := make([]string, 0, len(names))
	for _, n := range names {
		n = strings.ToUpper(n)
		if err := heureka.ValidateName("app", n, maxLen); err != nil {
			return nil, err
		}
		apps = append(apps, n)
	}
	return apps, nil
}

// resumePoint reads Last-Event-ID or ?since=.
func resumePoint(r *http.Request) (uint64, bool, error) {
	v := r.Header.Get("Last-Event-ID")
	src := "Last-Event-ID"
	if v == "" {
		v, src = r.URL.Query().Get("since"), "since"
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, heureka.Errorf(heureka.EINVALID, "%s %q is not a registry version (a non-negative integer)", src, v)
	}
	return n, true, nil
}

// addWatcher counts a new stream against MaxWatchers (503 past it: the
// client should poll, or watch another peer) and, unless who is exempt,
// against MaxWatchersPerClient (429: this client has enough).
func (s *Server) addWatcher(who caller) error {
	s.watchState.mu.Lock()
	defer s.watchState.mu.Unlock()
	if s.watchState.watchers >= s.cfg.MaxWatchers {
		return heureka.Errorf(heureka.EUNAVAILABLE, "this server already serves %d watchers, its limit; retry later or on another peer", s.cfg.MaxWatchers)
	}
	perClient := !who.exempt && s.cfg.MaxWatchersPerClient > 0
	if perClient && s.watchState.perClient[who.key] >= s.cfg.MaxWatchersPerClient {
		return &limitError{retryAfter: 30 * time.Second, msg: fmt.Sprintf(
			"%s already has %d watch or event streams open here, the limit per client; close one, or poll", who.key, s.cfg.MaxWatchersPerClient)}
	}
	s.watchState.watchers++
	if perClient {
		s.watchState.perClient[who.key]++
	}
	return nil
}

func (s *Server) removeWatcher(who caller) {
	s.watchState.mu.Lock()
	defer s.watchState.mu.Unlock()
	s.watchState.watchers--
	if !who.exempt && s.cfg.MaxWatchersPerClient > 0 {
		if n := s.watchState.perClient[who.key] - 1; n > 0 {
			s.watchState.perClient[who.key] = n
		} else {
			delete(s.watchState.perClient, who.key)
		}
	}
}

// Watchers returns the number of open watch and event streams.
func (s *Server) Watchers() int {
	s.watchState.mu.Lock()
	defer s.watchState.mu.Unlock()
	return s.watchState.watchers
}

// CloseStreams ends every open watch and event stream, so that an
// http.Server's Shutdown does not wait for them. It is idempotent.
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() { close(s.done) })
}

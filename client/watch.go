package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
)

// The watch protocol (heureka servers only).
//
// A full fetch of {base}/apps/ answers with X-Heureka-Version: N, the
// server's change sequence number at that listing. The client then opens
// GET {origin}/v1/watch?since=N[&app=A…] (origin is the base URL's scheme
// and host), with Last-Event-ID: N, and reads Server-Sent Events:
//
//	event: change
//	id: 42
//	data: {"seq":42,"action":"MODIFIED","cause":"status","time":1717171717000,
//	       "app":"ORDERS","id":"i-1","instance":{…Eureka JSON…}}
//
//	event: progress
//	id: 44
//	data: {"seq":44}
//
//	event: resync
//	data: {"reason":"too old","version":97}
//
// and ':' comment lines as keep-alives (other events, such as the
// server's "hello", are ignored). Ids are contiguous: what the stream
// leaves out (other applications' changes under app=, notices about the
// registry itself) is covered by a progress event. A change whose seq is
// not the last id plus one means changes were missed, so the client fetches
// the full registry again and watches from its version; so it does on
// resync. A 404 means no watch endpoint and a 503 a server that takes no
// more watchers: the client polls and tries again after
// WatchRetryInterval. A dropped stream is reopened on the same server from
// the last id seen, so no change is missed; a server that cannot be reached
// is left for a full fetch with failover.

const (
	watchPath = "/v1/watch"
	// maxEventBytes bounds one event: an instance is a few KiB at most.
	maxEventBytes = 4 << 20
	// watchReconnects is how many reconnections in a row may fail (no
	// answer, or a stream that ends before sending anything) before the
	// source gives the server up and fails over through a full fetch.
	watchReconnects = 3
	// watchReconnectBase is the first pause before reconnecting: short,
	// since a resumed stream loses nothing, but jittered.
	watchReconnectBase = 100 * time.Millisecond
	// healthyStream is how long a stream must stay open, if it brings no
	// change, for its end to count as a drop rather than a failure.
	healthyStream = time.Second
	// maxBatch bounds the changes applied before a snapshot is published
	// during a burst.
	maxBatch = 1024
)

type watchEnd int

const (
	watchResync      watchEnd = iota // fetch in full, then watch again
	watchUnsupported                 // no watch here: poll
	watchLost                        // the server stopped answering
)

type streamEnd int

const (
	streamDropped streamEnd = iota
	streamResync
	streamUnsupported
)

// watch follows f's server from f.version until the stream cannot go on.
func (s *source) watch(ctx context.Context, f *fetched) watchEnd {
	last := f.version
	fails := 0
	s.setMode(ModeWatching)
	for {
		began, from := time.Now(), last
		end, progressed, err := s.watchOnce(ctx, f.base, &last)
		if ctx.Err() != nil {
			return watchLost
		}
		switch end {
		case streamResync:
			return watchResync
		case streamUnsupported:
			return watchUnsupported
		}
		// A stream that delivered changes, or stayed open a while, was
		// healthy; one that ended at once (even after a hello) counts as a
		// failure, so a server that keeps hanging up is given up.
		if progressed && (last != from || time.Since(began) >= healthyStream) {
			fails = 0
		} else {
			fails++
		}
		s.mu.Lock()
		s.status.LastError = fmt.Sprintf("watch %s: %v", redact(f.base), err)
		s.mu.Unlock()
		if fails >= watchReconnects {
			s.c.log.Warn("watch server unreachable; failing over", "cluster", s.cl.name,
				"server", redact(f.base), "since", last, "err", err)
			return watchLost
		}
		s.c.log.Debug("watch stream ended; resuming", "cluster", s.cl.name, "since", last, "err", err)
		if sleep(ctx, backoff(fails, watchReconnectBase, s.c.cfg.RetryMax)) != nil {
			return watchLost
		}
	}
}

// watchOnce opens one stream from *last and applies its changes, keeping
// *last at the last change applied. progressed says whether the server
// sent anything at all.
func (s *source) watchOnce(ctx context.Context, base *url.URL, last *uint64) (end streamEnd, progressed bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	since := strconv.FormatUint(*last, 10)
	q := url.Values{"since": {since}}
	for _, a := range s.watchApps {
		q.Add("app", a)
	}
	h := http.Header{}
	h.Set("Last-Event-ID", since)
	h.Set("Cache-Control", "no-cache")
	// A compressed stream is held back by the compressor's buffer; ask
	// for none (this also stops net/http from adding gzip on its own).
	h.Set("Accept-Encoding", "identity")
	req := &request{op: "watch", method: http.MethodGet, path: watchPath, query: q, origin: true,
		accept: "text/event-stream", stream: true, only: base, header: h}
	resp, err := s.c.cl.do(sctx, s.cl, req)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.Status == http.StatusServiceUnavailable {
			// The server is up but takes no more watchers (or is
			// overloaded): polling it is lighter than retrying.
			return streamUnsupported, false, err
		}
		return streamDropped, false, err
	}
	if resp.status != http.StatusOK {
		err := answerError(req, resp)
		switch resp.status {
		case http.StatusBadRequest, http.StatusConflict, http.StatusGone, http.StatusPreconditionFailed,
			http.StatusRequestedRangeNotSatisfiable:
			s.c.log.Info("watch refused the version; resynchronising", "cluster", s.cl.name, "err", err)
			return streamResync, true, err
		}
		return streamUnsupported, true, err
	}
	body := resp.stream
	defer body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.header.Get("Content-Type")); mt != "text/event-stream" {
		return streamUnsupported, true, fmt.Errorf("watch answered %q, not text/event-stream", mt)
	}
	s.succeeded(nil, ModeWatching, &fetched{base: base, version: *last, hasVersion: true})

	idle := s.c.cfg.WatchIdleTimeout
	timer := time.AfterFunc(idle, cancel)
	defer timer.Stop()
	rd := newSSEReader(body, maxEventBytes, func() {
		timer.Reset(idle)
		progressed = true
	})

	pending := 0
	flush := func() {
		if pending > 0 {
			s.publish()
			s.setVersion(*last)
			pending = 0
		}
	}
	defer flush()
	for {
		ev, err := rd.next()
		if err != nil {
			if sctx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("no event or keep-alive for %v", idle)
			}
			return streamDropped, progressed, err
		}
		switch ev.typ {
		case heureka.StreamProgress:
			// Nothing up to this id concerns us (other apps' changes, or
			// notices): the next change must follow it.
			if seq, err := strconv.ParseUint(ev.id, 10, 64); err == nil && seq > *last {
				*last = seq
				if pending == 0 {
					s.setVersion(seq)
				}
			}
		case heureka.StreamChange:
			seq, err := s.applyChange(ev, *last, true)
			if err != nil {
				s.c.log.Info("watch cannot continue; resynchronising", "cluster", s.cl.name, "since", *last, "err", err)
				return streamResync, true, err
			}
			*last = seq
			pending++
			if !rd.buffered() || pending >= maxBatch {
				flush()
			}
		case heureka.StreamResync:
			var r heureka.Resync
			_ = json.Unmarshal(ev.data, &r)
			s.c.log.Info("server asked for a resync", "cluster", s.cl.name, "reason", r.Reason,
				"server_version", r.Version, "since", *last)
			return streamResync, true, errors.New("resync: " + r.Reason)
		}
	}
}

// applyChange applies one change event that must follow last, and returns
// its seq. An error means the stream cannot be trusted from here on: a
// gap, or an event that cannot be read. The server covers what it leaves
// out of a stream (other applications' changes, notices) with progress
// events, so ids stay contiguous; strict false checks only the order, for a
// server that does not.
func (s *source) applyChange(ev sseEvent, last uint64, strict bool) (uint64, error) {
	var ce heureka.WatchChange
	if err := json.Unmarshal(ev.data, &ce); err != nil {
		return 0, fmt.Errorf("unreadable change event: %w", err)
	}
	seq := ce.Seq
	if seq == 0 {
		seq, _ = strconv.ParseUint(ev.id, 10, 64)
	}
	if seq != last+1 && (strict || seq <= last) {
		return 0, fmt.Errorf("change %d does not follow %d: changes were missed", seq, last)
	}
	app, id := strings.ToUpper(ce.App), ce.ID
	switch action := heureka.ActionType(strings.ToUpper(string(ce.Action))); action {
	case heureka.ActionDeleted:
		if app == "" || id == "" {
			return 0, fmt.Errorf("change %d: DELETED without app and id", seq)
		}
		s.remove(app, id)
	case heureka.ActionAdded, heureka.ActionModified:
		in, err := eureka.DecodeServerInstance(ce.Instance, eureka.JSON)
		if err != nil {
			return 0, fmt.Errorf("change %d: %w", seq, err)
		}
		if app == "" {
			app = in.App
		}
		if id != "" && in.ID != id {
			return 0, fmt.Errorf("change %d: event id %q and instance id %q differ", seq, id, in.ID)
		}
		in.ActionType = action
		s.upsert(app, in)
	default:
		return 0, fmt.Errorf("change %d: unknown action %q", seq, ce.Action)
	}
	return seq, nil
}

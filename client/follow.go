package client

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

	"github.com/heureka-project/heureka"
)

// Following a stream (heureka servers only), for programs that handle each
// event themselves: the CLI's watch and events, the alert forwarder. The
// Cache follows /v1/watch on its own terms (watch.go).

// The streams a heureka server serves at its root.
const (
	WatchStream  = "/v1/watch"  // heureka.WatchChange events, for caches
	EventsStream = "/v1/events" // heureka.Event events, for monitors
)

// nodeHeader names the server process that answered; a registry version
// means something only to the process that issued it.
const nodeHeader = "X-Heureka-Node"

// ErrNotHeureka is a registry that does not serve heureka's own endpoints
// (a plain Eureka server): it answers 404 to a stream, or lists the
// registry without a version.
var ErrNotHeureka = errors.New("not a heureka server")

// Position is a place in one server process's change log.
type Position struct {
	Version uint64 // the last change handled
	Node    string // the server process Version belongs to; "" if unknown
}

// FollowConfig says what Follow follows and what it does with it. Start
// from DefaultFollowConfig; Stream and Handle are required.
type FollowConfig struct {
	// Stream is WatchStream or EventsStream.
	Stream string
	// Apps, when set, limits the stream to these applications.
	Apps []string
	// From, when set, is where to resume; nil starts at the server's latest
	// version (or where Sync says).
	From *Position
	// Sync, if set, re-reads the registry: it is called before the first
	// connection when From is nil (reason ""), and whenever the server
	// cannot resume (a resync event, or another server process answering),
	// and returns the position to follow from. Without Sync a resync
	// follows on from the server's version and says so through Note.
	Sync func(ctx context.Context, reason string) (Position, error)
	// Handle is called for every event that carries an id, in order; the
	// position moves past the event once it returns nil. An error ends
	// Follow.
	Handle func(ev Event) error
	// Note is told what Follow does about trouble (reconnects, resyncs);
	// nil discards.
	Note func(format string, args ...any)
	// IdleTimeout drops a stream silent for this long; the server sends a
	// keep-alive every 15 s.
	IdleTimeout time.Duration
	// FirstBackoff and MaxBackoff bound the pause between reconnections,
	// doubled after each failure.
	FirstBackoff, MaxBackoff time.Duration
}

// DefaultFollowConfig returns the defaults, each with its reason.
func DefaultFollowConfig() FollowConfig {
	return FollowConfig{
		// Three of the server's keep-alives.
		IdleTimeout: 45 * time.Second,
		// A resumed stream loses nothing, so reconnect soon; a server that
		// stays away is asked every 15 s at most.
		FirstBackoff: 250 * time.Millisecond,
		MaxBackoff:   15 * time.Second,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c FollowConfig) Validate() error {
	switch {
	case c.Stream != WatchStream && c.Stream != EventsStream:
		return heureka.InvalidConfig("Stream", c.Stream, "want %s or %s", WatchStream, EventsStream)
	case c.Handle == nil:
		return heureka.InvalidConfig("Handle", nil, "is required")
	case c.MaxBackoff < c.FirstBackoff:
		return heureka.InvalidConfig("MaxBackoff", c.MaxBackoff, "is less than FirstBackoff %v", c.FirstBackoff)
	}
	return heureka.Positive(
		heureka.NamedDuration{Field: "IdleTimeout", Value: c.IdleTimeout},
		heureka.NamedDuration{Field: "FirstBackoff", Value: c.FirstBackoff},
	)
}

// Follow follows one of a heureka server's streams across disconnects
// until ctx ends (then it returns nil). A dropped stream is resumed from
// the last event handled (Last-Event-ID); a server that cannot resume, or
// a different server process answering (it restarted, or failover reached
// another peer), is handled by cfg.Sync. Follow fails only if the first
// connection (or the first Sync) fails, the server does not serve the
// stream, or Handle fails. Registry URLs are tried in order as for any
// call, on the default cluster.
func (c *Client) Follow(ctx context.Context, cfg FollowConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if c.def == nil {
		return invalid("URLs", "Follow needs the default registry cluster (Config.URLs)")
	}
	f := &follower{c: c, cfg: cfg}
	if f.cfg.Note == nil {
		f.cfg.Note = func(string, ...any) {}
	}
	if cfg.From != nil {
		f.pos, f.hasPos = *cfg.From, true
	}
	return f.run(ctx)
}

// follower is the state of one Follow.
type follower struct {
	c      *Client
	cfg    FollowConfig
	pos    Position
	hasPos bool // false: start from the server's latest version
}

func (f *follower) run(ctx context.Context) error {
	if f.cfg.Sync != nil && !f.hasPos {
		p, err := f.cfg.Sync(ctx, "")
		if err != nil {
			return err
		}
		f.pos, f.hasPos = p, true
	}
	backoff := f.cfg.FirstBackoff
	connectedOnce := false
	for {
		connected, err := f.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if connected {
			connectedOnce = true
			backoff = f.cfg.FirstBackoff
		}
		if err == nil {
			continue // resynced or switched: reconnect at once
		}
		var he handleError
		if errors.As(err, &he) {
			return he.err
		}
		if errors.Is(err, ErrNotHeureka) || (!connectedOnce && !connected) {
			return err
		}
		f.cfg.Note("event stream: %v; reconnecting in %v", err, backoff.Round(time.Millisecond))
		if sleep(ctx, backoff) != nil {
			return nil
		}
		backoff = min(backoff*2, f.cfg.MaxBackoff)
	}
}

// handleError is Handle's error, which ends Follow.
type handleError struct{ err error }

func (e handleError) Error() string { return e.err.Error() }

// once makes one connection and reads it to its end. connected says the
// server accepted the stream; a nil error means reconnect at once.
func (f *follower) once(ctx context.Context) (connected bool, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := url.Values{}
	for _, a := range f.cfg.Apps {
		q.Add("app", a)
	}
	h := http.Header{"Cache-Control": {"no-cache"}, "Accept-Encoding": {"identity"}}
	if f.hasPos {
		h.Set("Last-Event-ID", strconv.FormatUint(f.pos.Version, 10))
	}
	req := &request{op: "follow " + f.cfg.Stream, method: http.MethodGet, path: f.cfg.Stream, query: q, origin: true,
		accept: "text/event-stream", stream: true, header: h}
	resp, err := f.c.do(cctx, f.c.def, req)
	if err != nil {
		return false, err
	}
	if resp.status != http.StatusOK {
		if resp.status == http.StatusNotFound {
			return false, fmt.Errorf("%w: %s answers 404; point it at a heureka server", ErrNotHeureka, resp.url)
		}
		return false, answerError(req, resp)
	}
	defer resp.stream.Close()
	origin := redact(&url.URL{Scheme: resp.base.Scheme, Host: resp.base.Host})
	node := resp.header.Get(nodeHeader)
	if f.hasPos && f.pos.Node != "" && node != "" && node != f.pos.Node {
		// Versions are per server process: ours means nothing here.
		return true, f.resync(ctx, fmt.Sprintf("the registry at %s is another server process now (node %s, was %s)", origin, node, f.pos.Node), 0, node)
	}
	if f.pos.Node == "" {
		f.pos.Node = node
	}

	// A stream that stays silent past the server's keep-alives is dead.
	idle := f.cfg.IdleTimeout
	timer := time.AfterFunc(idle, cancel)
	defer timer.Stop()
	r := newSSEReader(resp.stream, maxEventBytes, func() { timer.Reset(idle) })
	for {
		ev, err := r.next()
		if err != nil {
			if ctx.Err() != nil {
				return true, nil
			}
			if cctx.Err() != nil {
				return true, fmt.Errorf("%s%s was silent for %v", origin, f.cfg.Stream, idle)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return true, fmt.Errorf("%s%s closed the stream", origin, f.cfg.Stream)
			}
			return true, err
		}
		switch ev.typ {
		case heureka.StreamHello:
			var h struct {
				Version uint64 `json:"version"`
			}
			if json.Unmarshal(ev.data, &h) == nil && !f.hasPos {
				f.pos.Version, f.hasPos = h.Version, true
			}
			continue
		case heureka.StreamResync:
			var rs heureka.Resync
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
		if err := f.cfg.Handle(Event{Type: ev.typ, ID: ev.id, Data: ev.data}); err != nil {
			return true, handleError{err}
		}
		f.pos.Version, f.hasPos = seq, true
	}
}

// resync moves the position after the server could not resume it.
func (f *follower) resync(ctx context.Context, reason string, version uint64, node string) error {
	if f.cfg.Sync != nil {
		p, err := f.cfg.Sync(ctx, reason)
		if err != nil {
			return fmt.Errorf("re-reading the registry after a resync: %w", err)
		}
		f.pos, f.hasPos = p, true
		return nil
	}
	if version > 0 && (node == "" || node == f.pos.Node) {
		f.cfg.Note("resync: %s; following from version %d", reason, version)
		f.pos.Version, f.hasPos = version, true
		return nil
	}
	f.cfg.Note("resync: %s; following from the server's latest version", reason)
	f.pos, f.hasPos = Position{Node: node}, false
	return nil
}

// Listing reads the whole registry from the default cluster with the
// position it was read at, for a follower's Sync. A server that sends no
// version (not heureka) is an error wrapping ErrNotHeureka.
func (c *Client) Listing(ctx context.Context) (*heureka.Applications, Position, error) {
	if c.def == nil {
		return nil, Position{}, invalid("URLs", "Listing needs the default registry cluster (Config.URLs)")
	}
	f, err := c.fetchFull(ctx, c.def)
	if err != nil {
		return nil, Position{}, err
	}
	if !f.hasVersion && f.node == "" {
		return nil, Position{}, fmt.Errorf("%w: the registry at %s sends no %s", ErrNotHeureka, redact(f.base), versionHeader)
	}
	return f.apps, Position{Version: f.version, Node: f.node}, nil
}

package client

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
)

// Cache keeps a local, always-readable copy of the registry (or of the
// applications in CacheConfig.Apps), fed by watching heureka servers or by
// polling any Eureka server. Reads never block and never see half an
// update. Build it with NewCache, then Start (or Run); Close stops it.
type Cache struct {
	cl   *Client
	cfg  CacheConfig
	log  *slog.Logger
	want map[string]bool // CacheConfig.Apps, upper-case; nil means all

	sources []*source
	snap    atomic.Pointer[Snapshot]

	pubMu sync.Mutex // serialises publish; guards views, seq, pending
	views [][]*heureka.Application
	seq   uint64

	lmu       sync.Mutex // guards listeners, pending and merges
	listeners []*listener
	pending   []notification
	wake      chan struct{} // to the dispatcher, capacity 1
	merges    int           // times pending notifications were merged

	persistWake chan struct{} // to the persister, capacity 1

	unsynced   atomic.Int32 // sources still waiting for their first sync
	synced     chan struct{}
	syncedOnce sync.Once

	stateMu sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc // stops the source loops
	closing chan struct{}      // closed when Close begins
	stop    chan struct{}      // closed once the loops have ended: the dispatcher and persister finish
	done    chan struct{}      // closed when everything has ended
	loops   sync.WaitGroup     // source loops
	wg      sync.WaitGroup     // dispatcher and persister
}

type listener struct {
	fn func(old, new *Snapshot, changes []Change)
}

type notification struct {
	old, new *Snapshot
	changes  []Change
}

// NewCache returns a cache that reads through c. It has no side effects:
// nothing is fetched or read from disk until Start.
func NewCache(c *Client, cfg CacheConfig) (*Cache, error) {
	if c == nil {
		return nil, invalid("Client", "is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = c.cfg.Logger
	}
	cc := &Cache{
		cl:          c,
		cfg:         cfg,
		log:         logger.With("subsystem", "client.cache"),
		wake:        make(chan struct{}, 1),
		persistWake: make(chan struct{}, 1),
		synced:      make(chan struct{}),
		closing:     make(chan struct{}),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	if len(cfg.Apps) > 0 {
		cc.want = map[string]bool{}
		for _, a := range cfg.Apps {
			cc.want[strings.ToUpper(strings.TrimSpace(a))] = true
		}
	}
	for _, cl := range c.clusters {
		src := &source{c: cc, cl: cl, idx: len(cc.sources), apps: map[string]*appState{}}
		if cc.want != nil {
			for _, a := range slices.Sorted(maps.Keys(cc.want)) {
				if owner, ok := c.clusterFor(a); ok && owner == cl {
					src.watchApps = append(src.watchApps, a)
				}
			}
			if len(src.watchApps) == 0 {
				continue // no wanted application lives in this cluster
			}
		}
		src.status = ClusterStatus{Cluster: cl.name, URLs: cl.urls(), Mode: ModeStarting}
		cc.sources = append(cc.sources, src)
	}
	if len(cc.sources) == 0 {
		return nil, invalidf("Apps: no configured registry cluster holds any of %s",
			strings.Join(slices.Sorted(maps.Keys(cc.want)), ", "))
	}
	cc.views = make([][]*heureka.Application, len(cc.sources))
	cc.unsynced.Store(int32(len(cc.sources)))
	cc.snap.Store(emptySnapshot)
	return cc, nil
}

// visible reports whether app (upper-case) belongs in the view through src.
func (c *Cache) visible(src *source, app string) bool {
	if c.want != nil && !c.want[app] {
		return false
	}
	owner, ok := c.cl.clusterFor(app)
	return ok && owner == src.cl
}

// Start loads the cache file, if configured, so that reads are served at
// once, and starts one background loop per registry cluster. It returns
// without waiting for any registry: use Synced to wait for fresh data.
// ctx bounds only the start; the loops run until Close. An unreadable or
// corrupt cache file is logged and ignored.
func (c *Cache) Start(ctx context.Context) error {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	switch {
	case c.closed:
		return errors.New("client: cache is closed")
	case c.started:
		return errors.New("client: cache already started")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.started = true
	if c.cfg.CacheFile != "" {
		c.loadFile()
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(1)
	go c.dispatch()
	if c.cfg.CacheFile != "" {
		c.wg.Add(1)
		go c.persist()
	}
	for _, s := range c.sources {
		c.loops.Add(1)
		go s.run(runCtx)
	}
	return nil
}

// Run starts the cache and keeps it running until ctx is done or Close is
// called, then closes it. It suits a run group: it returns nil after a
// normal stop and an error only when the cache could not start.
func (c *Cache) Run(ctx context.Context) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-c.closing:
	}
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Close(cctx)
}

// Close stops the cache: it cancels in-flight requests and watch streams
// and waits for the loops to end, then waits for a change listener that is
// running to return and writes the cache file a last time; notifications
// not yet delivered are dropped. It is idempotent and safe to call before
// Start. The last snapshot stays readable after Close. If ctx ends first,
// Close returns ctx's error and the rest finishes in the background.
func (c *Cache) Close(ctx context.Context) error {
	c.stateMu.Lock()
	if !c.closed {
		c.closed = true
		close(c.closing)
		if c.cancel != nil {
			c.cancel()
		}
		go func() {
			c.loops.Wait()
			close(c.stop)
			c.wg.Wait()
			close(c.done)
		}()
	}
	c.stateMu.Unlock()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Synced is closed once every cluster's registry has been read in full:
// from then on the view reflects the registries, not just a cache file.
func (c *Cache) Synced() <-chan struct{} { return c.synced }

func (c *Cache) markSynced() {
	if c.unsynced.Add(-1) == 0 {
		c.syncedOnce.Do(func() { close(c.synced) })
	}
}

// Snapshot returns the current view. It never blocks, never allocates and
// never returns nil.
func (c *Cache) Snapshot() *Snapshot { return c.snap.Load() }

// Instances returns app's instances that pass every filter, sorted by ID.
// Without filters it returns the snapshot's shared slice (do not modify
// it) and allocates nothing; with filters, a new slice.
func (c *Cache) Instances(app string, filters ...Filter) []*heureka.Instance {
	ins := c.snap.Load().Instances(app)
	if len(filters) == 0 {
		return ins
	}
	return Select(ins, filters...)
}

// Instance returns one instance of app.
func (c *Cache) Instance(app, id string) (*heureka.Instance, bool) {
	return c.snap.Load().Instance(app, id)
}

// Apps returns every application in the view, sorted by name (shared).
func (c *Cache) Apps() []*heureka.Application { return c.snap.Load().Apps() }

// OnChange registers fn to be told of every change to the view, and
// returns a function that unregisters it.
//
// Listeners are called from one goroutine, one notification at a time, in
// the order the snapshots were published, never while the cache holds a
// lock its readers or writers need: a listener may read the cache, but
// must not call Close, which waits for it. old and new are consecutive
// snapshots and changes is Diff(old, new).
//
// Slow listeners: notifications queue up to CacheConfig.MaxPendingChanges;
// beyond that the queue is merged into one notification spanning it (old
// of the first, new of the last, their Diff), so a listener that falls
// behind skips intermediate states but never misses the net effect, and
// never slows the cache or its readers. A listener that panics is logged
// and kept.
func (c *Cache) OnChange(fn func(old, new *Snapshot, changes []Change)) (remove func()) {
	l := &listener{fn: fn}
	c.lmu.Lock()
	c.listeners = append(slices.Clip(c.listeners), l)
	c.lmu.Unlock()
	return func() {
		c.lmu.Lock()
		defer c.lmu.Unlock()
		c.listeners = slices.DeleteFunc(slices.Clone(c.listeners), func(x *listener) bool { return x == l })
	}
}

// publish installs src's visible applications and swaps in a new snapshot
// if the combined view changed.
func (c *Cache) publish(src int, apps []*heureka.Application) {
	c.pubMu.Lock()
	defer c.pubMu.Unlock()
	c.views[src] = apps
	var all []*heureka.Application
	for _, v := range c.views {
		all = append(all, v...)
	}
	old := c.snap.Load()
	next := newSnapshot(c.seq+1, time.Now(), all)
	changes := Diff(old, next)
	if len(changes) == 0 {
		return
	}
	c.seq++
	c.snap.Store(next)
	c.notify(notification{old: old, new: next, changes: changes})
	select {
	case c.persistWake <- struct{}{}:
	default:
	}
}

// notify queues a notification for the dispatcher, merging the queue when
// it is full. c.pubMu is held, which keeps notifications in order.
func (c *Cache) notify(n notification) {
	c.lmu.Lock()
	if len(c.listeners) == 0 {
		c.lmu.Unlock()
		return
	}
	if len(c.pending) >= c.cfg.MaxPendingChanges {
		first := c.pending[0].old
		c.pending = c.pending[:0]
		n = notification{old: first, new: n.new, changes: Diff(first, n.new)}
		if c.merges++; c.merges == 1 || c.merges%100 == 0 {
			c.log.Warn("change listeners are slow; merged pending notifications",
				"max_pending", c.cfg.MaxPendingChanges, "merges", c.merges)
		}
	}
	if len(n.changes) > 0 {
		c.pending = append(c.pending, n)
	}
	c.lmu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// dispatch delivers notifications to listeners, from one goroutine.
func (c *Cache) dispatch() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		for {
			c.lmu.Lock()
			if len(c.pending) == 0 {
				c.lmu.Unlock()
				break
			}
			n := c.pending[0]
			c.pending = c.pending[1:]
			ls := c.listeners
			c.lmu.Unlock()
			for _, l := range ls {
				select {
				case <-c.stop:
					return
				default:
				}
				c.call(l, n)
			}
		}
	}
}

func (c *Cache) call(l *listener, n notification) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("change listener panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	l.fn(n.old, n.new, n.changes)
}

// Mode says how a cluster's view is kept fresh.
type Mode string

const (
	ModeStarting Mode = "starting" // no full fetch has succeeded yet
	ModePolling  Mode = "polling"  // delta every PollInterval
	ModeWatching Mode = "watching" // a watch stream is open or reopening
)

// ClusterStatus is what a Cache knows about one registry cluster, for
// health checks and operators.
type ClusterStatus struct {
	Cluster   string   // "default", or the Clusters pattern(s)
	URLs      []string // passwords redacted
	Mode      Mode
	Server    string    // the base URL that answered last
	Version   uint64    // watching: the server's last change applied
	LastSync  time.Time // the last successful fetch, delta or event batch
	LastError string    // the last failure, "" after a success
	Failures  int       // consecutive failed attempts
}

// Status reports every cluster's state.
func (c *Cache) Status() []ClusterStatus {
	out := make([]ClusterStatus, len(c.sources))
	for i, s := range c.sources {
		s.mu.Lock()
		out[i] = s.status
		out[i].URLs = slices.Clone(s.status.URLs)
		s.mu.Unlock()
	}
	return out
}

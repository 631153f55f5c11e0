package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
)

// source keeps one registry cluster's part of a Cache fresh. Its state is
// owned by its run goroutine (and by Start, before that goroutine exists);
// only status is shared, under mu.
type source struct {
	c         *Cache
	cl        *cluster
	idx       int
	watchApps []string // the wanted applications this cluster holds; nil = all

	// apps is the cluster's whole registry as last reconciled, every
	// application (wanted or not): the delta's hash code covers them all.
	apps   map[string]*appState
	synced bool

	mu     sync.Mutex
	status ClusterStatus
}

// appState is one application's instances. view is the published,
// ID-sorted list, rebuilt only after a change (nil until then).
type appState struct {
	byID map[string]*heureka.Instance
	view *heureka.Application
}

// quickSession is a watch session short enough to be spaced from the next.
const quickSession = 5 * time.Second

// loop is the state of a source's fetch loop.
type loop struct {
	needFull bool
	probeAt  time.Time // when to look for a watch endpoint again; zero = any time
	fails    int       // consecutive failures to reach the cluster
	quick    int       // consecutive watch sessions that ended almost at once
}

// run keeps the source fresh until ctx is done. It is a small state
// machine: full fetch → watch (heureka servers) or delta polling (any
// Eureka server), back to a full fetch whenever the two disagree.
func (s *source) run(ctx context.Context) {
	defer s.c.loops.Done()
	st := &loop{needFull: true}
	for ctx.Err() == nil {
		d := s.step(ctx, st)
		if ctx.Err() != nil {
			return
		}
		if d > 0 && sleep(ctx, d) != nil {
			return
		}
	}
}

// step does one round and returns how long to wait before the next.
func (s *source) step(ctx context.Context, st *loop) time.Duration {
	cfg := &s.c.cfg
	probeDue := !cfg.DisableWatch && !st.probeAt.IsZero() && !time.Now().Before(st.probeAt)
	// A cache limited to some applications never reads the whole
	// registry, so it has no delta to poll (the delta's hash code covers
	// every application): each poll reads its applications again.
	if !st.needFull && !probeDue && len(s.watchApps) == 0 {
		f, err := s.c.cl.fetchDelta(ctx, s.cl)
		switch {
		case err == nil:
			if s.applyDelta(f) {
				s.succeeded(st, ModePolling, f)
				return cfg.PollInterval
			}
			s.c.log.Info("reconcile hash codes differ; fetching the full registry",
				"cluster", s.cl.name, "server", redact(f.base), "want", f.apps.HashCode, "have", s.hashCode())
		case errors.Is(err, ErrUnavailable):
			return s.failed(st, err)
		default:
			// 403/404 (delta disabled or not ready), or an unreadable delta.
			s.c.log.Info("delta refused; fetching the full registry", "cluster", s.cl.name, "err", err)
		}
		st.needFull = true
	}

	var f *fetched
	var err error
	if len(s.watchApps) > 0 {
		f, err = s.c.cl.fetchApps(ctx, s.cl, s.watchApps)
	} else {
		f, err = s.c.cl.fetchFull(ctx, s.cl)
	}
	if err != nil {
		return s.failed(st, err)
	}
	if !s.applyFull(f) {
		// Empty-set protection: keep the view, try again later.
		s.succeeded(st, s.mode(), nil)
		return cfg.PollInterval
	}
	st.needFull = false
	if !s.synced {
		s.synced = true
		s.c.markSynced()
	}
	s.succeeded(st, ModePolling, f)
	if cfg.DisableWatch {
		return cfg.PollInterval
	}
	if !f.hasVersion {
		// A plain Eureka server: poll, and look again later (peers may be
		// upgraded, or a failover may land on a heureka server).
		st.probeAt = time.Now().Add(cfg.WatchRetryInterval)
		return cfg.PollInterval
	}
	if !st.probeAt.IsZero() && time.Now().Before(st.probeAt) {
		return cfg.PollInterval // the watch endpoint was missing not long ago
	}

	began := time.Now()
	end := s.watch(ctx, f)
	// Sessions that end almost at once, again and again (a server that
	// keeps asking for resyncs, or keeps hanging up), are spaced out.
	pause := time.Duration(0)
	if time.Since(began) < quickSession {
		st.quick++
		pause = backoff(st.quick-1, 50*time.Millisecond, cfg.RetryMax)
	} else {
		st.quick = 0
	}
	switch end {
	case watchUnsupported:
		s.c.log.Info("registry does not serve a watch; polling", "cluster", s.cl.name,
			"server", redact(f.base), "retry_in", cfg.WatchRetryInterval)
		st.probeAt = time.Now().Add(cfg.WatchRetryInterval)
		// Events watched for the wanted applications only leave the rest
		// of the state behind; the delta's hash check needs all of it.
		st.needFull = len(s.watchApps) > 0
		s.setMode(ModePolling)
		return cfg.PollInterval
	case watchLost:
		// The peer stopped answering: fail over through a full fetch.
		st.needFull = true
		s.setMode(ModeStarting)
		return pause
	default: // watchResync
		st.needFull = true
		st.probeAt = time.Time{}
		return pause
	}
}

// failed records a failure to reach the cluster and returns the pause
// before the next try: PollInterval doubling up to RetryMax, jittered.
func (s *source) failed(st *loop, err error) time.Duration {
	if errors.Is(err, context.Canceled) {
		return 0 // Close; the loop ends
	}
	st.fails++
	s.mu.Lock()
	s.status.LastError = err.Error()
	s.status.Failures = st.fails
	s.mu.Unlock()
	if st.fails == 1 {
		s.c.log.Warn("registry unreachable; serving the last view", "cluster", s.cl.name, "err", err)
	} else {
		s.c.log.Debug("registry still unreachable", "cluster", s.cl.name, "failures", st.fails, "err", err)
	}
	return backoff(st.fails-1, s.c.cfg.PollInterval, s.c.cfg.RetryMax)
}

// succeeded records a successful exchange with the cluster.
func (s *source) succeeded(st *loop, mode Mode, f *fetched) {
	if st != nil {
		if st.fails > 0 {
			s.c.log.Info("registry reachable again", "cluster", s.cl.name, "after_failures", st.fails)
		}
		st.fails = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.Mode = mode
	s.status.LastSync = time.Now()
	s.status.LastError = ""
	s.status.Failures = 0
	if f != nil {
		s.status.Server = redact(f.base)
		if f.hasVersion {
			s.status.Version = f.version
		}
	}
}

func (s *source) mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status.Mode
}

func (s *source) setMode(m Mode) {
	s.mu.Lock()
	s.status.Mode = m
	s.mu.Unlock()
}

func (s *source) setVersion(v uint64) {
	s.mu.Lock()
	s.status.Version = v
	s.status.LastSync = time.Now()
	s.mu.Unlock()
}

// size is the number of instances the source holds.
func (s *source) size() int {
	n := 0
	for _, a := range s.apps {
		n += len(a.byID)
	}
	return n
}

// applyFull replaces the source's state with a full listing and publishes
// it. Instances equal to the ones held keep their old values, so unchanged
// applications keep their views. It returns false, changing nothing, when
// the listing is empty, the state is not and AllowEmpty is off.
func (s *source) applyFull(f *fetched) bool {
	n := 0
	for _, a := range f.apps.Apps {
		n += len(a.Instances)
	}
	if n == 0 && !s.c.cfg.AllowEmpty {
		if held := s.size(); held > 0 {
			s.c.log.Warn("registry returned no instances; keeping the last view (set AllowEmpty to accept)",
				"cluster", s.cl.name, "server", redact(f.base), "kept_instances", held)
			return false
		}
	}
	next := make(map[string]*appState, len(f.apps.Apps))
	for _, a := range f.apps.Apps {
		name := strings.ToUpper(a.Name)
		st := next[name]
		if st == nil {
			st = &appState{byID: make(map[string]*heureka.Instance, len(a.Instances))}
			next[name] = st
		}
		old := s.apps[name]
		for _, in := range a.Instances {
			if old != nil {
				if o := old.byID[in.ID]; o != nil && sameInstance(o, in) {
					in = o
				}
			}
			st.byID[in.ID] = in
		}
	}
	for name, st := range next {
		if old := s.apps[name]; old != nil && sameSet(old.byID, st.byID) {
			next[name] = old
		}
	}
	s.apps = next
	s.publish()
	return true
}

// sameSet reports whether two maps hold the very same instance values.
func sameSet(a, b map[string]*heureka.Instance) bool {
	if len(a) != len(b) {
		return false
	}
	for id, in := range a {
		if b[id] != in {
			return false
		}
	}
	return true
}

// applyDelta applies a delta listing (ADDED and MODIFIED replace by app
// and ID, DELETED removes), publishes, and reports whether the result's
// reconcile hash code matches the delta's.
func (s *source) applyDelta(f *fetched) bool {
	for _, a := range f.apps.Apps {
		name := strings.ToUpper(a.Name)
		for _, in := range a.Instances {
			switch in.ActionType {
			case heureka.ActionAdded, heureka.ActionModified:
				s.upsert(name, in)
			case heureka.ActionDeleted:
				s.remove(name, in.ID)
			default:
				// Eureka's client ignores entries without an action; the
				// hash check repairs whatever that leaves out.
			}
		}
	}
	s.publish()
	return s.hashCode() == f.apps.HashCode
}

func (s *source) upsert(app string, in *heureka.Instance) {
	st := s.apps[app]
	if st == nil {
		st = &appState{byID: map[string]*heureka.Instance{}}
		s.apps[app] = st
	}
	if o := st.byID[in.ID]; o != nil && sameInstance(o, in) {
		return
	}
	st.byID[in.ID] = in
	st.view = nil
}

func (s *source) remove(app, id string) {
	st := s.apps[app]
	if st == nil {
		return
	}
	if _, ok := st.byID[id]; !ok {
		return
	}
	delete(st.byID, id)
	st.view = nil
	if len(st.byID) == 0 {
		delete(s.apps, app)
	}
}

// hashCode is Eureka's reconcile hash code over the whole state.
func (s *source) hashCode() string {
	c := heureka.StatusCounts{}
	for _, a := range s.apps {
		for _, in := range a.byID {
			c[in.Status]++
		}
	}
	return c.HashCode()
}

// publish hands the visible applications to the cache.
func (s *source) publish() {
	var apps []*heureka.Application
	for name, st := range s.apps {
		if len(st.byID) == 0 || !s.c.visible(s, name) {
			continue
		}
		if st.view == nil {
			list := make([]*heureka.Instance, 0, len(st.byID))
			for _, in := range st.byID {
				list = append(list, in)
			}
			slices.SortFunc(list, func(x, y *heureka.Instance) int { return strings.Compare(x.ID, y.ID) })
			st.view = &heureka.Application{Name: name, Instances: list}
		}
		apps = append(apps, st.view)
	}
	s.c.publish(s.idx, apps)
}

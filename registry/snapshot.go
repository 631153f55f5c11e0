package registry

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
)

// Snapshot is an immutable view of the registry: every read is served from
// one, so a reader never sees half a change and never blocks a writer.
// Callers must not modify anything reachable from it.
type Snapshot struct {
	// Version is the sequence number of the newest change it includes; it
	// only grows, and is what versions__delta carries in a delta.
	Version uint64

	gen        uint64
	built      time.Time
	deltaUntil time.Time                       // after this the delta window has moved
	counts     map[string]heureka.StatusCounts // per app; shared, never modified
	changes    []Change                        // the change log as of Version; shared, never modified
	retention  time.Duration

	// The registry by application name, as blocks (full) and as flat lists
	// made on demand (views); hash is its reconcile hash code. The delta is
	// blocks too (see Delta); dstate is its builder state, for the next
	// build.
	full   []AppBlocks
	views  []*lazyApp
	hash   string
	deltaL []AppBlocks
	dstate *deltaState

	digestOnce sync.Once
	digests    map[string]uint64
}

// Snapshot returns the current view. A read issued after a write returned
// sees that write: the view is rebuilt (once, for all readers) whenever the
// registry changed, and when the delta window moved.
func (r *Registry) Snapshot() *Snapshot {
	if s := r.snap.Load(); s != nil && s.gen == r.gen.Load() && !r.now().After(s.deltaUntil) {
		return s
	}
	r.buildMu.Lock()
	defer r.buildMu.Unlock()
	now := r.now()
	if s := r.snap.Load(); s != nil && s.gen == r.gen.Load() && !now.After(s.deltaUntil) {
		return s
	}
	s := r.build(now)
	r.snap.Store(s)
	return s
}

// build makes the snapshot of now. Under the read lock it takes only what
// must be read at one instant: the version, the change log's extent, and
// for each application what changed since its last blocks. Sorting,
// cutting and patching blocks, and advancing the delta, come after the
// lock is released, so that writers wait for those copies and not for the
// work: in a storm at 100k instances every application is re-sorted, and
// registrations queued behind the lock for 50-100 ms at a time.
func (r *Registry) build(now time.Time) *Snapshot {
	r.mu.RLock()
	s := &Snapshot{
		Version:   r.seq,
		gen:       r.gen.Load(),
		built:     now,
		changes:   r.changes[:len(r.changes):len(r.changes)],
		retention: r.cfg.DeltaRetention,
	}
	apps := make([]appCapture, 0, len(r.apps))
	for name, a := range r.apps {
		apps = append(apps, a.capture(name))
	}
	r.mu.RUnlock()

	s.views = make([]*lazyApp, 0, len(apps))
	counts := heureka.StatusCounts{}
	s.counts = make(map[string]heureka.StatusCounts, len(apps))
	for _, c := range apps {
		c.rebuild()
		s.counts[c.name] = c.a.counts // rebuild replaces the map, never edits it
		for st, n := range c.a.counts {
			counts[st] += n
		}
		s.views = append(s.views, c.a.view)
	}
	slices.SortFunc(s.views, func(x, y *lazyApp) int { return strings.Compare(x.name, y.name) })
	s.full = make([]AppBlocks, len(s.views))
	for i, v := range s.views {
		s.full[i] = AppBlocks{Name: v.name, Blocks: v.blocks}
	}
	s.hash = counts.HashCode()

	// The delta is advanced from the last snapshot's by the changes since;
	// it changes again at the next write or when its oldest entry leaves
	// the window. The change log's entries are never modified, and its
	// pruning copies, so s.changes may be read without the lock.
	var prev *deltaState
	if p := r.snap.Load(); p != nil {
		prev = p.dstate
	}
	s.dstate = advanceDelta(prev, s.changes, s.Version, now.Add(-r.cfg.DeltaRetention))
	s.deltaL = s.dstate.listing()
	s.deltaUntil = now.Add(r.cfg.DeltaRetention)
	if t, ok := s.dstate.oldest(); ok {
		s.deltaUntil = t.Add(r.cfg.DeltaRetention)
	}
	return s
}

// appCapture is what a build reads of one application under the
// registry's lock, to make its blocks after it: every instance, to sort
// afresh, or the IDs changed since its last blocks with each one's
// instance now, to patch them. Neither is set when nothing changed.
type appCapture struct {
	a     *appEntry
	name  string
	all   []*stored // unsorted
	dirty []dirtyID
}

// dirtyID is a changed ID and its instance now; nil if it is gone.
type dirtyID struct {
	id   string
	inst *stored
}

// capture reads what the application's next blocks need and clears its
// dirty set: the old blocks are patched when few IDs changed, else the
// application is sorted afresh. r.mu must be held, for reading by the
// builder (buildMu), which alone touches view, counts and, under a read
// lock, dirty.
func (a *appEntry) capture(name string) appCapture {
	c := appCapture{a: a, name: name}
	switch {
	case a.view == nil || len(a.dirty) > a.view.n/8:
		c.all = make([]*stored, 0, len(a.leases))
		for _, l := range a.leases {
			c.all = append(c.all, l.inst)
		}
	case len(a.dirty) > 0:
		c.dirty = make([]dirtyID, 0, len(a.dirty))
		for id := range a.dirty {
			d := dirtyID{id: id}
			if l, ok := a.leases[id]; ok {
				d.inst = l.inst
			}
			c.dirty = append(c.dirty, d)
		}
	default:
		return c
	}
	clear(a.dirty)
	return c
}

// rebuild makes the application's new blocks and its status counts from
// what capture read; it needs no lock but buildMu.
func (c appCapture) rebuild() {
	a := c.a
	switch {
	case c.all != nil:
		counts := heureka.StatusCounts{}
		for _, in := range c.all {
			counts[in.status.status()]++
		}
		slices.SortFunc(c.all, func(x, y *stored) int { return strings.Compare(x.id(), y.id()) })
		a.view, a.counts = newLazyApp(c.name, appendCut(nil, c.all[:len(c.all):len(c.all)])), counts
	case c.dirty != nil:
		slices.SortFunc(c.dirty, func(x, y dirtyID) int { return strings.Compare(x.id, y.id) })
		counts := maps.Clone(a.counts)
		a.view, a.counts = newLazyApp(c.name, a.view.patch(c.dirty, counts)), counts
	}
}

// firstAfter returns the index of the first change at or after t.
func firstAfter(changes []Change, t time.Time) int {
	i, _ := slices.BinarySearchFunc(changes, t, func(c Change, t time.Time) int { return c.Time.Compare(t) })
	return i
}

// Apps returns the whole registry: applications by name, instances by ID,
// versions__delta 1 and the reconcile hash code. The flat lists are made
// when asked for, and kept only while a reader holds them (see lazyApp):
// a reader that can work a block at a time should read Blocks.
func (s *Snapshot) Apps() *heureka.Applications {
	list := make([]*heureka.Application, len(s.views))
	for i, v := range s.views {
		list[i] = v.get()
	}
	return &heureka.Applications{VersionDelta: 1, HashCode: s.hash, Apps: list}
}

// HashCode returns the registry's reconcile hash code, as Apps and Delta
// carry it, without making the flat lists.
func (s *Snapshot) HashCode() string { return s.hash }

// Len returns the number of registered instances.
func (s *Snapshot) Len() int {
	n := 0
	for _, v := range s.views {
		n += v.n
	}
	return n
}

func (s *Snapshot) view(name string) (*lazyApp, bool) {
	i, ok := slices.BinarySearchFunc(s.views, name, func(v *lazyApp, n string) int { return strings.Compare(v.name, n) })
	if !ok {
		return nil, false
	}
	return s.views[i], true
}

// App returns one application, or false when it has no instances.
func (s *Snapshot) App(name string) (*heureka.Application, bool) {
	v, ok := s.view(name)
	if !ok {
		return nil, false
	}
	return v.get(), true
}

// Instance returns a copy of one instance of app.
func (s *Snapshot) Instance(app, id string) (*heureka.Instance, bool) {
	v, ok := s.view(app)
	if !ok {
		return nil, false
	}
	if rec, ok := v.find(id); ok {
		return rec.instance(), true
	}
	return nil, false
}

// InstanceByID returns a copy of the first instance with id in any
// application, as Eureka's /instances/{id} does.
func (s *Snapshot) InstanceByID(id string) (*heureka.Instance, bool) {
	for _, v := range s.views {
		if rec, ok := v.find(id); ok {
			return rec.instance(), true
		}
	}
	return nil, false
}

// VIP returns the instances whose VIP address (secure: secure VIP address),
// split on commas, contains vip exactly. Like Eureka, versions__delta is -1
// and the hash code covers only the result.
func (s *Snapshot) VIP(vip string, secure bool) *heureka.Applications {
	out := &heureka.Applications{VersionDelta: -1, Apps: []*heureka.Application{}}
	field := sVIPAddress
	if secure {
		field = sSecureVIPAddress
	}
	for _, a := range s.full {
		var match *heureka.Application
		for _, b := range a.Blocks {
			for _, rec := range b.recs {
				if !hasVIP(rec.str(field), vip) {
					continue
				}
				if match == nil {
					match = &heureka.Application{Name: a.Name}
					out.Apps = append(out.Apps, match)
				}
				match.Instances = append(match.Instances, rec.instance())
			}
		}
	}
	out.HashCode = heureka.ReconcileHashCode(out.Apps)
	return out
}

func hasVIP(list, vip string) bool {
	for v := range strings.SplitSeq(list, ",") {
		if v == vip {
			return true
		}
	}
	return false
}

// Delta returns the changes of the last DeltaRetention: one entry per
// instance holding its latest state and action, in order of last change,
// grouped by application, with versions__delta set to Version and the hash
// code of the whole registry, so a client can check its reconciled copy.
// It is made at each call; DeltaBlocks is the same listing as blocks.
func (s *Snapshot) Delta() *heureka.Applications {
	apps := make([]*heureka.Application, 0, len(s.deltaL))
	for _, a := range s.deltaL {
		recs := make([]*stored, 0, a.Len())
		for _, b := range a.Blocks {
			recs = append(recs, b.recs...)
		}
		apps = append(apps, &heureka.Application{Name: a.Name, Instances: instances(recs)})
	}
	return &heureka.Applications{VersionDelta: int64(s.Version), HashCode: s.hash, Apps: apps}
}

// Blocks returns the whole registry as blocks, applications by name and
// instances by ID: the same listing as Apps.
func (s *Snapshot) Blocks() []AppBlocks { return s.full }

// AppBlocks returns one application as blocks, or false when it has no
// instances.
func (s *Snapshot) AppBlocks(name string) (AppBlocks, bool) {
	i, ok := slices.BinarySearchFunc(s.full, name, func(a AppBlocks, n string) int { return strings.Compare(a.Name, n) })
	if !ok {
		return AppBlocks{}, false
	}
	return s.full[i], true
}

// DeltaBlocks returns the delta as blocks: the same listing as Delta.
func (s *Snapshot) DeltaBlocks() []AppBlocks { return s.deltaL }

// Built returns when the snapshot was built. Two snapshots of one Version
// differ only in their delta, which the later one has moved on in time.
func (s *Snapshot) Built() time.Time { return s.built }

// Changes returns the changes after version since up to the snapshot's
// Version, oldest first, and false when the log no longer reaches back that
// far.
func (s *Snapshot) Changes(since uint64) ([]Change, bool) {
	ch, _, ok := changesSince(s.changes, s.Version, since)
	return ch, ok
}

// Stats returns counters and per-application status counts for metrics.
func (r *Registry) Stats() Stats {
	s := r.Snapshot()
	p := r.Protection()
	st := Stats{
		Instances:        map[string]heureka.StatusCounts{},
		Registrations:    r.registrations.Load(),
		Renewals:         r.renewals.Load(),
		Cancels:          r.cancels.Load(),
		Evictions:        r.evictions.Load(),
		SelfPreservation: p.Active,
		RenewsLastMin:    p.RenewsLastMinute,
		RenewsThreshold:  p.Threshold,

		ExpectedRenewsPerMinute: p.ExpectedRenewsPerMinute,
	}
	// The counts kept with each application's view: the cost is the number
	// of applications, not of instances.
	for name, c := range s.counts {
		st.Instances[name] = maps.Clone(c)
	}
	return st
}

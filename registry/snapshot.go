package registry

import (
	"cmp"
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
	deltaUntil time.Time // after this the delta window has moved
	apps       *heureka.Applications
	counts     map[string]heureka.StatusCounts // per app; shared, never modified
	changes    []Change                        // the change log as of Version; shared, never modified
	retention  time.Duration

	deltaOnce sync.Once
	delta     *heureka.Applications

	digestOnce sync.Once
	digests    map[string]uint64
}

// Snapshot returns the current view. A read issued after a write returned
// sees that write: the view is rebuilt (once, for all readers) whenever the
// registry changed, and when the delta window moved.
func (r *Registry) Snapshot() *Snapshot {
	if s := r.snap.Load(); s != nil && s.gen == r.gen.Load() && r.now().Before(s.deltaUntil) {
		return s
	}
	r.buildMu.Lock()
	defer r.buildMu.Unlock()
	now := r.now()
	if s := r.snap.Load(); s != nil && s.gen == r.gen.Load() && now.Before(s.deltaUntil) {
		return s
	}
	s := r.build(now)
	r.snap.Store(s)
	return s
}

func (r *Registry) build(now time.Time) *Snapshot {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := &Snapshot{
		Version:   r.seq,
		gen:       r.gen.Load(),
		built:     now,
		changes:   r.changes[:len(r.changes):len(r.changes)],
		retention: r.cfg.DeltaRetention,
	}
	list := make([]*heureka.Application, 0, len(r.apps))
	counts := heureka.StatusCounts{}
	s.counts = make(map[string]heureka.StatusCounts, len(r.apps))
	for name, a := range r.apps {
		if a.view == nil || len(a.dirty) > 0 {
			a.rebuild(name)
			clear(a.dirty)
		}
		s.counts[name] = a.counts // rebuild replaces the map, never edits it
		for st, n := range a.counts {
			counts[st] += n
		}
		list = append(list, a.view)
	}
	slices.SortFunc(list, func(x, y *heureka.Application) int { return strings.Compare(x.Name, y.Name) })
	s.apps = &heureka.Applications{VersionDelta: 1, HashCode: counts.HashCode(), Apps: list}
	// The delta changes when its oldest entry leaves the window.
	s.deltaUntil = now.Add(r.cfg.DeltaRetention)
	cutoff := now.Add(-r.cfg.DeltaRetention)
	if i := firstAfter(s.changes, cutoff); i < len(s.changes) {
		s.deltaUntil = s.changes[i].Time.Add(r.cfg.DeltaRetention)
	}
	return s
}

// rebuild makes the application's new sorted view and its status counts:
// the old view patched with the changed IDs when few changed, else sorted
// afresh.
func (a *appEntry) rebuild(name string) {
	if a.view == nil || len(a.dirty) > len(a.view.Instances)/8 {
		list := make([]*heureka.Instance, 0, len(a.leases))
		counts := heureka.StatusCounts{}
		for _, l := range a.leases {
			list = append(list, l.inst)
			counts[l.inst.Status]++
		}
		slices.SortFunc(list, func(x, y *heureka.Instance) int { return strings.Compare(x.ID, y.ID) })
		a.view, a.counts = &heureka.Application{Name: name, Instances: list}, counts
		return
	}
	list := slices.Clone(a.view.Instances)
	counts := maps.Clone(a.counts)
	for id := range a.dirty {
		i, found := slices.BinarySearchFunc(list, id, func(in *heureka.Instance, id string) int { return strings.Compare(in.ID, id) })
		if found {
			counts[list[i].Status]--
		}
		l, live := a.leases[id]
		if live {
			counts[l.inst.Status]++
		}
		switch {
		case live && found:
			list[i] = l.inst
		case live:
			list = slices.Insert(list, i, l.inst)
		case found:
			list = slices.Delete(list, i, i+1)
		}
	}
	a.view, a.counts = &heureka.Application{Name: name, Instances: list}, counts
}

// firstAfter returns the index of the first change at or after t.
func firstAfter(changes []Change, t time.Time) int {
	i, _ := slices.BinarySearchFunc(changes, t, func(c Change, t time.Time) int { return c.Time.Compare(t) })
	return i
}

// Apps returns the whole registry: applications by name, instances by ID,
// versions__delta 1 and the reconcile hash code.
func (s *Snapshot) Apps() *heureka.Applications { return s.apps }

// Len returns the number of registered instances.
func (s *Snapshot) Len() int {
	n := 0
	for _, a := range s.apps.Apps {
		n += len(a.Instances)
	}
	return n
}

// App returns one application, or false when it has no instances.
func (s *Snapshot) App(name string) (*heureka.Application, bool) {
	i, ok := slices.BinarySearchFunc(s.apps.Apps, name, func(a *heureka.Application, n string) int { return strings.Compare(a.Name, n) })
	if !ok {
		return nil, false
	}
	return s.apps.Apps[i], true
}

// Instance returns one instance of app.
func (s *Snapshot) Instance(app, id string) (*heureka.Instance, bool) {
	a, ok := s.App(app)
	if !ok {
		return nil, false
	}
	return findInstance(a, id)
}

// InstanceByID returns the first instance with id in any application, as
// Eureka's /instances/{id} does.
func (s *Snapshot) InstanceByID(id string) (*heureka.Instance, bool) {
	for _, a := range s.apps.Apps {
		if in, ok := findInstance(a, id); ok {
			return in, true
		}
	}
	return nil, false
}

func findInstance(a *heureka.Application, id string) (*heureka.Instance, bool) {
	i, ok := slices.BinarySearchFunc(a.Instances, id, func(in *heureka.Instance, id string) int { return strings.Compare(in.ID, id) })
	if !ok {
		return nil, false
	}
	return a.Instances[i], true
}

// VIP returns the instances whose VIP address (secure: secure VIP address),
// split on commas, contains vip exactly. Like Eureka, versions__delta is -1
// and the hash code covers only the result.
func (s *Snapshot) VIP(vip string, secure bool) *heureka.Applications {
	out := &heureka.Applications{VersionDelta: -1, Apps: []*heureka.Application{}}
	for _, a := range s.apps.Apps {
		var match *heureka.Application
		for _, in := range a.Instances {
			addr := in.VIPAddress
			if secure {
				addr = in.SecureVIPAddress
			}
			if !hasVIP(addr, vip) {
				continue
			}
			if match == nil {
				match = &heureka.Application{Name: a.Name}
				out.Apps = append(out.Apps, match)
			}
			match.Instances = append(match.Instances, in)
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
func (s *Snapshot) Delta() *heureka.Applications {
	s.deltaOnce.Do(func() {
		recent := s.changes[firstAfter(s.changes, s.built.Add(-s.retention)):]
		type key struct{ app, id string }
		seen := map[key]bool{}
		var latest []*heureka.Instance
		for i := len(recent) - 1; i >= 0; i-- {
			in := recent[i].Instance
			if in == nil {
				continue // a notice
			}
			k := key{in.App, in.ID}
			if seen[k] {
				continue
			}
			seen[k] = true
			latest = append(latest, in)
		}
		slices.Reverse(latest)
		byApp := map[string]*heureka.Application{}
		apps := []*heureka.Application{}
		for _, in := range latest {
			a := byApp[in.App]
			if a == nil {
				a = &heureka.Application{Name: in.App}
				byApp[in.App] = a
				apps = append(apps, a)
			}
			a.Instances = append(a.Instances, in)
		}
		slices.SortStableFunc(apps, func(x, y *heureka.Application) int { return cmp.Compare(x.Name, y.Name) })
		s.delta = &heureka.Applications{VersionDelta: int64(s.Version), HashCode: s.apps.HashCode, Apps: apps}
	})
	return s.delta
}

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

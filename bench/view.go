package main

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
)

// view is one consumer's picture of the registry, as its client library
// gives it: instances by application and ID. Every kind of consumer (a
// heureka Cache, an etcd watcher, a ZooKeeper child cache) keeps one, and
// the scenarios wait on it with predicates, so "the client's view has
// changed" means the same thing for every system.
type view struct {
	mu      sync.Mutex
	apps    map[string]map[string]*heureka.Instance
	waiters []*waiter
	changes int
}

// waiter is one pending predicate and when it first held.
type waiter struct {
	pred func(v *view) bool // called with v.mu held
	done chan time.Time     // gets the time it first held; buffered
}

func newView() *view { return &view{apps: map[string]map[string]*heureka.Instance{}} }

// put stores in (nil removes app/id) and checks the waiters.
func (v *view) put(app, id string, in *heureka.Instance) {
	now := time.Now()
	app = strings.ToUpper(app)
	v.mu.Lock()
	defer v.mu.Unlock()
	m := v.apps[app]
	if in == nil {
		delete(m, id)
	} else {
		if m == nil {
			m = map[string]*heureka.Instance{}
			v.apps[app] = m
		}
		m[id] = in
	}
	v.changes++
	v.checkLocked(now)
}

// setApp replaces a whole application's instances.
func (v *view) setApp(app string, ins []*heureka.Instance) {
	now := time.Now()
	app = strings.ToUpper(app)
	m := make(map[string]*heureka.Instance, len(ins))
	for _, in := range ins {
		m[in.ID] = in
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.apps[app] = m
	v.changes++
	v.checkLocked(now)
}

func (v *view) checkLocked(now time.Time) {
	kept := v.waiters[:0]
	for _, w := range v.waiters {
		if w.pred(v) {
			w.done <- now
			continue
		}
		kept = append(kept, w)
	}
	clear(v.waiters[len(kept):])
	v.waiters = kept
}

// when returns a channel that receives the time pred first holds: at once
// if it holds now.
func (v *view) when(pred func(v *view) bool) <-chan time.Time {
	w := &waiter{pred: pred, done: make(chan time.Time, 1)}
	v.mu.Lock()
	defer v.mu.Unlock()
	if pred(v) {
		w.done <- time.Now()
	} else {
		v.waiters = append(v.waiters, w)
	}
	return w.done
}

// cancel drops every pending waiter (after a timeout).
func (v *view) cancel() {
	v.mu.Lock()
	v.waiters = nil
	v.mu.Unlock()
}

// get returns app/id; call from a predicate (v.mu held).
func (v *view) get(app, id string) *heureka.Instance {
	return v.apps[strings.ToUpper(app)][id]
}

// instances returns an application's instances; call from a predicate.
func (v *view) instances(app string) []*heureka.Instance {
	m := v.apps[strings.ToUpper(app)]
	out := make([]*heureka.Instance, 0, len(m))
	for _, in := range m {
		out = append(out, in)
	}
	return out
}

// size counts the instances in the view.
func (v *view) size() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, m := range v.apps {
		n += len(m)
	}
	return n
}

// dist summarises a sample of durations.
type dist struct {
	N             int
	P50, P99, Max time.Duration
	Mean          time.Duration
	Missed        int // samples that never arrived (counted as the timeout)
}

// summarize sorts d and computes nearest-rank percentiles.
func summarize(d []time.Duration, missed int) dist {
	if len(d) == 0 {
		return dist{Missed: missed}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	return dist{
		N: len(s), P50: pct(s, 0.50), P99: pct(s, 0.99), Max: s[len(s)-1],
		Mean: sum / time.Duration(len(s)), Missed: missed,
	}
}

func pct(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) all() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.d)
}

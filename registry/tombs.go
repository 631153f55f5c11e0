package registry

import (
	"container/heap"
	"time"
)

// Tombstones expire from a queue ordered by their time, so that pruning
// costs what expired. A queued entry is stale once its tombstone was
// replaced or removed (a new registration); pruning skips those.

type tombEntry struct {
	key tombKey
	t   time.Time
}

type tombQueue []tombEntry

func (q tombQueue) Len() int           { return len(q) }
func (q tombQueue) Less(i, j int) bool { return q[i].t.Before(q[j].t) }
func (q tombQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *tombQueue) Push(x any)        { *q = append(*q, x.(tombEntry)) }
func (q *tombQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = tombEntry{}
	*q = old[:len(old)-1]
	return e
}

// tombstone records an explicit cancel of k at t; r.mu must be held for
// writing.
func (r *Registry) tombstone(k tombKey, t time.Time) {
	r.tombs[k] = t
	heap.Push(&r.tombQ, tombEntry{k, t})
}

// tombsDue reports whether a tombstone may have outlived TombstoneTTL; r.mu
// must be held.
func (r *Registry) tombsDue(now time.Time) bool {
	return len(r.tombQ) > 0 && now.Sub(r.tombQ[0].t) >= r.cfg.TombstoneTTL
}

// pruneTombstones drops tombstones older than TombstoneTTL; r.mu must be
// held for writing.
func (r *Registry) pruneTombstones(now time.Time) {
	for r.tombsDue(now) {
		e := heap.Pop(&r.tombQ).(tombEntry)
		if t, ok := r.tombs[e.key]; ok && t.Equal(e.t) {
			delete(r.tombs, e.key)
		}
	}
}

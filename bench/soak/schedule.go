package main

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// dueQueue holds when each instance's next heartbeat is due, earliest
// first. One dispatcher hands due beats to a pool of workers, so a backlog
// is served oldest first across the whole fleet, as a server's queue
// serves a fleet's requests, and no instance waits behind the others that
// happen to share its connection.
type dueQueue struct {
	mu   sync.Mutex
	h    dueHeap
	wake chan struct{} // a beat was put back, maybe ahead of the head
}

type due struct {
	at time.Time
	i  int
}

type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// newDueQueue schedules n instances once per period from t0, instance i
// at period·i/n.
func newDueQueue(t0 time.Time, period time.Duration, n int) *dueQueue {
	q := &dueQueue{h: make(dueHeap, n), wake: make(chan struct{}, 1)}
	for i := range n {
		q.h[i] = due{at: t0.Add(time.Duration(int64(period) * int64(i) / int64(n))), i: i}
	}
	heap.Init(&q.h)
	return q
}

// put schedules instance i's next beat at at.
func (q *dueQueue) put(i int, at time.Time) {
	q.mu.Lock()
	heap.Push(&q.h, due{at: at, i: i})
	first := q.h[0].i == i && q.h[0].at.Equal(at)
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// dispatch sends each beat to out once it is due, earliest first, until
// ctx is done. A beat waits here, not in a goroutine of its own, while
// every worker is busy.
func (q *dueQueue) dispatch(ctx context.Context, out chan<- due) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		q.mu.Lock()
		var wait time.Duration = time.Hour
		var next due
		ready := false
		if len(q.h) > 0 {
			if wait = time.Until(q.h[0].at); wait <= 0 {
				next, ready = heap.Pop(&q.h).(due), true
			}
		}
		q.mu.Unlock()
		if ready {
			select {
			case out <- next:
			case <-ctx.Done():
				return
			}
			continue
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-t.C:
		}
	}
}

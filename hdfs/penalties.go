package hdfs

import (
	"maps"
	"sync"
	"time"
)

// Penalty defaults.
const (
	// DefaultPenaltyDuration keeps a DataNode that failed a client out of
	// placement for 30 s: the agent's lease (30 s) by then has either
	// renewed, proving the node alive, or expired, removing it.
	DefaultPenaltyDuration = 30 * time.Second
	// MaxPenalties bounds the list; past it the penalty closest to expiry
	// is dropped first.
	MaxPenalties = 4096
)

// Penalties is a client's short list of DataNodes to avoid after they failed
// it, each until a deadline. It is safe for concurrent use. The zero value
// uses DefaultPenaltyDuration and the wall clock.
type Penalties struct {
	mu       sync.Mutex
	now      func() time.Time
	duration time.Duration
	m        map[string]penalty
}

type penalty struct {
	until time.Time
	cause string
}

// NewPenalties returns a list whose penalties last d (DefaultPenaltyDuration
// if d <= 0) as measured by now (time.Now if nil).
func NewPenalties(d time.Duration, now func() time.Time) *Penalties {
	return &Penalties{duration: d, now: now}
}

// Penalize avoids instance id for the configured duration from now, for
// cause (kept for logs). Penalising again restarts the duration and replaces
// the cause.
func (p *Penalties) Penalize(id, cause string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	if p.m == nil {
		p.m = map[string]penalty{}
	}
	if _, ok := p.m[id]; !ok && len(p.m) >= MaxPenalties {
		p.pruneLocked(now)
		for len(p.m) >= MaxPenalties {
			p.dropSoonestLocked()
		}
	}
	d := p.duration
	if d <= 0 {
		d = DefaultPenaltyDuration
	}
	p.m[id] = penalty{until: now.Add(d), cause: cause}
}

// Forgive lifts id's penalty, e.g. after a successful write to it.
func (p *Penalties) Forgive(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, id)
}

// Active returns the penalties in force at now, instance ID → cause, for
// PlacementRequest.Penalized, and forgets those that have expired. The map
// is the caller's.
func (p *Penalties) Active(now time.Time) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pruneLocked(now)
	out := make(map[string]string, len(p.m))
	for id, pen := range p.m {
		out[id] = pen.cause
	}
	return out
}

// Len returns the number of penalties held, expired ones included until the
// next Active.
func (p *Penalties) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

func (p *Penalties) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

func (p *Penalties) pruneLocked(now time.Time) {
	maps.DeleteFunc(p.m, func(_ string, pen penalty) bool { return !now.Before(pen.until) })
}

func (p *Penalties) dropSoonestLocked() {
	first := true
	var id string
	var until time.Time
	for k, pen := range p.m {
		if first || pen.until.Before(until) || (pen.until.Equal(until) && k < id) {
			id, until, first = k, pen.until, false
		}
	}
	delete(p.m, id)
}

package main

import (
	"math"
	"sync/atomic"
	"time"
)

// histogram counts durations in buckets 5% apart from 10 µs to ~100 s,
// without locks: observing is one atomic add.
type histogram struct {
	buckets [330]atomic.Int64
	count   atomic.Int64
	sum     atomic.Int64 // nanoseconds
}

const (
	histMin    = 10 * time.Microsecond
	histGrowth = 1.05
)

func (h *histogram) observe(d time.Duration) {
	i := 0
	if d > histMin {
		i = int(math.Log(float64(d)/float64(histMin))/math.Log(histGrowth)) + 1
	}
	i = min(i, len(h.buckets)-1)
	h.buckets[i].Add(1)
	h.count.Add(1)
	h.sum.Add(int64(d))
}

// quantile returns the upper bound of the bucket holding quantile q.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.count.Load()
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= rank {
			return time.Duration(float64(histMin) * math.Pow(histGrowth, float64(i)))
		}
	}
	return time.Duration(float64(histMin) * math.Pow(histGrowth, float64(len(h.buckets))))
}

// phaseStats are what one phase of the run saw.
type phaseStats struct {
	name         string
	start, end   time.Time
	writes       histogram // storm registrations
	writeErrors  atomic.Int64
	renews       histogram // successful heartbeats
	scheduled    atomic.Int64
	kept         atomic.Int64 // succeeded within one period of their schedule
	notFound     atomic.Int64
	reregistered atomic.Int64
	renewErrors  atomic.Int64
	deltas       histogram
	fulls        histogram
	readErrors   atomic.Int64
	// per peer: CPU seconds over the phase, resident bytes at its end
	cpu []float64
	rss []int64
	// genCPU is the load generator's own CPU seconds over the phase: if it
	// nears the phase's length, the generator (one core) was the limit.
	genCPU float64
}

// phases holds the run's phases; current is where new samples go.
type phases struct {
	all []*phaseStats
	cur atomic.Pointer[phaseStats]
}

func (p *phases) current() *phaseStats { return p.cur.Load() }

func (p *phases) begin(name string) *phaseStats {
	st := &phaseStats{name: name, start: time.Now()}
	if prev := p.cur.Load(); prev != nil {
		prev.end = st.start
	}
	p.all = append(p.all, st)
	p.cur.Store(st)
	return st
}

func (p *phases) finish() {
	if st := p.cur.Load(); st != nil && st.end.IsZero() {
		st.end = time.Now()
	}
}

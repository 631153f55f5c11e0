package main

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	silences     histogram    // time since the instance's last success, at each success
	notFound     atomic.Int64
	reregistered atomic.Int64
	renewErrors  atomic.Int64
	deltas       histogram
	fulls        histogram
	readErrors   atomic.Int64
	pushes       histogram // -push: registrations with changed figures
	pushErrors   atomic.Int64
	// per peer: CPU seconds over the phase, resident bytes at its end
	cpu []float64
	rss []int64
	// genCPU is the load generator's own CPU seconds over the phase: if it
	// nears the phase's length, the generator (one core) was the limit.
	genCPU float64
	// served is the first peer's own histogram of its answers over the
	// phase, per route (serverRoutes), from its /metrics.
	served map[string]buckets
}

// buckets is a Prometheus histogram's cumulative counts by upper bound in
// seconds.
type buckets map[float64]float64

// serverRoutes are the answers whose server-side times the report shows:
// what the server took from reading a request to writing its answer, which
// leaves out the loopback, the generator and the time a request waited for
// the server to read it.
var serverRoutes = map[string]string{
	"renew": `code="200",method="PUT",route="/apps/{app}/{id}"`,
	"delta": `code="200",method="GET",route="/apps/delta"`,
	"full":  `code="200",method="GET",route="/apps"`,
}

// histograms reads the first peer's request histograms for serverRoutes.
func histograms(p *peer) map[string]buckets {
	out := map[string]buckets{}
	_ = p.scrape(func(series string, v float64) {
		if !strings.HasPrefix(series, "heureka_http_request_duration_seconds_bucket{") {
			return
		}
		for name, labels := range serverRoutes {
			if !strings.Contains(series, labels) {
				continue
			}
			i := strings.Index(series, `le="`)
			if i < 0 {
				continue
			}
			le := series[i+4:]
			le = le[:strings.IndexByte(le, '"')]
			bound, err := strconv.ParseFloat(le, 64)
			if le == "+Inf" {
				bound, err = math.Inf(1), nil
			}
			if err != nil {
				continue
			}
			if out[name] == nil {
				out[name] = buckets{}
			}
			out[name][bound] += v
		}
	})
	return out
}

// since returns the counts of b less those of a, taken earlier.
func (b buckets) since(a buckets) buckets {
	out := buckets{}
	for le, n := range b {
		out[le] = n - a[le]
	}
	return out
}

// quantile returns the upper bound of the bucket holding quantile q, 0 when
// there were no answers, +Inf when it lies past the last bound.
func (b buckets) quantile(q float64) float64 {
	bounds := make([]float64, 0, len(b))
	for le := range b {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 || b[bounds[len(bounds)-1]] == 0 {
		return 0
	}
	total := b[bounds[len(bounds)-1]]
	for _, le := range bounds {
		if b[le] >= q*total {
			return le
		}
	}
	return math.Inf(1)
}

// serverP99 formats a route's server-side p99 over the phase as "≤ bound".
func (st *phaseStats) serverP99(route string) string {
	le := st.served[route].quantile(0.99)
	switch {
	case le == 0:
		return "-"
	case math.IsInf(le, 1):
		return "> 2.5 s"
	}
	return "≤ " + ms(time.Duration(le*float64(time.Second)))
}

// phases holds the run's phases; current is where new samples go, and at
// is the phase a moment fell in (a heartbeat belongs to the phase it was
// due in).
type phases struct {
	mu  sync.RWMutex // guards all and the phases' start and end
	all []*phaseStats
	cur atomic.Pointer[phaseStats]
}

func (p *phases) current() *phaseStats { return p.cur.Load() }

// at returns the phase t fell in: the last one begun at or before t, else
// the first.
func (p *phases) at(t time.Time) *phaseStats {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for i := len(p.all) - 1; i > 0; i-- {
		if !p.all[i].start.After(t) {
			return p.all[i]
		}
	}
	if len(p.all) == 0 {
		return p.cur.Load()
	}
	return p.all[0]
}

func (p *phases) begin(name string) *phaseStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := &phaseStats{name: name, start: time.Now()}
	if prev := p.cur.Load(); prev != nil {
		prev.end = st.start
	}
	p.all = append(p.all, st)
	p.cur.Store(st)
	return st
}

func (p *phases) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.cur.Load(); st != nil && st.end.IsZero() {
		st.end = time.Now()
	}
}

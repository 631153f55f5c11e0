package dnsapi

import (
	"net/netip"
	"sync"

	"golang.org/x/time/rate"
)

// limiter bounds the UDP queries each source address may send: a token
// bucket per address. Past its bucket, a source's queries are answered
// every other time with an empty truncated reply, no larger than the
// query, and otherwise dropped ("slip", as BIND's response-rate limiting
// does): a client whose address is real retries over TCP, where it gets
// its answer, and a forged source gets at most half its queries back at
// their own size, so the server amplifies nothing.
type limiter struct {
	rate  rate.Limit
	burst int
	max   int

	mu      sync.Mutex
	sources map[netip.Addr]*source
}

type source struct {
	lim  *rate.Limiter
	over uint64 // queries refused so far
}

// verdict is what to do with a query.
type verdict int

const (
	answer verdict = iota
	slip           // send an empty truncated reply
	drop           // send nothing
	refuse         // REFUSED: the source is not on the access list
)

func newLimiter(r float64, burst, max int) *limiter {
	if r <= 0 {
		return nil
	}
	return &limiter{rate: rate.Limit(r), burst: burst, max: max, sources: map[netip.Addr]*source{}}
}

// check takes a token for a query from a. Loopback is exempt: every local
// process shares it, and no packet from elsewhere carries it.
func (l *limiter) check(a netip.Addr) verdict {
	if l == nil || a.IsLoopback() {
		return answer
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.sources[a]
	if !ok {
		if len(l.sources) >= l.max {
			l.sweep()
		}
		s = &source{lim: rate.NewLimiter(l.rate, l.burst)}
		l.sources[a] = s
	}
	if s.lim.Allow() {
		return answer
	}
	s.over++
	if s.over%2 == 1 {
		return slip
	}
	return drop
}

// sweep forgets the sources whose bucket has filled again (they have been
// quiet long enough to be as good as new); if that frees nothing, it
// forgets every source, so the table stays bounded even when a flood
// forges a new address for each packet.
func (l *limiter) sweep() {
	for a, s := range l.sources {
		if s.lim.Tokens() >= float64(l.burst) {
			delete(l.sources, a)
		}
	}
	if len(l.sources) >= l.max {
		clear(l.sources)
	}
}

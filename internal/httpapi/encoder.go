package httpapi

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// The encoder keeps the registry-wide listings ready to serve through a
// storm. A listing is its blocks' gzip members (cache.go), and a block is
// encoded when first asked for. After a write that is one or two blocks,
// cheap enough to do inside the read. After a storm it is the whole
// registry, and while a storm goes on in no particular order of IDs it is
// most blocks again at every poll: every reader would re-encode them, and
// the readers alone could use up the server's CPU while renewals queue.
//
// So encoding draws on a budget of CPU time: up to budgetBurst at once,
// refilled at 1/budgetShare of one core, and at most budgetBurst in debt
// (the encoder never waits more than budgetShare·budgetBurst for it). An
// encoder goroutine follows the registry's changes and, while the budget
// allows, encodes the newest snapshot's blocks once they have lasted
// lastFor. A read whose listing has more than syncBlocks blocks still to
// encode is served the newest snapshot that is ready instead, if it is at
// most maxStale behind: a consistent listing with its own version and hash
// code (Eureka's own response cache is up to 30 s behind at all times). The
// read then asks the encoder to encode the newest snapshot whole, lasting
// or not, as soon as the budget allows, so that after a bulk write or at
// the end of a storm reads are stale for one pass and never wait for it.
// A read encodes inline only what an ordinary write leaves (a block or
// two), or when no ready snapshot is close enough; so after ordinary
// writes a read sees the newest snapshot. The full listing and the delta
// are ready apart: changes spread over many blocks of the full listing sit
// in a block or two of the delta, and a delta read that encodes those must
// not leave a full read the rest to encode.
const (
	syncBlocks  = 8
	budgetBurst = time.Second
	budgetShare = 4 // the budget refills at 1/budgetShare of a core
	minRest     = 100 * time.Millisecond
	lastFor     = time.Second // how long a block must last before the encoder encodes it
	maxStale    = 30 * time.Second
	// xmlWanted is how long after an XML listing read the encoder keeps
	// XML members ready as well as JSON ones.
	xmlWanted = 10 * time.Minute
)

type encoder struct {
	reg *registry.Registry
	now func() time.Time // the budget's clock

	xmlAsked atomic.Int64 // unix nanoseconds of the last XML listing read
	// wanted asks the encoder for a pass over every block: a read was
	// served a ready snapshot because the newest had too many to encode.
	wanted chan struct{}

	mu sync.Mutex
	// tokens is the budget left (negative: in debt) as of filled.
	tokens time.Duration
	filled time.Time
	// ready is, per listing and format, the newest snapshot whose blocks
	// of that listing are encoded (or being encoded by the read that chose
	// it). The full listing and the delta are ready apart: a delta read
	// that encodes its few new blocks says nothing of the full listing's.
	ready [2][2]*registry.Snapshot
}

// listing is which of a snapshot's listings a read assembles.
type listing int

const (
	listFull  listing = iota // the whole registry; per-application reads too
	listDelta                // the delta
)

func newEncoder(reg *registry.Registry, now func() time.Time) *encoder {
	return &encoder{reg: reg, now: now, tokens: budgetBurst, filled: now(), wanted: make(chan struct{}, 1)}
}

// refill brings the budget up to now; e.mu must be held.
func (e *encoder) refill(now time.Time) {
	if now.After(e.filled) {
		e.tokens = min(budgetBurst, e.tokens+now.Sub(e.filled)/budgetShare)
		e.filled = now
	}
}

// spend charges d of encoding to the budget.
func (e *encoder) spend(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refill(e.now())
	e.tokens = max(e.tokens-d, -budgetBurst)
}

// debt returns how long until the budget is no longer spent.
func (e *encoder) debt() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refill(e.now())
	return max(0, -e.tokens*budgetShare)
}

// build runs an encoding and charges its time to the budget.
func (e *encoder) build(fn func() *payload) func() *payload {
	return func() *payload {
		t0 := time.Now()
		defer func() { e.spend(time.Since(t0)) }()
		return fn()
	}
}

// snapshot returns the snapshot a read in f of listing l is served from:
// of the whole listing, or with app set of that application's blocks of
// the full listing. Only a read of a whole listing makes the snapshot it
// encoded ready.
func (e *encoder) snapshot(f eureka.Format, l listing, app string) *registry.Snapshot {
	i := formatIndex(f)
	if f == eureka.XML {
		e.xmlAsked.Store(time.Now().UnixNano())
	}
	cur := e.reg.Snapshot()
	e.mu.Lock()
	ready := e.ready[l][i]
	e.mu.Unlock()
	if ready == cur {
		return cur
	}
	if ready != nil && ready.Version <= cur.Version && behind(ready, cur) <= maxStale && pending(blocksOf(cur, l, app), f, syncBlocks) > syncBlocks {
		select {
		case e.wanted <- struct{}{}:
		default: // already asked
		}
		return ready
	}
	if app == "" {
		e.publish(l, i, cur)
	}
	return cur
}

// blocksOf returns the blocks a read of listing l (or of app's part of the
// full listing) assembles from s.
func blocksOf(s *registry.Snapshot, l listing, app string) []registry.AppBlocks {
	switch {
	case l == listDelta:
		return s.DeltaBlocks()
	case app == "":
		return s.Blocks()
	}
	a, ok := s.AppBlocks(app)
	if !ok {
		return nil
	}
	return []registry.AppBlocks{a}
}

// behind is how long ready has been behind cur: from the first change
// after it to when cur was built.
func behind(ready, cur *registry.Snapshot) time.Duration {
	ch, ok := cur.Changes(ready.Version)
	switch {
	case !ok:
		return maxStale + 1
	case len(ch) == 0:
		return 0
	}
	return cur.Built().Sub(ch[0].Time)
}

// publish records s as ready for listing l in format i, if it is newer
// than what is.
func (e *encoder) publish(l listing, i int, s *registry.Snapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.ready[l][i]; r == nil || s.Version > r.Version || (s.Version == r.Version && s.Built().After(r.Built())) {
		e.ready[l][i] = s
	}
}

// pending counts the blocks of apps not yet encoded in f, stopping once it
// passes limit.
func pending(apps []registry.AppBlocks, f eureka.Format, limit int) int {
	n := 0
	for _, app := range apps {
		for _, b := range app.Blocks {
			if !encoded(b, f) {
				if n++; n > limit {
					return n
				}
			}
		}
	}
	return n
}

// run encodes new snapshots' blocks until done is closed, at most every
// minRest and only while the budget allows. A block is encoded once it
// has lasted lastFor: in a storm in no order of IDs most blocks are
// replaced within a second, and encoding them would be wasted. A pass that
// left blocks for that reason is followed by another one, change or not.
// A pass a read asked for (wanted) encodes every block.
func (e *encoder) run(done <-chan struct{}) {
	var last time.Time
	seen := map[*registry.Block]time.Time{}
	changed := e.reg.Changed()
	again := false
	for {
		whole := false
		if !again {
			select {
			case <-done:
				return
			case <-changed:
			case <-e.wanted:
				whole = true
			}
		}
		wait := max(time.Until(last.Add(minRest)), e.debt())
		select {
		case <-done:
			return
		case <-time.After(wait):
		}
		// Taken before the snapshot, so that no change slips between.
		changed = e.reg.Changed()
		last = time.Now()
		select {
		case <-e.wanted:
			whole = true
		default:
		}
		seen, again = e.pass(seen, last, whole)
		e.spend(time.Since(last))
	}
}

// overdue reports whether a pass over s must encode every block, lasting
// or not: when no JSON snapshot is ready yet, so that the first storm a
// server sees leaves one to serve instead of the first reads after it
// encoding the registry inline; and when the ready one is halfway to
// maxStale behind s, since a storm that never lets blocks last would
// otherwise leave readers on an ever older snapshot.
func (e *encoder) overdue(s *registry.Snapshot) bool {
	e.mu.Lock()
	ready := [...]*registry.Snapshot{e.ready[listFull][0], e.ready[listDelta][0]}
	e.mu.Unlock()
	for _, r := range ready {
		if r == nil || behind(r, s) > maxStale/2 {
			return true
		}
	}
	return false
}

// pass encodes the newest snapshot's blocks that have lasted lastFor since
// a pass first saw them (seen), or all of them if whole or overdue, in JSON and,
// if XML listings were read lately, XML. It returns when it saw each block
// and whether it left any unencoded; when it left none, the snapshot is
// ready.
func (e *encoder) pass(seen map[*registry.Block]time.Time, now time.Time, whole bool) (map[*registry.Block]time.Time, bool) {
	s := e.reg.Snapshot()
	all := whole || e.overdue(s)
	formats := []eureka.Format{eureka.JSON}
	if now.UnixNano()-e.xmlAsked.Load() < int64(xmlWanted) {
		formats = append(formats, eureka.XML)
	}
	next := make(map[*registry.Block]time.Time, len(seen))
	left := [2][2]bool{} // by listing and format
	for l, list := range [][]registry.AppBlocks{listFull: s.Blocks(), listDelta: s.DeltaBlocks()} {
		for _, app := range list {
			for _, b := range app.Blocks {
				first, ok := seen[b]
				if !ok {
					first = now
				}
				next[b] = first
				for _, f := range formats {
					switch {
					case encoded(b, f):
					case all || now.Sub(first) >= lastFor:
						blockPart(b, f)
					default:
						left[l][formatIndex(f)] = true
					}
				}
			}
		}
	}
	again := false
	for l := range left {
		for _, f := range formats {
			if left[l][formatIndex(f)] {
				again = true
			} else {
				e.publish(listing(l), formatIndex(f), s)
			}
		}
	}
	return next, again
}

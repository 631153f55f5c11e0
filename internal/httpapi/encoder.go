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
// encoder goroutine follows the registry's changes. It encodes the
// delta's blocks once they have lasted lastFor, since every client polls
// the delta. The full listing's blocks it encodes once they have lasted
// fullLastFor, when a read asks, and in any case before its ready snapshot
// is maxStale/2 behind: a fleet that pushes its figures changes most
// blocks every few seconds, while clients read the full listing only when
// their delta's hash code does not match.
// A read whose listing has more than syncBlocks blocks still to encode is
// served the newest snapshot that is ready instead, if it is at most
// maxStale behind: a consistent listing with its own version and hash
// code (Eureka's own response cache is up to 30 s behind at all times). If
// that snapshot is more than askAfter behind (stormAskAfter while the
// registry takes a registration storm), the read asks the encoder to
// encode its listing in the newest snapshot whole, lasting or not, as soon
// as the budget allows, so that after a bulk write or at the end of a storm
// reads are stale for one pass and never wait for it.
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
	lastFor     = time.Second // how long a delta block must last before the encoder encodes it
	// fullLastFor is how long a block of the full listing must last before
	// the encoder encodes it unasked. However fast changes come, that
	// bounds the encoder's work on the full listing to about B/(e·T)
	// blocks a second (B blocks, T fullLastFor), spread over time.
	fullLastFor = 5 * time.Second
	maxStale    = 30 * time.Second
	// askAfter is how far behind a ready snapshot served to a read must be
	// for the read to ask for a pass over its listing. Under a steady
	// stream of changes every application's first and last delta blocks
	// change between any two reads; a pass per read re-encoded them at the
	// rate clients poll, a quarter of a core at 100k instances pushing
	// every 5 minutes (docs/benchmarks.md).
	askAfter = 2 * time.Second
	// stormAskAfter is askAfter while the registry takes a registration
	// storm (Registry.Storming). Every pass a read asks for then
	// re-encodes most of the listing, which the next registrations change
	// again, and the CPU it takes is what renewals wait for: in a 100k
	// restart the refill's latencies were those of a core 0.93 busy
	// (docs/benchmarks.md). Reads still get a whole, consistent listing,
	// at most this far behind plus a pass; the encoder's own schedule
	// (fullLastFor, maxStale/2) is unchanged.
	stormAskAfter = 10 * time.Second
	// xmlWanted is how long after an XML listing read the encoder keeps
	// XML members ready as well as JSON ones.
	xmlWanted = 10 * time.Minute
)

// lastingFor is, per listing, how long a block must last before the
// encoder encodes it unasked.
var lastingFor = [2]time.Duration{listFull: fullLastFor, listDelta: lastFor}

type encoder struct {
	reg *registry.Registry
	now func() time.Time // the budget's clock

	xmlAsked atomic.Int64 // unix nanoseconds of the last XML listing read
	// asked[l] asks the encoder for a pass over every block of listing l:
	// a read of it was served a ready snapshot because the newest had too
	// many to encode. wanted wakes the encoder to look.
	asked  [2]atomic.Bool
	wanted chan struct{}

	passes atomic.Int64 // the passes run has made

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
	e.mu.Lock()
	ready := e.ready[l][i]
	e.mu.Unlock()
	// In a storm a read is served the ready snapshot without first building
	// the newest to count its blocks left to encode: the registry changes
	// between any two reads, so every read built one only to be served the
	// ready one (5% of a 100k refill's CPU). More changes than a read
	// encodes blocks inline is enough to serve it; the ready snapshot is
	// whole and consistent.
	if ready != nil && e.reg.Storming() {
		if ch, _, ok := e.reg.ChangesSince(ready.Version); ok && len(ch) > syncBlocks {
			if d := e.reg.Now().Sub(ch[0].Time); d <= maxStale {
				e.askIfBehind(l, d, stormAskAfter)
				return ready
			}
		}
	}
	cur := e.reg.Snapshot()
	if ready == cur {
		return cur
	}
	var d time.Duration // how far behind cur ready is
	served := ready != nil && ready.Version <= cur.Version && pending(blocksOf(cur, l, app), f, syncBlocks) > syncBlocks
	if served {
		d = behind(ready, cur, e.reg.Now())
		served = d <= maxStale
	}
	if !served {
		if app == "" {
			e.publish(l, i, cur)
		}
		return cur
	}
	ask := askAfter
	if e.reg.Storming() {
		ask = stormAskAfter
	}
	e.askIfBehind(l, d, ask)
	return ready
}

// askIfBehind asks the encoder for a pass over listing l when a read was
// served a ready snapshot d behind, and d is past limit.
func (e *encoder) askIfBehind(l listing, d, limit time.Duration) {
	if d <= limit {
		return
	}
	e.asked[l].Store(true)
	select {
	case e.wanted <- struct{}{}:
	default: // already asked
	}
}

// takeAsked returns, per listing, whether a read asked for a pass over
// all of it since the last call.
func (e *encoder) takeAsked() [2]bool {
	return [2]bool{e.asked[listFull].Swap(false), e.asked[listDelta].Swap(false)}
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

// behind is how long ready has been behind cur as of at: from the first
// change after it to at, or to when cur was built if that is later (the
// registry may run on a clock of its own).
func behind(ready, cur *registry.Snapshot, at time.Time) time.Duration {
	ch, ok := cur.Changes(ready.Version)
	switch {
	case !ok:
		return maxStale + 1
	case len(ch) == 0:
		return 0
	}
	if b := cur.Built(); b.After(at) {
		at = b
	}
	return at.Sub(ch[0].Time)
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
// minRest and only while the budget allows. It passes over the newest
// snapshot when the registry changes, when a read asks (a pass over every
// block of the listing it read), when the delta blocks a pass left will
// have lasted lastFor, and when the full listing's blocks it left would
// have lasted fullLastFor or the listing falls overdue.
//
// While a pass has left delta blocks to last, changes do not wake it: no
// block a change makes can be encoded before it has lasted, so a pass
// before then would only build a snapshot to look at blocks it must
// leave. In a storm, or under a fleet's steady pushes, that was a pass
// every minRest, each building a snapshot whose blocks the next write
// replaced (8–10% of the server's CPU in a 100k registration storm,
// docs/benchmarks.md). A block a change makes meanwhile is seen at the
// next pass, and encoded within 2·lastFor of its making; a read that
// meets it first encodes it itself or is served the ready snapshot.
//
// changed is the registry's Changed channel as of when the encoder was
// made, so that writes before run starts wake it too.
func (e *encoder) run(done <-chan struct{}, changed <-chan struct{}) {
	var last time.Time
	seen := map[*registry.Block]time.Time{}
	due := time.NewTimer(time.Hour)
	due.Stop()
	waitLasting := false
	for {
		wake := changed
		if waitLasting {
			wake = nil // see above
		}
		select {
		case <-done:
			return
		case <-wake:
		case <-due.C:
		case <-e.wanted:
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
		default:
		}
		whole := e.takeAsked()
		var deltaDue, fullDue time.Duration
		seen, deltaDue, fullDue = e.pass(seen, last, whole)
		waitLasting = deltaDue > 0
		next := fullDue
		if waitLasting && (next == 0 || deltaDue < next) {
			next = deltaDue
		}
		if next > 0 {
			due.Reset(max(next, minRest))
		} else {
			due.Stop()
		}
		e.passes.Add(1)
		e.spend(time.Since(last))
	}
}

// overdue reports, per listing, whether a pass over s must encode every
// block of it in formats, and how long until it must: at once when a
// format has no snapshot ready yet, so that the first storm a server sees
// leaves one to serve instead of the first reads after it encoding the
// registry inline; otherwise once the ready one is halfway to maxStale
// behind s as of now, so that readers are never served one too old to
// serve.
func (e *encoder) overdue(s *registry.Snapshot, now time.Time, formats []eureka.Format) (late [2]bool, due [2]time.Duration) {
	e.mu.Lock()
	ready := e.ready
	e.mu.Unlock()
	for l := range ready {
		due[l] = maxStale / 2
		for _, f := range formats {
			r := ready[l][formatIndex(f)]
			if r == nil {
				due[l] = 0
				continue
			}
			due[l] = min(due[l], maxStale/2-behind(r, s, now))
		}
		late[l] = due[l] <= 0
	}
	return late, due
}

// pass encodes blocks of the newest snapshot in JSON and, if XML listings
// were read lately, XML: every block of a listing that is overdue or that
// whole names; otherwise the blocks that have lasted since a pass first saw
// them (seen), lastFor for the delta's and fullLastFor for the full
// listing's. lastFor and XML go by now, the encoder's clock; how far
// behind a listing is goes by the registry's. A listing it left no block
// of in a format is made ready. It returns when it saw each block; if it
// left delta blocks to last, how long until the first of them will have
// lasted lastFor (otherwise 0); and, if it left blocks of the full
// listing, how long to wait before passing again for them: fullLastFor,
// or until the listing falls overdue if that is sooner (otherwise 0).
func (e *encoder) pass(seen map[*registry.Block]time.Time, now time.Time, whole [2]bool) (next map[*registry.Block]time.Time, deltaDue, fullDue time.Duration) {
	s := e.reg.Snapshot()
	formats := []eureka.Format{eureka.JSON}
	if now.UnixNano()-e.xmlAsked.Load() < int64(xmlWanted) {
		formats = append(formats, eureka.XML)
	}
	late, due := e.overdue(s, e.reg.Now(), formats)
	next = make(map[*registry.Block]time.Time, len(seen))
	left := [2][2]bool{} // by listing and format
	for l, list := range [][]registry.AppBlocks{listFull: s.Blocks(), listDelta: s.DeltaBlocks()} {
		all := whole[l] || late[l]
		for _, app := range list {
			for _, b := range app.Blocks {
				first, ok := seen[b]
				if !ok {
					first = now
				}
				next[b] = first
				lasted := now.Sub(first) >= lastingFor[l]
				for _, f := range formats {
					switch {
					case encoded(b, f):
					case all || lasted:
						blockPart(b, f)
					default:
						left[l][formatIndex(f)] = true
						if listing(l) == listDelta {
							if d := first.Add(lastFor).Sub(now); deltaDue == 0 || d < deltaDue {
								deltaDue = d
							}
						}
					}
				}
			}
		}
	}
	for l := range left {
		for _, f := range formats {
			switch {
			case !left[l][formatIndex(f)]:
				e.publish(listing(l), formatIndex(f), s)
			case listing(l) == listDelta: // deltaDue is set
			default:
				fullDue = min(due[l], fullLastFor)
			}
		}
	}
	return next, deltaDue, fullDue
}

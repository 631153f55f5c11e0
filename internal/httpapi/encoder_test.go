package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry"

	"github.com/heureka-project/heureka/internal/testclock"
)

// encoderServer is a Server whose encoder runs on clock and has no
// goroutine of its own, so that only the reads encode.
func encoderServer(t *testing.T, clock *testclock.Clock) (*Server, *registry.Registry, *httptest.Server) {
	t.Helper()
	reg, enc := clockedEncoder(t, clock)
	s, err := New(DefaultConfig(), reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.CloseStreams() // stops the background encoder New started
	s.enc = enc
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, reg, hs
}

// clockedEncoder is an encoder, without a goroutine, over a registry on
// clock.
func clockedEncoder(t *testing.T, clock *testclock.Clock) (*registry.Registry, *encoder) {
	t.Helper()
	cfg := registry.DefaultConfig()
	cfg.Clock = clock.Now
	reg, err := registry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, newEncoder(reg, clock.Now)
}

// registerRange registers benchInstance(from) to benchInstance(to-1).
func registerRange(t testing.TB, reg *registry.Registry, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := reg.Register(benchInstance(i), false); err != nil {
			t.Fatal(err)
		}
	}
}

// readApps fetches /eureka/apps/ in JSON and returns the version it was
// read at and the plain body.
func readApps(t *testing.T, url string) (uint64, []byte) {
	t.Helper()
	h, body := readListing(t, url, "/eureka/apps/")
	v, err := strconv.ParseUint(h.Get(versionHeader), 10, 64)
	if err != nil {
		t.Fatalf("version header %q: %v", h.Get(versionHeader), err)
	}
	return v, body
}

// readListing fetches path in JSON, gzipped as Eureka clients ask, and
// returns the answer's header and plain body; anything but a 200 fails t.
func readListing(t *testing.T, url, path string) (http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url+path, nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", path, resp.StatusCode)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header, body
}

// TestABulkWriteIsReadAfterOnePass: a read after a write that left many
// blocks to encode is served the ready snapshot at once, whole, and asks
// the encoder for a pass over every block of its listing once the ready
// snapshot is askAfter behind; once that pass has run, reads see the
// newest snapshot. A read after an ordinary write (a block or two) is
// always fresh.
func TestABulkWriteIsReadAfterOnePass(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, reg, hs := encoderServer(t, clock)
	registerRange(t, reg, 0, 10)
	readApps(t, hs.URL)
	registerRange(t, reg, 10, 12)
	if v, _ := readApps(t, hs.URL); v != reg.Snapshot().Version {
		t.Fatalf("after an ordinary write: read at %d, want the newest, %d", v, reg.Snapshot().Version)
	}
	ready := reg.Snapshot()

	registerRange(t, reg, 12, 30*registry.BlockSize)
	for _, wait := range []time.Duration{0, askAfter + time.Second} {
		clock.Advance(wait)
		v, body := readApps(t, hs.URL)
		if v != ready.Version || !bytes.Equal(body, eureka.EncodeApplications(eureka.JSON, ready.Apps())) {
			t.Fatalf("%s after a bulk write: read at %d, want the ready snapshot's %d, whole", wait, v, ready.Version)
		}
		if wait == 0 && s.enc.takeAsked() != [2]bool{} {
			t.Fatalf("a read served a ready snapshot less than askAfter behind asked for a pass")
		}
	}
	select {
	case <-s.enc.wanted:
	default:
		t.Fatalf("a read served the ready snapshot did not ask the encoder for a pass")
	}
	asked := s.enc.takeAsked()
	if asked != [2]bool{listFull: true} {
		t.Fatalf("a full read asked for a pass over (full, delta) %v, want the full listing only", asked)
	}
	if _, _, due := s.enc.pass(map[*registry.Block]time.Time{}, clock.Now(), asked); due != 0 {
		t.Fatalf("the pass a read asked for left the full listing's blocks for later (due in %s)", due)
	}
	snap := reg.Snapshot()
	if v, body := readApps(t, hs.URL); v != snap.Version || !bytes.Equal(body, eureka.EncodeApplications(eureka.JSON, snap.Apps())) {
		t.Fatalf("after the pass: read at %d, want the newest, %d", v, snap.Version)
	}
}

// TestADeltaReadLeavesTheFullListingPending: changes spread over many
// blocks of the full listing fit in one block of the delta. A delta read
// then encodes that block and is served the newest snapshot, but the full
// listing's blocks are still to encode: a full read after it is served the
// full listing's ready snapshot, not left to encode them all itself.
func TestADeltaReadLeavesTheFullListingPending(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, reg, hs := encoderServer(t, clock)
	const blocks = 4 * syncBlocks
	registerRange(t, reg, 0, blocks*registry.BlockSize)
	clock.Advance(4 * time.Minute) // the registrations leave the delta
	ready, _ := readApps(t, hs.URL)
	for b := range blocks {
		if err := reg.SetStatus("HDFS-DATANODE.PROD", benchInstance(b*registry.BlockSize).ID, heureka.StatusOutOfService, 0, false); err != nil {
			t.Fatal(err)
		}
	}
	cur := reg.Snapshot()
	if n := pending(cur.DeltaBlocks(), eureka.JSON, 1000); n > syncBlocks {
		t.Fatalf("the delta has %d blocks to encode; the test needs a delta read to encode its own", n)
	}
	readListing(t, hs.URL, "/eureka/apps/delta")
	if got := s.enc.ready[listDelta][0]; got != cur {
		t.Fatalf("the delta read did not make the newest snapshot the delta's ready one")
	}
	if v, _ := readApps(t, hs.URL); v != ready {
		t.Fatalf("full read after a delta read at version %d, want the full listing's ready %d (newest %d, %d blocks to encode)",
			v, ready, cur.Version, pending(cur.Blocks(), eureka.JSON, 1000))
	}
}

// TestAReadAsksOnlyForItsListing: a delta read served the delta's ready
// snapshot asks for a pass over the delta, and that pass leaves the full
// listing, which nobody read, as it was. Delta reads come from every
// client every poll; were each to have the full listing encoded, a fleet
// that pushes its figures would have the registry re-gzipped at the rate
// clients poll.
func TestAReadAsksOnlyForItsListing(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, reg, hs := encoderServer(t, clock)
	registerRange(t, reg, 0, 4*registry.BlockSize)
	readApps(t, hs.URL)
	readListing(t, hs.URL, "/eureka/apps/delta")
	ready := reg.Snapshot()

	registerRange(t, reg, 4*registry.BlockSize, 8*syncBlocks*registry.BlockSize)
	clock.Advance(askAfter + time.Second)
	_, body := readListing(t, hs.URL, "/eureka/apps/delta")
	if want := `"versions__delta":"` + strconv.FormatUint(ready.Version, 10) + `"`; !bytes.Contains(body, []byte(want)) {
		t.Fatalf("delta read after a bulk write: want the ready snapshot's %s in %.200s", want, body)
	}
	asked := s.enc.takeAsked()
	if asked != [2]bool{listDelta: true} {
		t.Fatalf("a delta read asked for a pass over (full, delta) %v, want the delta only", asked)
	}
	s.enc.pass(map[*registry.Block]time.Time{}, clock.Now(), asked)
	cur := reg.Snapshot()
	if s.enc.ready[listDelta][0] != cur || pending(cur.DeltaBlocks(), eureka.JSON, 0) != 0 {
		t.Fatalf("the pass the delta read asked for left delta blocks")
	}
	if n := pending(cur.Blocks(), eureka.JSON, 1000); n < 8*syncBlocks-4 || s.enc.ready[listFull][0] != ready {
		t.Fatalf("the pass the delta read asked for encoded the full listing: %d blocks left, ready moved %v", n, s.enc.ready[listFull][0] != ready)
	}
}

// TestReadsInAStormGetTheReadySnapshot: while writes keep leaving many
// blocks to encode, reads are served the last snapshot that was ready,
// whole and consistent, until it falls maxStale behind; then a read
// encodes the newest itself.
func TestReadsInAStormGetTheReadySnapshot(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	_, reg, hs := encoderServer(t, clock)
	registerRange(t, reg, 0, 4*registry.BlockSize)
	v0, _ := readApps(t, hs.URL)
	ready := reg.Snapshot()
	if v0 != ready.Version {
		t.Fatalf("first read at %d, want %d", v0, ready.Version)
	}

	registerRange(t, reg, 4*registry.BlockSize, 40*registry.BlockSize)
	v, body := readApps(t, hs.URL)
	if v != ready.Version || !bytes.Equal(body, eureka.EncodeApplications(eureka.JSON, ready.Apps())) {
		t.Fatalf("read in a storm at version %d, want the ready snapshot's %d, whole", v, ready.Version)
	}
	// One more write does not make a read pay for the storm's blocks.
	registerRange(t, reg, 40*registry.BlockSize, 40*registry.BlockSize+1)
	if v, _ := readApps(t, hs.URL); v != ready.Version {
		t.Fatalf("with many blocks to encode: read at %d, want %d", v, ready.Version)
	}

	// The ready snapshot is too far behind to serve.
	clock.Advance(maxStale + time.Second)
	registerRange(t, reg, 40*registry.BlockSize+1, 80*registry.BlockSize)
	if v, _ := readApps(t, hs.URL); v != reg.Snapshot().Version {
		t.Fatalf("ready snapshot %s behind: read at %d, want the newest, %d", maxStale+time.Second, v, reg.Snapshot().Version)
	}
}

// TestEncoderEncodesAheadOfReads: after a storm no read has seen, the
// background encoder, on the real clock, makes the delta ready once its
// blocks last, and the full listing ready once it falls overdue (a timer,
// since no change wakes it then), so reads after a storm find nothing to
// encode themselves.
func TestEncoderEncodesAheadOfReads(t *testing.T) {
	t.Parallel() // waits maxStale/2 for the full listing
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(DefaultConfig(), reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseStreams()
	registerRange(t, reg, 0, 20*registry.BlockSize)
	proctest.Eventually(t, time.Minute, "the encoder to make every block of the newest snapshot ready", func() bool {
		s := reg.Snapshot()
		return pending(s.Blocks(), eureka.JSON, 0)+pending(s.DeltaBlocks(), eureka.JSON, 0) == 0
	})
	if n := pending(reg.Snapshot().Blocks(), eureka.XML, 0); n == 0 {
		t.Fatalf("XML blocks encoded although no XML listing was read")
	}
}

// TestEncodingBudget: spending puts the budget in debt, which clears at
// 1/budgetShare of the time passed, up to budgetBurst.
func TestEncodingBudget(t *testing.T) {
	clock := testclock.New(time.Unix(0, 0))
	e := newEncoder(nil, clock.Now)
	if d := e.debt(); d != 0 {
		t.Fatalf("fresh budget in debt %s", d)
	}
	e.spend(budgetBurst + time.Second)
	if d := e.debt(); d != budgetShare*time.Second {
		t.Fatalf("debt %s, want %s", d, budgetShare*time.Second)
	}
	e.spend(time.Hour)
	if d := e.debt(); d != budgetShare*budgetBurst {
		t.Fatalf("debt after spending an hour %s, want the cap %s", d, budgetShare*budgetBurst)
	}
	clock.Advance(budgetShare * (budgetBurst - time.Second))
	clock.Advance(budgetShare * time.Second / 2)
	if d := e.debt(); d != budgetShare*time.Second/2 {
		t.Fatalf("debt after refilling half %s, want %s", d, budgetShare*time.Second/2)
	}
	clock.Advance(time.Hour)
	e.spend(budgetBurst)
	if d := e.debt(); d != 0 {
		t.Fatalf("a full budget spent down to 0: debt %s, want 0 (the burst is capped)", d)
	}
}

// TestEncoderPassEncodesDeltaBlocksThatLasted: a pass encodes only the
// delta's blocks that lasted lastFor since a pass first saw them, says
// when the first block it left will have lasted, and makes the delta
// ready once it left none. The full listing's blocks it leaves, however
// long they last, and says when that listing falls overdue.
func TestEncoderPassEncodesDeltaBlocksThatLasted(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	reg, e := clockedEncoder(t, clock)
	empty := reg.Snapshot()
	e.publish(listFull, 0, empty) // something is ready, so passes wait for blocks to last
	e.publish(listDelta, 0, empty)
	registerRange(t, reg, 0, 4*registry.BlockSize)
	seen, deltaDue, _ := e.pass(map[*registry.Block]time.Time{}, clock.Now(), [2]bool{})
	if deltaDue != lastFor || pending(reg.Snapshot().DeltaBlocks(), eureka.JSON, 0) == 0 {
		t.Fatalf("first pass: delta due in %s, pending %d; want nothing encoded and another pass in lastFor", deltaDue, pending(reg.Snapshot().DeltaBlocks(), eureka.JSON, 0))
	}
	if e.ready[listDelta][0] != empty {
		t.Fatalf("a delta with blocks left was made ready")
	}
	registerRange(t, reg, 4*registry.BlockSize, 4*registry.BlockSize+1) // a new block or a replaced one
	clock.Advance(lastFor / 2)
	if seen, deltaDue, _ = e.pass(seen, clock.Now(), [2]bool{}); deltaDue != lastFor/2 || pending(reg.Snapshot().DeltaBlocks(), eureka.JSON, 0) == 0 {
		t.Fatalf("a pass before lastFor: delta due in %s, want %s, when the blocks the first pass saw will have lasted", deltaDue, lastFor/2)
	}
	clock.Advance(lastFor / 2)
	seen, deltaDue, _ = e.pass(seen, clock.Now(), [2]bool{})
	s := reg.Snapshot()
	if n := pending(s.DeltaBlocks(), eureka.JSON, 1000); deltaDue != lastFor/2 || n != 1 {
		t.Fatalf("second pass: delta due in %s, %d delta blocks pending; want only the last write's left, due in %s", deltaDue, n, lastFor/2)
	}
	clock.Advance(lastFor)
	_, deltaDue, due := e.pass(seen, clock.Now(), [2]bool{})
	if deltaDue != 0 || e.ready[listDelta][0] != s {
		t.Fatalf("third pass: delta due in %s, delta ready %v; want everything encoded and the snapshot ready", deltaDue, e.ready[listDelta][0] == s)
	}
	if n := pending(s.Blocks(), eureka.JSON, 1000); n != len(s.Blocks()[0].Blocks) || e.ready[listFull][0] != empty {
		t.Fatalf("unread full listing: %d of %d blocks pending, ready moved %v; want all left and ready where it was",
			n, len(s.Blocks()[0].Blocks), e.ready[listFull][0] != empty)
	}
	if due != fullLastFor {
		t.Fatalf("full listing due in %s, want fullLastFor, %s (before maxStale/2 after the first change)", due, fullLastFor)
	}
	clock.Advance(fullLastFor)
	if _, _, due = e.pass(seen, clock.Now(), [2]bool{}); due != 0 || pending(s.Blocks(), eureka.JSON, 1000) != 0 || e.ready[listFull][0] != s {
		t.Fatalf("full blocks that lasted fullLastFor: due %s, %d pending, ready is the newest %v; want all encoded and ready",
			due, pending(s.Blocks(), eureka.JSON, 1000), e.ready[listFull][0] == s)
	}
}

// TestChangesDoNotWakeTheEncoderWhileBlocksLast: on the real clock, a
// stream of writes every 10 ms for 2 s wakes the background encoder only
// when the blocks it left will have lasted lastFor, not at every change:
// a pass per minRest would be 20 passes, each building a snapshot to find
// nothing it may encode. Once the writes stop, the blocks they left are
// encoded all the same.
func TestChangesDoNotWakeTheEncoderWhileBlocksLast(t *testing.T) {
	t.Parallel() // two seconds of writes, and the wait for the last blocks
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := mustNew(t, DefaultConfig(), reg, nil)
	registerRange(t, reg, 0, 4*registry.BlockSize)
	proctest.Eventually(t, time.Minute, "the first pass to make the delta ready", func() bool {
		return pending(reg.Snapshot().DeltaBlocks(), eureka.JSON, 0) == 0
	})
	before := s.enc.passes.Load()
	const writes, every = 200, 10 * time.Millisecond
	start := time.Now()
	for i := range writes {
		registerRange(t, reg, 4*registry.BlockSize+i, 4*registry.BlockSize+i+1)
		time.Sleep(every)
	}
	elapsed := time.Since(start)
	passes := s.enc.passes.Load() - before
	// One pass when the writes begin, then one a lastFor; two spare for
	// the timer's edges and the full listing's own due time.
	if limit := int64(elapsed/lastFor) + 4; passes > limit {
		t.Fatalf("%d passes during %s of writes every %s; want at most %d, one per lastFor", passes, elapsed.Round(time.Millisecond), every, limit)
	}
	proctest.Eventually(t, time.Minute, "the encoder to encode the delta blocks the writes left", func() bool {
		return pending(reg.Snapshot().DeltaBlocks(), eureka.JSON, 0) == 0
	})
}

// TestUnreadFullListingIsEncodedWhenOverdueOrAsked: a full listing nobody
// reads is encoded only when its ready snapshot falls maxStale/2 behind,
// however often its blocks change; a read of it in between is served the
// ready snapshot and asks for a pass, which makes the newest ready.
func TestUnreadFullListingIsEncodedWhenOverdueOrAsked(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, reg, hs := encoderServer(t, clock)
	const blocks = 4 * syncBlocks
	registerRange(t, reg, 0, blocks*registry.BlockSize)
	ready, _ := readApps(t, hs.URL)
	id := func(b int) string { return benchInstance(b*registry.BlockSize + 1).ID }

	// Every block changes every other second, and the encoder passes
	// every second: each block lasts lastFor between changes.
	seen := map[*registry.Block]time.Time{}
	status := []heureka.Status{heureka.StatusOutOfService, heureka.StatusUp}
	var due time.Duration
	for sec := range int(maxStale/2/time.Second) - 1 {
		for b := range blocks {
			if sec%2 != 0 {
				break
			}
			if err := reg.SetStatus("HDFS-DATANODE.PROD", id(b), status[sec/2%2], 0, false); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Second)
		seen, _, due = s.enc.pass(seen, clock.Now(), [2]bool{})
		if got := s.enc.ready[listFull][0]; got.Version != ready {
			t.Fatalf("after %d s of changes: full listing ready at %d, want %d still", sec+1, got.Version, ready)
		}
	}
	if n := pending(reg.Snapshot().Blocks(), eureka.JSON, 1000); n != blocks {
		t.Fatalf("%d of %d changed full-listing blocks encoded by passes nobody asked for", blocks-n, blocks)
	}
	if due != time.Second {
		t.Fatalf("full listing due in %s, want 1s", due)
	}

	// A read now is served the ready snapshot, and asks.
	if v, _ := readApps(t, hs.URL); v != ready {
		t.Fatalf("full read at %d, want the ready %d", v, ready)
	}
	select {
	case <-s.enc.wanted:
	default:
		t.Fatalf("a read served the ready snapshot did not ask for a pass")
	}
	s.enc.pass(seen, clock.Now(), s.enc.takeAsked())
	cur := reg.Snapshot()
	if v, _ := readApps(t, hs.URL); v != cur.Version {
		t.Fatalf("after the pass it asked for: full read at %d, want the newest %d", v, cur.Version)
	}

	// Unasked, a pass encodes the full listing once it is overdue.
	for b := range blocks {
		if err := reg.SetStatus("HDFS-DATANODE.PROD", id(b), heureka.StatusDown, 0, false); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(maxStale/2 - time.Second)
	if _, _, due = s.enc.pass(seen, clock.Now(), [2]bool{}); due != time.Second || s.enc.ready[listFull][0] != cur {
		t.Fatalf("before it is overdue: due %s, ready moved %v; want 1s and not moved", due, s.enc.ready[listFull][0] != cur)
	}
	clock.Advance(time.Second)
	if _, _, due = s.enc.pass(seen, clock.Now(), [2]bool{}); due != 0 || s.enc.ready[listFull][0] != reg.Snapshot() {
		t.Fatalf("overdue pass: due %s, newest ready %v; want 0 and the newest ready", due, s.enc.ready[listFull][0] == reg.Snapshot())
	}
}

// TestEncoderFirstPassEncodesEverything: with nothing ready yet, a pass
// encodes every block, lasting or not, so that a server's first storm
// leaves a ready snapshot for the reads after it.
func TestEncoderFirstPassEncodesEverything(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	reg, e := clockedEncoder(t, clock)
	registerRange(t, reg, 0, 4*registry.BlockSize)
	if _, deltaDue, due := e.pass(map[*registry.Block]time.Time{}, clock.Now(), [2]bool{}); deltaDue != 0 || due != 0 {
		t.Fatalf("the first pass left blocks for later: delta due in %s, full listing due in %s", deltaDue, due)
	}
	if s := reg.Snapshot(); e.ready[listFull][0] != s || pending(s.Blocks(), eureka.JSON, 0) != 0 {
		t.Fatalf("after the first pass: ready is the newest %v, %d blocks pending", e.ready[listFull][0] == s, pending(s.Blocks(), eureka.JSON, 0))
	}
}

// TestEncoderPassCatchesUpWhenOverdue: once the ready snapshot is half of
// maxStale behind, a pass encodes every block, lasting or not, so that a
// storm that never lets blocks last does not leave readers ever further
// behind.
func TestEncoderPassCatchesUpWhenOverdue(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	reg, e := clockedEncoder(t, clock)
	registerRange(t, reg, 0, registry.BlockSize)
	e.publish(listFull, 0, reg.Snapshot())
	e.publish(listDelta, 0, reg.Snapshot())
	registerRange(t, reg, registry.BlockSize, 2*registry.BlockSize) // the first change after ready
	clock.Advance(maxStale/2 + time.Second)
	registerRange(t, reg, 2*registry.BlockSize, 6*registry.BlockSize)
	if _, deltaDue, due := e.pass(map[*registry.Block]time.Time{}, clock.Now(), [2]bool{}); deltaDue != 0 || due != 0 {
		t.Fatalf("an overdue pass left blocks for later: delta due in %s, full listing due in %s", deltaDue, due)
	}
	s := reg.Snapshot()
	if n := pending(s.Blocks(), eureka.JSON, 1000) + pending(s.DeltaBlocks(), eureka.JSON, 1000); n != 0 || e.ready[listFull][0] != s {
		t.Fatalf("after an overdue pass: %d blocks pending, ready is the newest: %v", n, e.ready[listFull][0] == s)
	}
}

// TestStalenessGoesByTheRegistrysClock: how far behind a ready snapshot
// is goes by the registry's clock, which a server with --debug-listen
// moves ahead of the encoder's own.
func TestStalenessGoesByTheRegistrysClock(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := testclock.New(start)
	s, reg, hs := encoderServer(t, clock)
	s.enc.now = testclock.New(start).Now // the encoder's clock stands still
	registerRange(t, reg, 0, 4*registry.BlockSize)
	ready, _ := readApps(t, hs.URL)
	registerRange(t, reg, 4*registry.BlockSize, 8*syncBlocks*registry.BlockSize)

	clock.Advance(askAfter + time.Second)
	if v, _ := readApps(t, hs.URL); v != ready {
		t.Fatalf("read at %d, want the ready %d", v, ready)
	}
	if asked := s.enc.takeAsked(); asked != [2]bool{listFull: true} {
		t.Fatalf("ready %s behind on the registry's clock: asked (full, delta) %v, want the full listing", askAfter+time.Second, asked)
	}
	clock.Advance(maxStale)
	if v, _ := readApps(t, hs.URL); v != reg.Snapshot().Version {
		t.Fatalf("ready more than maxStale behind on the registry's clock: read at %d, want the newest %d", v, reg.Snapshot().Version)
	}
}

// stormAfterARead is an encoderServer whose registry, after a read made
// its snapshot of 4 blocks ready, has taken 30 blocks' worth of
// registrations in one second, far past the default storm rate, and ticked:
// it is in a storm. ready is the snapshot that read was served.
func stormAfterARead(t *testing.T, clock *testclock.Clock) (*Server, *registry.Registry, *httptest.Server, *registry.Snapshot) {
	t.Helper()
	s, reg, hs := encoderServer(t, clock)
	registerRange(t, reg, 0, 4*registry.BlockSize)
	readApps(t, hs.URL)
	ready := reg.Snapshot()
	reg.Tick()
	registerRange(t, reg, 4*registry.BlockSize, 34*registry.BlockSize)
	clock.Advance(time.Second)
	reg.Tick()
	if !reg.Storming() {
		t.Fatalf("%d registrations in a second: the registry sees no storm", 30*registry.BlockSize)
	}
	return s, reg, hs, ready
}

// TestReadsInAStormAskLater: while the registry takes a registration storm
// (Registry.Storming), a read served the ready snapshot asks for a pass
// only once that snapshot is stormAskAfter behind, not askAfter; once the
// storm has passed, askAfter again.
func TestReadsInAStormAskLater(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, reg, hs, ready := stormAfterARead(t, clock)
	clock.Advance(askAfter)
	if v, _ := readApps(t, hs.URL); v != ready.Version {
		t.Fatalf("read in a storm at %d, want the ready snapshot's %d", v, ready.Version)
	}
	if asked := s.enc.takeAsked(); asked != [2]bool{} {
		t.Fatalf("in a storm, a read served a snapshot %s behind asked for a pass over (full, delta) %v", askAfter+time.Second, asked)
	}
	clock.Advance(stormAskAfter - askAfter)
	readApps(t, hs.URL)
	if asked := s.enc.takeAsked(); asked != [2]bool{listFull: true} {
		t.Fatalf("in a storm, a read served a snapshot %s behind asked for (full, delta) %v, want the full listing", stormAskAfter+time.Second, asked)
	}

	// The storm has passed: one calm tick, and the next bulk write is
	// asked for after askAfter.
	clock.Advance(time.Second)
	reg.Tick()
	if reg.Storming() {
		t.Fatalf("no registrations for a second: the registry still sees a storm")
	}
	s.enc.pass(map[*registry.Block]time.Time{}, clock.Now(), [2]bool{listFull: true})
	registerRange(t, reg, 34*registry.BlockSize, 44*registry.BlockSize)
	clock.Advance(askAfter + time.Second)
	readApps(t, hs.URL)
	if asked := s.enc.takeAsked(); asked != [2]bool{listFull: true} {
		t.Fatalf("after the storm, a read served a snapshot %s behind asked for (full, delta) %v, want the full listing", askAfter+time.Second, asked)
	}
}

// TestAReadInAStormDoesNotBuildTheNewest: in a storm, a read after more
// changes than it would encode inline is served the ready snapshot without
// the newest being built to count its blocks, even when the changes all
// fall in one block; outside a storm, the same read encodes that block and
// sees the newest.
func TestAReadInAStormDoesNotBuildTheNewest(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, reg, hs, _ := stormAfterARead(t, clock)
	s.enc.pass(map[*registry.Block]time.Time{}, clock.Now(), [2]bool{listFull: true})
	ready := reg.Snapshot()
	if v, _ := readApps(t, hs.URL); v != ready.Version {
		t.Fatalf("read after a pass at %d, want the newest, %d", v, ready.Version)
	}

	// 2·syncBlocks changes, all of the same few instances: one block.
	for range 2 * syncBlocks {
		registerRange(t, reg, 0, 1)
	}
	if v, _ := readApps(t, hs.URL); v != ready.Version {
		t.Fatalf("in a storm, %d changes in one block: read at %d, want the ready snapshot's %d", 2*syncBlocks, v, ready.Version)
	}

	clock.Advance(time.Second)
	reg.Tick() // calm
	if reg.Storming() {
		t.Fatalf("still a storm after a calm second")
	}
	if v, _ := readApps(t, hs.URL); v != reg.Snapshot().Version {
		t.Fatalf("after the storm, one block to encode: read at %d, want the newest, %d", v, reg.Snapshot().Version)
	}
}

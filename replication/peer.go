package replication

import (
	"github.com/heureka-project/heureka"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// peer is one other server and the writes waiting for it. Its worker
// goroutine (run) is the only sender; enqueue may be called from anywhere.
type peer struct {
	rp     *Replicator
	url    string
	origin string // scheme://host, where heureka serves /v1

	mu        sync.Mutex
	queue     []registry.Op             // writes in order, heartbeats excepted
	beats     map[[2]string]registry.Op // the latest heartbeat per instance
	resync    bool                      // send the whole registry before anything else
	self      bool                      // this is our own URL: skip it
	reachable bool
	since     time.Time
	failing   time.Time // first failure of the current outage; zero when up
	lastErr   string
	sent      uint64 // items delivered
	batches   uint64
	bytes     uint64 // request bytes delivered
	dropped   uint64 // queued writes discarded for a full resync
	refusals  uint64 // batches refused, or answered unusably
	wake      chan struct{}
	repairNow chan struct{}
	// repairDrained asks for a repair once the queue has been delivered:
	// set when the peer answers again after an outage, since what waited
	// for it (and what other peers held for it) lands only then.
	repairDrained bool
}

func newPeer(rp *Replicator, u string) *peer {
	origin := u
	if i := indexPath(u); i >= 0 {
		origin = u[:i]
	}
	return &peer{rp: rp, url: u, origin: origin, beats: map[[2]string]registry.Op{},
		wake: make(chan struct{}, 1), repairNow: make(chan struct{}, 1)}
}

// indexPath finds where the path starts in scheme://host/path.
func indexPath(u string) int {
	start := 0
	if i := bytes.Index([]byte(u), []byte("://")); i >= 0 {
		start = i + 3
	}
	for i := start; i < len(u); i++ {
		if u[i] == '/' {
			return i
		}
	}
	return -1
}

func (p *peer) enqueue(op registry.Op) {
	p.mu.Lock()
	if p.self || p.resync {
		p.mu.Unlock()
		return // a pending resync sends the current state anyway
	}
	if op.Action == registry.ActionHeartbeat {
		p.beats[[2]string{op.App, op.ID}] = op
	} else {
		p.queue = append(p.queue, op)
		if len(p.queue) > p.rp.cfg.QueueSize {
			p.dropForResync(fmt.Sprintf("its queue passed %d writes", p.rp.cfg.QueueSize))
		}
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// dropForResync empties the queue and marks the peer for a full resync;
// p.mu must be held. Nothing is lost: the resync sends the current state.
func (p *peer) dropForResync(why string) {
	if !p.resync {
		p.rp.log.Warn("peer will be resynchronised in full when it answers", "peer", p.url, "why", why, "dropped_writes", len(p.queue))
	}
	p.dropped += uint64(len(p.queue) + len(p.beats))
	p.resync = true
	p.queue = nil
	p.beats = map[[2]string]registry.Op{}
}

// backlog is how many writes wait to be sent (a resync counts as a full
// batch).
func (p *peer) backlog() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resync {
		return p.rp.cfg.BatchSize
	}
	return len(p.queue) + len(p.beats)
}

func (p *peer) pending() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.self && (p.resync || len(p.queue) > 0 || len(p.beats) > 0)
}

// After a failed batch a sender waits before trying the peer again,
// doubling from 100 ms (jittered down to half) up to a ceiling:
const (
	// retryUnreachable for a peer that did not answer: Eureka's
	// serverUnavailableSleepTimeMs. A peer that answers again then hears
	// the heartbeats it missed within about a second, well inside a lease:
	// at five seconds, a peer back from a partition, or a pause, dropped
	// what it had taken back at the heal (anti-entropy copies a lease with
	// its last renewal) before the renewals reached it, with short leases.
	// An attempt a second costs a peer that is down nothing.
	retryUnreachable = time.Second
	// retryRefused for a peer that refused a batch or answered it with
	// something unusable: each attempt is a full resync, which a large
	// registry should not be sent every second.
	retryRefused = 5 * time.Second
)

// run sends batches until ctx is done.
func (p *peer) run(ctx context.Context) {
	backoff := time.Duration(0)
	for {
		if !p.pending() {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			}
		}
		if p.isSelf() {
			return
		}
		// BatchDelay lets a burst gather into one batch. A backlog of a
		// whole batch or more has gathered already: waiting again before
		// each batch would cap a peer at BatchSize writes per BatchDelay
		// plus a round trip, about 12k/s, which is 100k instances
		// heartbeating every 10 s.
		wait := p.rp.cfg.BatchDelay
		if p.backlog() >= p.rp.cfg.BatchSize {
			wait = 0
		}
		if backoff > 0 {
			wait = backoff/2 + rand.N(backoff/2+1)
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-p.rp.clock.After(wait):
			}
		}
		var err error
		if p.takeResync() {
			err = p.sendAll(ctx)
		} else {
			err = p.sendBatch(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			ceiling := retryRefused
			var ref *refusal
			if !errors.As(err, &ref) {
				p.markDown(err)
				ceiling = retryUnreachable
			}
			backoff = min(max(2*backoff, 100*time.Millisecond), ceiling)
			continue
		}
		backoff = 0
		p.mu.Lock()
		drained := p.repairDrained && len(p.queue) == 0 && len(p.beats) == 0 && !p.resync
		if drained {
			p.repairDrained = false
		}
		p.mu.Unlock()
		if drained {
			p.repairSoon()
		}
	}
}

// repairSoon asks the anti-entropy loop to compare with the peer now.
func (p *peer) repairSoon() {
	select {
	case p.repairNow <- struct{}{}:
	default:
	}
}

func (p *peer) isSelf() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.self
}

func (p *peer) takeResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resync
}

// take removes up to n writes, heartbeats after the ordered ones.
func (p *peer) take(n int) []registry.Op {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := min(n, len(p.queue))
	batch := append([]registry.Op(nil), p.queue[:k]...)
	p.queue = p.queue[k:]
	for key, op := range p.beats {
		if len(batch) >= n {
			break
		}
		batch = append(batch, op)
		delete(p.beats, key)
	}
	return batch
}

// putBack returns an unsent batch to the front of the queue.
func (p *peer) putBack(batch []registry.Op) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resync {
		return
	}
	var ordered []registry.Op
	for _, op := range batch {
		if op.Action == registry.ActionHeartbeat {
			k := [2]string{op.App, op.ID}
			if _, newer := p.beats[k]; !newer {
				p.beats[k] = op
			}
			continue
		}
		ordered = append(ordered, op)
	}
	p.queue = append(ordered, p.queue...)
	if len(p.queue) > p.rp.cfg.QueueSize {
		p.dropForResync(fmt.Sprintf("its queue passed %d writes", p.rp.cfg.QueueSize))
	}
}

func (p *peer) sendBatch(ctx context.Context) error {
	batch := p.take(p.rp.cfg.BatchSize)
	if len(batch) == 0 {
		return nil
	}
	p.rp.current(batch)
	if err := p.post(ctx, batch); err != nil {
		p.putBack(batch)
		return err
	}
	return nil
}

// current makes each registration in batch carry the copy the registry
// holds now, when that is as new (lastDirtyTimestamp) as the queued one. A
// registration waits in the queue while its peer is unreachable, and the
// registry may meanwhile take a newer copy with the same
// lastDirtyTimestamp from another peer (a metadata update, which leaves
// it alone, as in Eureka). Sent as queued, the older copy would arrive
// after the newer one the other peer sent, replace it (equal timestamps:
// the later registration wins), and leave the peers different until
// anti-entropy's next round, and then agreeing on the older copy.
func (rp *Replicator) current(batch []registry.Op) {
	for i, op := range batch {
		if op.Action != registry.ActionRegister || op.Instance == nil {
			continue
		}
		in, ok := rp.reg.Current(op.App, op.ID)
		if !ok || in.LastDirtyTimestamp < op.LastDirtyTimestamp {
			continue
		}
		batch[i].Instance, batch[i].Status, batch[i].LastDirtyTimestamp = in, in.Status, in.LastDirtyTimestamp
	}
}

// sendAll sends the whole registry, and the recent cancels, as one
// resynchronisation. Writes that arrive meanwhile are queued as usual.
func (p *peer) sendAll(ctx context.Context) error {
	p.mu.Lock()
	p.resync = false
	p.queue = nil
	p.beats = map[[2]string]registry.Op{}
	p.mu.Unlock()

	start := p.rp.clock.Now()
	snap := p.rp.reg.Snapshot()
	var ops []registry.Op
	for _, a := range snap.Apps().Apps {
		for _, in := range a.Instances {
			ops = append(ops, registry.Op{Action: registry.ActionRegister, App: in.App, ID: in.ID, Instance: in,
				Status: in.Status, LastDirtyTimestamp: in.LastDirtyTimestamp})
		}
	}
	tombs := p.rp.reg.Tombstones()
	for _, t := range tombs {
		ops = append(ops, registry.Op{Action: registry.ActionCancel, App: t.App, ID: t.ID})
	}
	size := 4 * p.rp.cfg.BatchSize
	for i := 0; i < len(ops); i += size {
		if err := p.post(ctx, ops[i:min(i+size, len(ops))]); err != nil {
			p.mu.Lock()
			p.dropForResync("the resynchronisation failed: " + err.Error())
			p.mu.Unlock()
			return err
		}
	}
	p.rp.log.Info("resynchronised peer", "peer", p.url, "instances", len(ops)-len(tombs), "cancels", len(tombs),
		"took", p.rp.clock.Now().Sub(start).Round(time.Millisecond))
	return nil
}

// post sends one batch and acts on the per-item answers.
func (p *peer) post(ctx context.Context, ops []registry.Op) error {
	items := make([]eureka.ReplicationItem, len(ops))
	for i, op := range ops {
		items[i] = eureka.ReplicationItem{AppName: op.App, ID: op.ID, Action: string(op.Action),
			Status: op.Status, OverriddenStatus: op.OverriddenStatus, LastDirtyTimestamp: op.LastDirtyTimestamp,
			Instance: op.Instance}
	}
	payload := eureka.EncodeReplicationList(items)
	if len(payload) > p.rp.cfg.MaxBatchBytes && len(ops) > 1 {
		return p.postHalves(ctx, ops)
	}
	resp, body, err := p.postNumbered(ctx, payload)
	if err != nil {
		return err
	}
	if p.checkSelf(resp) {
		return nil
	}
	if resp.StatusCode == http.StatusRequestEntityTooLarge && len(ops) > 1 {
		// The peer bounds bodies below MaxBatchBytes: send less at a time.
		p.rp.log.Info("peer refused a batch as too large; sending it in halves", "peer", p.url,
			"items", len(ops), "bytes", len(payload))
		return p.postHalves(ctx, ops)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("peer %s answered a batch of %d with %s: %.200s", p.url, len(ops), resp.Status, body)
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return err // retried
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			// Our credentials are wrong or lack the peer role: the same
			// batch will pass once they are fixed, so keep it and retry
			// (the peer counts as unreachable meanwhile).
			return fmt.Errorf("peer %s refused our credentials (%s): %.200s; give this server a user with the peer role", p.url, resp.Status, body)
		}
		// The peer refused the batch itself: retrying the same bytes cannot
		// help, so send it the whole registry instead, after a backoff.
		p.rp.log.Error("peer refused a replication batch", "err", err)
		return p.refused("it refused a batch", err)
	}
	results, err := eureka.DecodeReplicationResults(body)
	if err == nil && len(results) != len(ops) {
		err = fmt.Errorf("peer %s answered %d items of %d", p.url, len(results), len(ops))
	}
	if err != nil {
		p.rp.log.Error("unusable answer to a replication batch", "peer", p.url, "err", err)
		return p.refused("its answer to a batch was unusable", fmt.Errorf("unusable answer to a batch: %w", err))
	}
	p.markUp()
	p.mu.Lock()
	p.sent += uint64(len(ops))
	p.batches++
	p.bytes += uint64(len(payload))
	p.mu.Unlock()
	for i, res := range results {
		p.handleResult(ops[i], res)
	}
	return nil
}

// postHalves posts ops in two halves, each split further as needed.
func (p *peer) postHalves(ctx context.Context, ops []registry.Op) error {
	h := len(ops) / 2
	if err := p.post(ctx, ops[:h]); err != nil {
		return err
	}
	return p.post(ctx, ops[h:])
}

// refusal is a batch the peer answered, but refused or answered with
// something unusable: the peer is up, yet the same batch cannot pass. The
// sender resynchronises it in full, after a backoff, so that a peer that
// refuses everything is not sent the registry in a tight loop.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refused marks the peer for a full resync and counts the refusal; it
// returns the error that makes the worker back off.
func (p *peer) refused(why string, err error) error {
	p.markUp()
	p.mu.Lock()
	p.dropForResync(why)
	p.refusals++
	p.lastErr = err.Error()
	p.mu.Unlock()
	return &refusal{err: err}
}

// postNumbered sends one batch body, numbered (BatchSeqHeader), and reads
// the answer. A heureka peer refuses a number at or below one it has
// applied from this server already (409 with its highest in the header):
// a restart of this server, or its clock set back. The batch is then sent
// once more, numbered above the peer's.
func (p *peer) postNumbered(ctx context.Context, payload []byte) (*http.Response, []byte, error) {
	for try := 0; ; try++ {
		req, err := p.rp.newRequest(ctx, http.MethodPost, p.url+"/peerreplication/batch", payload)
		if err != nil {
			return nil, nil, err
		}
		seq := p.rp.nextSeq()
		req.Header.Set(BatchSeqHeader, strconv.FormatUint(seq, 10))
		resp, err := p.rp.client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read the answer to a batch from %s: %w", p.url, err)
		}
		last, perr := strconv.ParseUint(resp.Header.Get(BatchSeqHeader), 10, 64)
		if resp.StatusCode != http.StatusConflict || perr != nil || last < seq || try > 0 {
			return resp, body, nil
		}
		p.rp.log.Info("peer has applied a batch numbered above ours; numbering above it", "peer", p.url, "ours", seq, "theirs", last)
		p.rp.raiseSeq(last)
	}
}

// handleResult does what Eureka's sender does with each answer: a
// heartbeat the peer does not know becomes a registration, and a 409 means
// the peer's copy is newer and is taken.
func (p *peer) handleResult(op registry.Op, res eureka.ReplicationResult) {
	switch {
	case op.Action == registry.ActionHeartbeat && res.StatusCode == http.StatusNotFound:
		if in, ok := p.rp.reg.Snapshot().Instance(op.App, op.ID); ok {
			p.enqueue(registry.Op{Action: registry.ActionRegister, App: in.App, ID: in.ID, Instance: in,
				Status: in.Status, LastDirtyTimestamp: in.LastDirtyTimestamp})
		}
	case op.Action == registry.ActionHeartbeat && res.StatusCode == http.StatusConflict && res.Instance != nil:
		if err := p.rp.reg.Register(res.Instance, true); err != nil {
			p.rp.log.Warn("could not take a peer's newer copy", "peer", p.url, "instance", op.App+"/"+op.ID, "err", err)
		}
	case res.StatusCode >= 500 || (res.StatusCode >= 400 && op.Action == registry.ActionRegister):
		p.rp.log.Warn("peer failed a replicated write", "peer", p.url, "action", op.Action,
			"instance", op.App+"/"+op.ID, "status", res.StatusCode)
	}
}

// checkSelf recognises our own server behind a peer URL.
func (p *peer) checkSelf(resp *http.Response) bool {
	if resp.Header.Get(NodeHeader) != p.rp.cfg.NodeID {
		return false
	}
	p.mu.Lock()
	was := p.self
	p.self = true
	p.queue, p.beats = nil, map[[2]string]registry.Op{}
	p.mu.Unlock()
	if !was {
		p.rp.log.Info("peer URL is this server; skipping it", "peer", p.url)
		p.rp.updatePeers()
	}
	return true
}

func (p *peer) markUp() {
	p.mu.Lock()
	wasDown := !p.reachable
	if wasDown {
		p.reachable, p.since = true, p.rp.clock.Now()
		p.repairDrained = true
	}
	outage := time.Duration(0)
	if !p.failing.IsZero() {
		outage = p.rp.clock.Now().Sub(p.failing)
	}
	p.failing, p.lastErr = time.Time{}, ""
	p.mu.Unlock()
	if wasDown {
		p.rp.log.Info("peer reachable", "peer", p.url, "after", outage.Round(time.Millisecond))
		p.rp.updatePeers()
		p.rp.reg.NotePeer(heureka.EventPeerFound, p.url, "")
		p.repairSoon() // a healed peer gets its differences repaired at once, and again once its queue is delivered
	}
}

func (p *peer) markDown(err error) {
	p.mu.Lock()
	wasUp := p.reachable || p.failing.IsZero()
	now := p.rp.clock.Now()
	if p.failing.IsZero() {
		p.failing = now
	}
	p.lastErr = err.Error()
	if p.reachable {
		p.reachable, p.since = false, now
	}
	if now.Sub(p.failing) > p.rp.cfg.MaxOutage {
		p.dropForResync(fmt.Sprintf("unreachable for more than %s", p.rp.cfg.MaxOutage))
	}
	p.mu.Unlock()
	if wasUp {
		p.rp.log.Warn("peer unreachable", "peer", p.url, "err", err)
		p.rp.updatePeers()
		p.rp.reg.NotePeer(heureka.EventPeerLost, p.url, err.Error())
	}
}

func (p *peer) status() PeerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PeerStatus{URL: p.url, Self: p.self, Reachable: p.reachable, Since: p.since, LastError: p.lastErr,
		Queued: len(p.queue) + len(p.beats), Resync: p.resync, Sent: p.sent, Batches: p.batches, BytesSent: p.bytes, Dropped: p.dropped,
		Refused: p.refusals}
}

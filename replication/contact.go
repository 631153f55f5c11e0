package replication

import (
	"context"
	"slices"
	"time"
)

// firstContact calls, after the start-up sync, each other peer that has
// not answered anything yet (the sync reaches only the one it copies from),
// until each has answered once or one anti-entropy interval has passed,
// when the rounds take over. A peer answers with its digest, which makes it
// reachable, and markUp then has its differences repaired at once. Until a
// peer has answered, its health reads "no contact yet": without this, a
// peer this server has no write to send is first called by the first
// anti-entropy round, 30 s after start.
//
// A peer that does not answer is tried again with the start-up sync's
// backoff and is not marked down: peers that start together come up within
// moments of each other, and the rounds mark a peer down when it stays so.
func (rp *Replicator) firstContact(ctx context.Context) {
	var left []*peer
	for _, p := range rp.peers {
		if !p.isSelf() && !p.contacted() {
			left = append(left, p)
		}
	}
	deadline := rp.clock.Now().Add(rp.cfg.AntiEntropyInterval)
	for attempt := 1; len(left) > 0; attempt++ {
		left = slices.DeleteFunc(left, func(p *peer) bool { return p.answersDigest(ctx) })
		if len(left) == 0 || rp.clock.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-rp.clock.After(min(time.Duration(attempt)*200*time.Millisecond, 2*time.Second)):
		}
	}
}

// answersDigest asks the peer for its digest and reports whether it
// answered: with a digest, which makes it reachable, or with nothing to
// ask (it is this server, or serves no digest).
func (p *peer) answersDigest(ctx context.Context) bool {
	body, err := p.get(ctx, p.origin+"/v1/replication/digest")
	if err == nil && body != nil {
		p.markUp()
	}
	return err == nil
}

// contacted reports whether the peer has answered or failed a call since
// start: its health is known.
func (p *peer) contacted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reachable || !p.failing.IsZero()
}

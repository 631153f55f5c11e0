package replication

import (
	"context"
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
	deadline := rp.clock.Now().Add(rp.cfg.AntiEntropyInterval)
	for attempt := 0; ; attempt++ {
		left := 0
		for _, p := range rp.peers {
			if p.isSelf() || p.contacted() {
				continue
			}
			switch body, err := p.get(ctx, p.origin+"/v1/replication/digest"); {
			case err == nil && body != nil:
				p.markUp()
			case err != nil:
				left++
			}
		}
		if left == 0 || rp.clock.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-rp.clock.After(min(time.Duration(attempt+1)*200*time.Millisecond, 2*time.Second)):
		}
	}
}

// contacted reports whether the peer has answered or failed a call since
// start: its health is known.
func (p *peer) contacted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reachable || !p.failing.IsZero()
}

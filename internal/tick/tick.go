package tick

import (
	"context"
	"time"
)

// Every calls fn every d, and at once on each receive from kick (nil:
// never), until ctx is done.
func Every(ctx context.Context, d time.Duration, kick <-chan struct{}, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		fn()
	}
}

// Wait blocks until t fires or kick receives (nil: never) and reports
// true, or until ctx is done and reports false. The caller resets t for
// the next round.
func Wait(ctx context.Context, t *time.Timer, kick <-chan struct{}) bool {
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-kick:
		return true
	}
}

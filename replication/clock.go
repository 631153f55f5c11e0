package replication

import "time"

// Clock is the time replication reads: when a peer went down or came back,
// how long an outage lasts, and when to wake for the next batch, retry,
// start-up sync attempt or anti-entropy round. Servers use SystemClock,
// or a clock the fault harness steps and skews; tests run SystemClock in
// testing/synctest bubbles.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// After is time.After.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

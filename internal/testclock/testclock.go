// Package testclock is a clock that tests move by hand, for the injected
// clocks of registry, httpapi, hdfs and the rest. It is safe for
// concurrent use; it never moves by itself.
package testclock

import (
	"sync"
	"time"
)

// Clock reads a time that only Advance changes.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock reading t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d (backwards if d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

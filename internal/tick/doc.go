// Package tick holds the loop that the long-running parts of heureka share:
// wait for a timer or a nudge, do one round, and again, until a context
// ends. Every runs a function on a fixed period; Wait is the one wait of a
// loop that picks its own next delay by resetting its timer.
//
// # Concurrency
//
// Every runs fn on the caller's goroutine, one call at a time; Wait blocks
// only its caller. Both stop promptly once ctx is done. They read the
// clock through the time package only, so tests drive them from inside a
// testing/synctest bubble.
//
// It does not catch panics, add jitter, or make up for rounds missed while
// fn ran long: a slow round delays the next one, as time.Ticker drops ticks.
package tick

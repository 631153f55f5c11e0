// Package conntime bounds how long an HTTP/1 client may hold a server's
// connection without doing its part: sending a request, or reading an
// answer. net/http can do this with its timeouts, but it pays for them on
// every request: ReadTimeout, IdleTimeout and a write deadline per answer
// each move a runtime timer, five timer operations a renewal, about a
// twentieth of a small request's cost (docs/benchmarks.md). A Watchdog
// keeps the bounds with one goroutine that looks at every connection a few
// times a second, and a request pays two atomic stores per read or write.
//
// The bounds (Limits):
//
//   - Header: a request's header must be whole within Header of its first
//     byte. This one stays net/http's ReadHeaderTimeout, which knows where a
//     header begins; it moves one timer a request.
//   - Body: a request's body must be read within Body of the end of its
//     header. Only requests with a body pay for it, with a read deadline.
//   - Idle: a kept-alive connection may wait at most Idle for its next
//     request.
//   - Answer: a write may not stay blocked once Answer has passed since the
//     request's header was read: a client that stops reading its answer is
//     cut off. A handler that sets its own write deadline (a stream, per
//     write) is bounded by that instead, until net/http clears it after
//     the answer.
//
// A connection past a bound is closed, and one whose client stopped
// reading is reset, so that the kernel drops the unsent rest of its answer
// at once; the handler's next read or write fails. The watchdog looks every Tick (a tenth of the smallest of Idle and
// Answer, at most a second), so a bound holds to within two ticks.
//
// HTTP/2 connections carry many requests at once, which a connection's
// reads and writes cannot tell apart: for them the Idle bound holds as for
// HTTP/1, and each request gets its Answer bound as a write deadline.
//
// # Concurrency
//
// A Watchdog is safe for concurrent use. The Idle and Answer bounds hold
// while Run runs; a connection's reads and writes only store the time of
// the last sweep, and the sweep closes the connections past a bound.
//
// It does not limit how many connections a client opens, nor the rate of
// its requests (internal/httpapi limits each client's writes and
// streams), and it does not bound a handler's own work, only the
// client's.
package conntime

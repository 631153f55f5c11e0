// Package debugclock is a wall clock that a test harness can step and
// skew from outside the process, for clock faults. Go reads the time
// through the vDSO, so libfaketime does not move a Go server's clock, and
// Linux time namespaces virtualise only the monotonic and boot clocks, with
// offsets fixed once a process has entered. A Clock is the wall clock plus
// an offset and a rate, set through its handler.
//
// heureka server uses one as the registry's and the replicator's clock
// when --debug-listen is given, and serves its handler there, on a
// loopback address only, at /debug/clock. A jump or a skew then moves
// what that server reads as now: lease deadlines and renewals, the
// wall-clock timestamps it writes (lastUpdatedTimestamp, lease times,
// tombstones, a lastDirtyTimestamp it assigns) and replication's outage
// times and batch numbers. Without the flag the server reads time.Now.
//
// # Concurrency
//
// A Clock is safe for concurrent use: Now loads one immutable setting
// atomically, and a change replaces it.
//
// # What it does not do
//
// It does not move timers: After waits in real time, as a process's timers
// do when its wall clock is stepped (they run on the monotonic clock).
// Other readers of time in the process (the HTTP layer's deadlines and
// durations, log timestamps) keep the real clock.
package debugclock

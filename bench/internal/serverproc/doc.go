// Package serverproc starts, watches and stops the processes the benchmark
// harnesses measure (heureka servers, etcd, a ZooKeeper JVM, agents, a bare
// HTTP handler): each with its output in a log file, in its own process
// group, with a readiness poll that gives up when the process exits, and a
// stop that escalates from SIGTERM to SIGKILL. It also builds the heureka
// binary and pins a command to CPUs with taskset.
//
// # Concurrency
//
// A Proc's methods are safe for concurrent use; Stop and Kill are
// idempotent. A process's exit is seen by one goroutine per Proc, which
// closes Done.
//
// It does not restart a process, read its metrics or its resource use
// (package procstat does), or bound how long a caller runs one: callers
// hold the context and the time limits.
package serverproc

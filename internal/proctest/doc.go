// Package proctest runs programs as real processes for end-to-end tests:
// it builds the heureka binary once per test binary, starts a subcommand
// (or any program), waits for a line in its output such as the
// "listening … addr=" line, signals it (TERM, KILL, STOP, CONT), and shows
// its output in the test log when the test fails. Eventually polls a
// condition and Retry a check that returns an error (reporting the last
// one), so that tests wait for what they need instead of sleeping; Buffer
// collects a log written from other goroutines; FreeAddr finds a free
// loopback port.
//
// It is for tests only. A process's life (start, wait, signal, stop) is
// package proc's; proctest adds the test's failure, clean-up and log.
//
// # Concurrency
//
// A Proc may be used from several goroutines: its output is collected under
// a lock, and waiting, signalling and stopping are safe to call at once.
// Build and Bin are safe to call from parallel tests; the binary is built at
// most once. A Buffer may be written and read at once.
//
// # What it does not do
//
// It does not restart processes (start a new one with the same arguments),
// does not isolate the network (tests listen on loopback only), and keeps a
// process's output in memory, so it suits test-sized logs.
package proctest

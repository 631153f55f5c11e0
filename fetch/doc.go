// Package fetch reads one answer from a daemon's HTTP endpoint for the
// knowledge packages (yarn, hbase, elasticsearch, zookeeper): a GET bounded
// in size (Limit) and in time (the caller's context), with errors that name
// the URL and say what was wrong.
//
// # Concurrency
//
// Get keeps no state; it is safe for concurrent use as far as the
// *http.Client it is given is.
//
// What it does not do: retry, follow a daemon's redirect to another host
// (the caller's client decides), parse the answer, or decide what a failure
// means for the daemon's health.
package fetch

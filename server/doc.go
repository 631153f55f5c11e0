// Package server is the heureka server program as a library: it wires the
// registry (package registry), peer replication (package replication),
// the HTTP API (internal/httpapi) and, when Config.DNS.Listen is set, the
// DNS server (internal/dnsapi) into one process, with TLS, credentials and
// their reload. `heureka server` turns its flags into a Config and runs
// a Server; the demo and the end-to-end tests run the same wiring on port 0.
//
// A Server's life: New has no side effects; Open validates the Config,
// builds the parts, listens synchronously (a busy port is Open's error) and
// starts the actors (the registry's loop, replication, the HTTP server and
// its connection watchdog, the DNS server, the collector's storm setting,
// the credentials watcher) in one internal/rungroup, where the first to
// return stops the rest; Close(ctx) stops them gracefully, bounded by
// ShutdownTimeout and by ctx, and is idempotent.
//
// # Concurrency
//
// Open and Close are called by one owner; Reload, Addr and Done are safe
// from any goroutine once Open has returned. Registry, API, Replicator
// and DNS (nil without Config.DNS.Listen) are set by Open and are
// themselves safe for concurrent use.
//
// It does not read flags, files other than the ones its Config names, the
// environment or signals: the command does that. It does not daemonise or
// restart failed actors: a failed actor ends the server, and Done says so.
package server

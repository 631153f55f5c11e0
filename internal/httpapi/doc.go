// Package httpapi is heureka's HTTP surface: the Eureka REST protocol that
// unchanged Eureka clients speak (register, renew, cancel, full and delta
// fetches, application, instance and VIP reads, status overrides, metadata),
// plus heureka's own /healthz, /readyz, /metrics, /v1/status and the
// /v1/watch and /v1/events streams, which encode the root package's stream
// vocabulary (heureka.WatchChange, heureka.Event, heureka.Resync), and two
// reads whose answer costs the answer, not the registry: /v1/instances
// (lookup.go: instances by host name or IP) and /v1/hdfs/pick (hdfspick.go:
// DataNodes chosen server-side from a prepared set kept per application).
//
// A file per job: routes.go (the route table and each route's access
// class), guard.go (authentication, authorisation, the per-client write
// limit on golang.org/x/time/rate, the audit line), errors.go (the error to
// status map), handlers.go and cache.go (Eureka REST and its payload cache),
// encoder.go (the CPU budget for encoding listings, the background encoder
// goroutine New starts and CloseStreams stops, and which snapshot a listing
// read is served in a storm),
// watch.go (the streams), streamformat.go (their frames), metrics.go
// (/metrics: request times, registry statistics, watchers, and collectors
// the caller adds, such as replication's per-peer state), hdfsmetrics.go
// (NameNodes by HA state and DataNodes by rack, counted once per changed
// application view), status.go (/v1/status; the peer endpoints are
// mounted at the end of routes.go), peerrefusals.go (what was refused of
// callers claiming to be peers: logged, and counted in /v1/status).
//
// # Routing
//
// The path is normalised before routing: repeated slashes collapse, a
// trailing slash is dropped, and an optional /eureka, /eureka/v1, /eureka/v2,
// /v1 or /v2 prefix is stripped. Each remaining segment is percent-decoded on
// its own, so instance IDs with ':' and '.' route as one segment. The whole
// route table is in routes.go; a path that matches no pattern is 404, a
// pattern without the method is 405 with an Allow header.
//
// # Errors
//
// Handlers return errors; one function (statusOf, in errors.go) maps a
// heureka error code to an HTTP status, and writeError writes the message as
// {"error":"…"} to clients that accept JSON and <error><message>…</message>
// </error> to everyone else. Internal errors are logged once and never shown.
//
// # Authentication, limits and audit
//
// With Config.Auth set (see internal/auth), every request but /healthz,
// /readyz and /metrics is authenticated (HTTP basic, bearer token, or a
// verified TLS client certificate) and authorised by what its route does
// (accessOf in routes.go): reads, instance writes (register, renew, cancel,
// status, metadata, checked against an agent's application patterns),
// peer replication (the batch endpoint, /v1/replication/* and any write
// carrying x-netflix-discovery-replication: true), and anything else,
// which needs the operator role. No credentials where they are needed is
// 401 with Basic and Bearer challenges; credentials without the right is
// 403; both say what is missing. A write allowed by the operator role
// leaves one audit log line (subsystem=audit: user, action, app, id,
// query, status, remote address) once its answer is known.
//
// Writes are rate-limited per client (user@address, or address) by a token
// bucket (Config.WriteRate; 0 turns it off), 429 with Retry-After past it; watch and event streams are capped
// per client (429) as well as in total (503). Peers, and anonymous clients
// on loopback (every local process shares 127.0.0.1), are exempt.
//
// Streams set a deadline on each write (WriteTimeout) and lift the read
// deadline, so that the server's bounds on its clients (internal/conntime:
// a body within ReadTimeout, an answer within ResponseTimeout, both set by
// package server) cut slow clients without cutting streams. A JSON body
// that is not UTF-8 is refused rather than decoded with replacement
// characters, and so is a metadata value that is not.
//
// # Concurrency
//
// A Server is safe for concurrent use once New returns. Reads are served
// from the registry's immutable snapshot. Full, delta and per-application
// listings are assembled from the snapshot's blocks (registry.Block): each
// block keeps its instances' encoding as one gzip member per format, made
// once, and a listing is those members with small members for the structure
// between them, written one after another (concatenated gzip members are
// one gzip stream). A client that does not accept gzip gets the members
// inflated as they are written. Assembled payloads are memoised per
// snapshot in a small bounded cache, which is dropped as soon as a newer
// snapshot is seen.
//
// A read issued after a write returned reflects it, with one exception: a
// full, delta or application listing whose newest snapshot has more than a
// few blocks left to encode (after a bulk write, or in a registration
// storm) is served the last snapshot whose blocks are all encoded instead,
// at most maxStale (30 s) behind, while the encoder goroutine catches up
// (encoder.go). Every other read, and the streams, use the newest
// snapshot.
//
// # What it does not do
//
// It does not listen, own the registry or run its eviction loop: package
// server wires those and owns the http.Server, its TLS and its timeouts. It does
// not send to peers, nor decide what a peer's batch does: it mounts
// replication.Receiver on the peer endpoints (/peerreplication/batch and
// /v1/replication/*) and does their HTTP part. It does not gate reads
// during a startup window (Eureka's 403), trust X-Forwarded-For, or serve
// the compact format. It holds no state besides the payload cache, the
// metrics, the per-client counters of its limits and the counts of peer
// refusals.
package httpapi

// Package httpapi is heureka's HTTP surface: the Eureka REST protocol that
// unchanged Eureka clients speak (register, renew, cancel, full and delta
// fetches, application, instance and VIP reads, status overrides, metadata),
// plus heureka's own /healthz, /readyz and /metrics.
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
// # Concurrency
//
// A Server is safe for concurrent use once New returns. Reads are served
// from the registry's immutable snapshot; encoded (and gzipped) payloads are
// memoised per snapshot version in a small bounded cache, which is dropped as
// soon as a newer version is seen, so a read issued after a write returned
// always reflects it.
//
// # What it does not do
//
// It does not listen, own the registry or run its eviction loop: cmd/heureka
// wires those and owns the http.Server and its timeouts. It does not
// replicate to peers, serve /peerreplication/batch, gate reads during a
// startup window (Eureka's 403), or serve the compact format. It holds no
// state besides the payload cache and the metrics.
package httpapi

// Package replicationtest provides a replication.Transport for tests:
// MemNetwork, which connects servers as http.Handlers in memory, with no
// sockets, and can partition them. It lives apart from replication so
// that net/http/httptest, which it records answers with, stays out of the
// server binary.
//
// A MemNetwork is safe for concurrent use. It does not model latency,
// loss short of a full partition, or a connection's lifetime.
package replicationtest

// Package heureka is the vocabulary of the heureka service registry: the
// instance record Eureka clients register, its status and lease fields, the
// limits every input is held to, and the errors the rest of the program maps
// to protocol answers.
//
// The package does no I/O. The wire codec lives in package eureka, the lease
// table in package registry and the HTTP surface in internal/httpapi; they all
// speak in these types.
//
// It also holds the vocabulary of heureka's own streams (events.go): why an
// instance changed (Cause), the typed events of GET /v1/events (EventType,
// Event) and the data of a change on GET /v1/watch (WatchChange). The server
// encodes exactly these types and package client decodes them, so each wire
// format is written down once.
//
// The roles a daemon registers as (roles.go) share one vocabulary, so that
// every consumer reads every role alike: the application "<role>.<cluster>"
// (RoleApp, ParseRoleApp), the instance ID "<cluster>-<host>-<rack>"
// (InstanceID, NormalizeRack), and the metadata keys every role's agent
// writes: rack, version, role_state, down_cause and probe_state (Meta*).
//
// An instance's metadata is a Metadata (metadata.go): immutable, in key
// order, kept as one string rather than a map, so that a registry holds one
// pointer-free object per instance for it.
//
// Every type here is a plain value, safe to share once built; nothing here
// starts goroutines or holds locks.
package heureka

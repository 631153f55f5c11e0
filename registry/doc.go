// Package registry is heureka's engine: the in-memory lease table that
// holds every registration, applies Eureka's rules (lastDirtyTimestamp
// conflicts, the status-override rule chain, leases), evicts what expires
// and records every change in one bounded change log.
//
// # Concurrency
//
// Writers (Register, Cancel, SetStatus, DeleteStatusOverride,
// UpdateMetadata) take the write lock. Renew, the hot path, takes only the
// read lock and stores the renewal time atomically; it takes the write lock
// only in the rare case where the rule chain changes the stored status.
// Readers call Snapshot and get an immutable view, rebuilt at most once per
// change and when the delta's oldest entry leaves its window; a read issued
// after a write returned always reflects it. A snapshot holds each
// application, and the delta, as immutable blocks of about BlockSize
// instances: a change copies only the blocks it touches and shares the
// rest with the previous snapshot, so whoever keeps a block's encoding
// (Block.Memo) re-encodes only what changed. The delta is advanced from the
// previous snapshot's by the changes since, never recomputed from the log
// while the log reaches back to it.
// Instances reachable from a Snapshot are never modified: a change publishes
// a new *heureka.Instance.
//
// # Time
//
// The clock is injected (Config.Clock). Run calls Tick every
// EvictionInterval; tests move a fake clock and call Tick themselves.
// A lease expires at its last renewal plus its own durationInSecs. Eureka
// itself expires a renewed lease only after twice the duration (a bug it
// keeps on purpose); heureka does not reproduce it.
//
// # What it does not do
//
// No I/O: encoding is package eureka's, transport is internal/httpapi's.
// Renewals do not create a new version: lastRenewalTimestamp in a listing is
// the time of the instance's last change, not of its last heartbeat.
package registry

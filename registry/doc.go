// Package registry is heureka's engine: the in-memory lease table that
// holds every registration, applies Eureka's rules (lastDirtyTimestamp
// conflicts, the status-override rule chain, leases), evicts what expires
// and records every change in one bounded change log.
//
// # Concurrency
//
// Writers (Register, RegisterOwned, Cancel, CancelIfRegisteredBefore,
// SetStatus, DeleteStatusOverride, UpdateMetadata, Adopt) take the write
// lock. Renew, the hot path, takes only the read lock and moves the
// lease's renewal time forward atomically; it takes the write lock only
// in the rare cases where the rule chain changes the stored status or the
// renewal moves the deadline back (the clock stepped back). Tick takes
// the read lock, with a mutex of its own, to find what expired, and the
// write lock only to evict it.
// Readers call Snapshot and get an immutable view, rebuilt at most once per
// change and when the delta's oldest entry leaves its window; a read issued
// after a write returned always reflects it. A snapshot holds each
// application, and the delta, as immutable blocks of about BlockSize
// instances: a change copies only the blocks it touches and shares the
// rest with the previous snapshot, so whoever keeps a block's encoding
// (Block.Memo) re-encodes only what changed. The delta is advanced from the
// previous snapshot's by the changes since, never recomputed from the log
// while the log reaches back to it.
// The registry keeps each instance as an immutable record of three pointer
// words (stored.go), which the collector scans at a fraction of a
// heureka.Instance's cost; a change stores a new record. Readers get
// heureka.Instance copies made from records, or one reused value per block
// to encode (Block.All). ByHost reads the host index (hosts.go), kept by
// every write as it records its change, under the read lock: its cost is
// the hosts asked and the instances found, never the registry's size.
//
// # Time
//
// The clock is injected (Config.Clock). Run calls Tick every
// EvictionInterval; tests move a fake clock and call Tick themselves.
// A lease expires at its last renewal plus its own durationInSecs. Eureka
// itself expires a renewed lease only after twice the duration (a bug it
// keeps on purpose); heureka does not reproduce it.
//
// In ModeSmart a loss is judged by the silent leases, those whose renewal
// is half an interval late (and half the lease gone), not only by the
// expired: a registry cut off from its clients sees their leases run out
// one by one over a whole renewal interval, and the first of them must not
// be evicted as isolated deaths before the loss shows its size. So an
// expired lease is evicted once everything that stopped with it has had
// time to fall silent: at expiry for a lease of 2.5 intervals or more (10 s
// renewals and 30 s leases; Eureka's 30 s and 90 s), up to an interval
// after it for shorter ones (see expiry.go).
//
// # Cost
//
// A tick costs what fell silent, recovered or renewed since the last one:
// live leases wait in a min-heap by the time they fall silent as last seen,
// which a renewal does not touch; the tick pushes back, with its new time,
// what it pops that renewed since. Silent leases are re-checked at every
// tick. Self-preservation's counts (instances, expected renewals,
// instances and silent ones per rack and per application) are kept as
// leases change, and the grace after a pause is one global offset (see
// expiry.go). Tombstones expire from a queue by time (tombs.go). A record's
// strings are one block of text and its metadata another
// (heureka.Metadata); a new version of an instance with the same strings
// shares its text.
//
// # What it does not do
//
// No I/O: encoding is package eureka's, transport is internal/httpapi's.
// Renewals do not create a new version: lastRenewalTimestamp in a listing is
// the time of the instance's last change, not of its last heartbeat.
package registry

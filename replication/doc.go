// Package replication keeps a cluster of heureka servers in agreement, the
// way Eureka's peers do and in Eureka's own wire format, so that Netflix
// servers can be peers too:
//
//   - every write a server accepts from a client (register, renew, cancel,
//     status override and its removal, metadata update) is forwarded to
//     every other peer, asynchronously, in batches, through
//     POST /peerreplication/batch; replicated writes are never forwarded
//     again;
//   - per peer, writes wait in a bounded queue (heartbeats coalesced per
//     instance); a peer whose queue overflows, or that stays unreachable for
//     longer than MaxOutage, is sent the whole registry (and the recent
//     cancels) when it answers again: nothing is dropped silently;
//   - conflicts resolve by lastDirtyTimestamp, as in Eureka: a heartbeat
//     the peer does not know becomes a registration, and a peer's newer
//     copy (409) is taken;
//   - anti-entropy compares per-application digests with every peer and
//     pulls what differs, and the peer's recent cancels, so a healed
//     partition converges without waiting for renewals and without
//     resurrecting what was cancelled meanwhile;
//   - at start, the registry is copied from the first peer that answers
//     (bounded by SyncTimeout, then the server starts empty and says so);
//     Ready reports when that is over, for /readyz.
//
// # Security
//
// Calls to https peers use Config.TLS (the CA that signs the peers and
// this server's client certificate, for mutual TLS). Config.Authorization
// gives the credentials of a user with the peer role, sent on every call;
// peer URLs may not carry user:password, since they are shown in status
// and logs. A peer that answers 401 or 403 is counted unreachable and its
// writes are kept and retried, with the refusal in PeerStatus.LastError,
// until the credentials are fixed.
//
// # Concurrency
//
// Forward is called by the registry with its lock held; it only appends to
// per-peer queues. Each peer has one sending goroutine; anti-entropy has
// one more. Run owns them all and returns when its context ends.
//
// # What it does not do
//
// It does not discover peers: the list is given. It does not forward
// evictions: every peer evicts on its own, as Eureka's do. It offers no
// consensus: the cluster is AP, and a partitioned peer keeps serving what it
// knows.
package replication

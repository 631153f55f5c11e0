// Package replication keeps a cluster of heureka servers in agreement, the
// way Eureka's peers do and in Eureka's own wire format, so that Netflix
// servers can be peers too:
//
//   - every write a server accepts from a client (register, renew, cancel,
//     status override and its removal, metadata update) is forwarded to
//     every other peer, asynchronously, in batches, through
//     POST /peerreplication/batch; replicated writes are never forwarded
//     again;
//   - a heartbeat or registration whose client names, in
//     heureka.ToldPeersHeader, peers it sends that write to itself is not
//     forwarded to those peers, and is forwarded to every other. A name
//     counts only when it is spelt as this server spells a peer in its
//     list (urlcheck.PeerName); any doubt (another spelling, an unknown
//     URL, an oversized or broken value) means the write is forwarded.
//     The answer per header value is cached (a bounded map, read without
//     a lock) for the life of the replicator, whose peer list is fixed;
//   - per peer, writes wait in a bounded queue (heartbeats coalesced per
//     instance) and are sent again, after a failed batch, at most a second
//     later while the peer does not answer (Eureka's
//     serverUnavailableSleepTimeMs; five seconds after a refused batch,
//     which is answered with a full resync); a peer whose queue overflows,
//     or that stays unreachable for longer than MaxOutage, is sent the
//     whole registry (and the recent cancels) when it answers again:
//     nothing is dropped silently;
//   - batches between heureka servers are numbered (BatchSeqHeader), and a
//     batch that arrives after a newer one from the same sender (its sender
//     gave up on it, and sent its writes again since) is refused whole, so
//     a late override never lands over its clear;
//   - a queued registration is sent as the copy the registry holds when it
//     is sent, so a registration that waited out a partition cannot land
//     after a newer copy (same lastDirtyTimestamp, as a metadata update
//     leaves it) that another peer delivered first;
//   - conflicts resolve by lastDirtyTimestamp, as in Eureka: a heartbeat
//     the peer does not know becomes a registration, and a peer's newer
//     copy (409) is taken;
//   - anti-entropy compares per-application digests with every peer and,
//     for an application that differs, the digests of its instances; it
//     pulls the instances that differ (the whole application from a peer
//     without per-instance digests, or past 64 of them) and the peer's
//     recent cancels, adopts the copies newer there or missing here, and
//     sends the peer our copies that are newer than its own, so a healed
//     partition converges without waiting for renewals and without
//     resurrecting what was cancelled meanwhile; a peer that answers again
//     after an outage is compared at once and again once its queue is
//     delivered, and a comparison that adopted a copy is followed by one
//     with every other peer, so writes through two peers that a heal
//     delivered in different orders (Eureka orders none across senders)
//     converge without waiting for the next round
//     (AntiEntropyInterval);
//   - at start, the registry is copied from the first peer that answers
//     (bounded by SyncTimeout, then the server starts empty and says so);
//     Ready reports when that is over, for /readyz. Then every other peer
//     is called until it answers once (for up to AntiEntropyInterval), so
//     that each peer's health is known within moments of start.
//
// The package owns both halves of the protocol and its wire types: the
// sender (Replicator), the receive side (Receiver, which applies a batch
// and answers per item, and serves the digest and one application for
// anti-entropy), Digest and TombstoneJSON, and NodeHeader. The HTTP layer
// (internal/httpapi) mounts Receiver on /peerreplication/batch,
// /v1/replication/digest, /v1/replication/apps/{APP} (?id=ID... for some
// of its instances) and /v1/replication/apps/{APP}/digests, and does the
// HTTP part only: the peer role, the body's and the query's bounds, error
// rendering.
//
// # Transport and clock
//
// Every call to a peer goes through Config.Transport: the HTTP client from
// NewHTTPTransport in servers, a replicationtest.MemNetwork in tests
// (servers as handlers on host names, partitions in both directions, no
// sockets). Every reading
// of time and every wait goes through Config.Clock: SystemClock in
// servers, or the clock a server run with --debug-listen lets a test step
// and skew. The package's own tests use SystemClock inside
// testing/synctest bubbles, where it reads the bubble's fake time: an
// outage lasts as long as a test says, and each check runs at a known
// time.
//
// Config is used as given: start from DefaultConfig; zero is a value (a
// BatchDelay of 0 sends at once, a SyncTimeout of 0 tries each peer once),
// and Validate names the first setting that cannot work.
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
// one more. Run owns them all and returns when its context ends. A
// Receiver is safe for concurrent requests (the registry serialises the
// writes, and numbered batches from one sender are applied one at a time);
// Status and Collector (per-peer state for /v1/status and
// /metrics) read each peer under its own lock.
//
// # What it does not do
//
// It does not discover peers: the list is given. It does not forward
// evictions: every peer evicts on its own, as Eureka's do. It offers no
// consensus: the cluster is AP, and a partitioned peer keeps serving what it
// knows.
package replication

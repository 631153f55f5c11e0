// Command nemesis is heureka's fault-injection harness: three or five real
// heureka peers, a concurrent Eureka workload, faults on a schedule drawn
// from a seed, a history of every operation, and a checker over that
// history and the healed cluster's state.
//
//	cd tests/nemesis && go run . [-short] [-peers 3|5] [-seed N] [-duration D] [-faults K,…] [-agents S,…] [-out DIR]
//
// -peers defaults to 3, the topology every earlier seed was drawn for: a
// seed replays the same schedule only with the same -peers (and -faults).
//
// It needs root and ip (iproute2). It builds the server from ../.. unless
// $HEUREKA_BIN names one, and exits 1 when a count the checker requires to
// be 0 is not, 2 when the harness itself failed, 130 when interrupted.
//
// # The network
//
// Every address it uses lies in network namespaces it creates (named
// hnem<pid>-net, -cli and -p1 to -p5, every one within Linux's 15
// characters; removed on exit, on failure, on Ctrl-C, SIGTERM and SIGHUP,
// and a run fails if any is left; those of an earlier run whose process is
// gone are removed at start): a namespace per peer, joined by a peer bridge
// (10.213.1.0/24) that carries replication only, and a client bridge
// (10.213.2.0/24) through which the workload, running in a namespace of
// its own, reaches every peer. The harness
// re-executes itself inside that client namespace (the -inner flag); the
// outer process only builds and removes the network.
//
// # Faults
//
//   - isolate: a peer's port on the peer bridge goes down (with three peers,
//     also the majority/minority split);
//   - split (five peers only): a clean majority/minority split, three
//     peers against two, every pair across the sides cut as the bridge
//     cuts one;
//   - bridge: A sees B, B sees C, A and C cannot see each other (each
//     resolves the other's address to a link-layer address nobody has).
//     With five peers it is Jepsen's bridge, not a chain: one peer in the
//     middle sees all four others, which fall in two sides of two (drawn
//     from the seed); each side sees itself and the middle, never the
//     other side, so each side with the middle is a majority and the
//     middle is the only way between them. With three peers the sides are
//     one peer each: A, B, C as above;
//   - slow, flaky: on every link out of one peer, through the TCP fault
//     proxy each peer replicates through (toxiproxy, as a library, in a
//     process of its own in the peer's namespace; its API on the client
//     network): 1.5 s ± 0.7 s latency each way and 8 KB/s, or half the
//     connections reset and a third stalled. The proxy dials its upstream
//     inside its accept loop, so each peer's namespace has
//     net.ipv4.tcp_syn_retries set to 1: a dial begun during a cut gives
//     up within about 3 s, rather than holding every later connection on
//     that link for up to Linux's SYN back-off after the heal;
//   - kill: kill -9 of a peer, restarted after the hold;
//   - pause: SIGSTOP, SIGCONT after the hold;
//   - all-down: every peer killed at once, all restarted;
//   - node-death: a heureka agent's node or a plain client stops without
//     a word; the time until no peer serves it is measured, and a node
//     still served a lease and 5 s after it died fails the run (unless
//     only peers whose self-preservation held expired leases served it);
//   - clock: one peer's clock steps 10–40 s forward or back, or runs at
//     0.5–1.5×, until the heal sets it to the wall clock again. The clock
//     is the one the peer's registry and replicator read: every peer runs
//     with --debug-listen on its namespace's loopback, which serves
//     internal/debugclock at /debug/clock, and the harness re-executes
//     itself in that namespace (the -clock flag) to change it. Go reads
//     the time through the vDSO, so libfaketime would not move it, and
//     time namespaces do not virtualise CLOCK_REALTIME.
//
// One fault is in force at a time, held 5–15 s, with 2–5 s of health
// between faults, each kind drawn at random. -faults limits the kinds
// drawn. The short mode (-short: seed 1, then a random seed, 65 s of
// faults each) draws every kind once before any twice and holds each
// 4–6 s, past a lease, with 1–2 s between.
//
// # Workload: the shapes users deploy
//
// Nodes running heureka's own agent (package agent, with a healthy fake
// DataNode) take three shapes in turn (-agents narrows them): one registry
// URL, the packaged default (one-url); two of the peers (some-peers); every
// peer (every-peer). Agent n's list starts at peer (n + ⌊n/3⌋) mod N + 1,
// so that the agents of one shape start at different peers, and goes round
// the ring; with five peers a split or a bridge can put all of a
// some-peers list on one side. A dead node is replaced by one of the same
// shape.
//
// Plain Eureka clients (eureka-client) register, heartbeat every second
// on 3 s leases with their status and lastDirtyTimestamp, register again
// after a 404, change their metadata and status, cancel, and start again
// under a new ID. They choose a server as Netflix's Java client does for
// its registration calls (eurekaclient.go); the facts, from Netflix/eureka's
// eureka-client:
//
//   - EurekaHttpClients.canonicalClientFactory wraps each call in
//     SessionedEurekaHttpClient over RetryableEurekaHttpClient;
//   - the cluster's endpoints are the service URLs, shuffled by
//     ResolverUtils.randomize with a Random seeded by the client's IPv4
//     address (ZoneAffinityClusterResolver puts the client's zone first;
//     the harness has one zone), so each client keeps its own order;
//   - RetryableEurekaHttpClient.execute tries the server that answered
//     last, then the candidates in order, DEFAULT_NUMBER_OF_RETRIES (3)
//     attempts in all; a connection error or a status its
//     ServerStatusEvaluators.legacyEvaluator does not accept (it accepts
//     2xx, 302, 404 to a register or a heartbeat, anything to a cancel)
//     moves on, and a failed candidate is quarantined; getHostCandidates
//     clears the quarantine once it holds
//     retryableClientQuarantineRefreshPercentage (0.66) of the servers;
//   - SessionedEurekaHttpClient starts a new session, from the head of the
//     list, every sessionedClientReconnectIntervalSeconds (20 min) ±50%;
//   - DiscoveryClient.renew sends the heartbeat with status and
//     lastDirtyTimestamp (AbstractJerseyEurekaHttpClient.sendHeartBeat)
//     and registers again on a 404.
//
// Times are scaled as the renewal interval is (Netflix's 30 s to 1 s): a
// session lasts 40 s ±50%. An attempt is bounded by 1 s (Netflix: 5 s to
// connect and 8 s to read), since a thirtieth would be too tight on a
// shared two-core machine.
//
// An operator sets and clears OUT_OF_SERVICE on a third of the plain
// clients' instances; readers fetch the full registry and deltas and follow
// /v1/watch on every peer. Every operation goes to history.jsonl with its
// outcome (ok, error, timeout), peer and time.
//
// # Promises
//
// Twice a second the sampler reads every answering peer's registry and
// judges each live instance against what its shape is promised
// (promise.go, as docs/reliability.md states it): a peer must serve an
// instance registered at least 2 s ago whose client had a registration or
// heartbeat acknowledged before the fetch began and within 1.5 s of its
// end if the peer hears the client
// directly (a heureka agent heartbeats every peer it lists; a plain client,
// the peer that answers it), or if replication from such a peer reaches
// it: not cut, not slow or flaky out of that peer, neither end killed or
// paused. A plain client that moved to another peer less than 2 s before
// is promised only there. After a heal, until the peers agree again and
// for 7 s at least (a batch sent into the cut waits out its 5 s request
// timeout), a peer is held to what it was held to during the fault. A missing
// instance that was promised fails the run (it goes to the history as
// checker/missing); one that was not is counted by its reason. In the
// healthy phase every peer is promised every live instance.
//
// The node-death fault stops a heureka agent's node or a plain client
// without a word (drawn from the seed); it must be gone from every peer
// within its lease and 5 s, or the run fails, except from a peer whose
// self-preservation was holding expired leases meanwhile (read from its
// /v1/status while it still served the node): that is counted apart. A heal after which the peers
// do not agree within 30 s fails the run too; so does a node served past
// its bound. Either leaves each peer's copy of what differs, its
// /v1/status and its anti-entropy digest in unconverged-N.txt or
// late-death-ID.txt, beside history.jsonl (and final-divergence.txt when
// the final views differ).
//
// # Concurrency
//
// Every workload actor is a goroutine with its own state; they share the
// history (a mutex) and the set of instances that should be live (a
// mutex). The nemesis runs faults one after another in its own goroutine;
// the fault in force and what it does to the peers are behind its mutex,
// which the sampler reads before each fetch. A crash of a plain client is
// asked for on a channel its goroutine reads between heartbeats.
//
// # What it does not do
//
// A clock fault moves one server's registry and replication clock, not
// its timers, HTTP deadlines or log timestamps. No packet-level loss or
// delay (this kernel has no netem): the fault proxy works on TCP streams.
// Hostile peers are tested in internal/httpapi and replication, not here.
// Only three or five peers: an even count has no clean majority, and more
// than five would not fit this machine's two cores.
package main

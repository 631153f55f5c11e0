// Package agent is heureka's sidecar: it runs beside one daemon of a data
// system, registers it in the registry as "<role>.<cluster>"
// (heureka.RoleApp of Config.Role and Config.Cluster, e.g.
// "hdfs-datanode.prod") with instance ID heureka.InstanceID, and keeps that
// registration true: alive while the daemon answers, DOWN within about
// ProbeInterval + RecheckInterval of it dying or saying it is unhealthy
// (within milliseconds when it knows the daemon's process), with its role
// state and figures current, and drained before the agent leaves. A daemon
// paused by a long GC keeps its status for Config.HangAfter.
//
// What the agent knows of the daemon is its Role (role.go): a cheap probe
// (answering or not, healthy or not, the role state), a full read of its
// figures, and which changes of them are material. The agent knows no
// system itself; agent/hdfsrole is the HDFS DataNode's and NameNode's
// Role, and each other system's lives in agent/<system>role:
// agent/yarnrole (ResourceManagers), agent/hbaserole (masters and
// RegionServers), agent/elasticsearchrole, agent/zookeeperrole and
// agent/kafkarole. Those roles, given the cluster's identity, report a
// daemon that answers for another cluster as unhealthy with a cause
// naming both: the agent registers it DOWN with that cause, never UP.
//
//	role, err := hdfsrole.New(hcfg, daemon) // an agent.Role
//	a, err := agent.New(cfg, registryClient, role) // registryClient: *client.Client
//	err = a.Run(ctx) // until ctx is done; then drain, deregister, nil
//
// # What is registered
//
// The instance's port is the Role's Figures.Port, and its metadata the
// figures' keys, then the keys of the last answered probe's
// Health.Metadata over them, then the keys the agent owns: heureka.MetaRack
// (Config.Rack, normalised), heureka.MetaRoleState (Health.State, when the
// role has one), and its verdict, heureka.MetaDownCause while DOWN and
// heureka.MetaProbeState while marked hung. Before the daemon has been
// read, the figures are the Role's Static ones.
//
// # Three loops
//
// Run starts three goroutines (four with a process to watch, see below;
// and, with two registry URLs, one at a time for the second heartbeat)
// that share one state under a mutex:
//
//   - The prober calls Role.Probe every ProbeInterval (for HDFS: a TCP
//     connect to the data or RPC port and a read of one small bean, at the
//     same time). It owns the daemon state machine below and the role
//     state.
//   - The collector calls Role.Collect every MetadataInterval (for HDFS:
//     the daemon's beans in full) and at once when the daemon comes back.
//     It asks for a push only when the Role calls the change material.
//   - The syncer owns the registration state machine: it registers,
//     renews and pushes changes, and drains at the end.
//
// A slow registry therefore never delays probing, and a slow daemon never
// delays heartbeats.
//
// # The daemon state machine (prober)
//
//	STARTING ──probe ok──▶ UP ◀── answered every probe for the hold ── DOWN
//	    │                  │ ▲                                           ▲
//	    │                  │ └─ answers ── HUNG (status held) ──────────┤ HangAfter unanswered:
//	    │                  └─ accepted, unanswered ─▶┘                   │ "not answering"
//	    └──────────── FailureThreshold refused or failed probes ────────┤ "port refused", "probe failed",
//	                  (or unhealthy answers)                            │ the Role's cause
//	                       the process exited (PID known) ─────────────┘ "process exited", at once
//
// Probe outcomes come in four kinds. A refused connection (ErrRefused) is
// a dead daemon; any other error (a 500, a missing bean) one that is not
// well; and an answer whose Health.Unhealthy is set one that says itself
// it is not well (a ZooKeeper follower that lost its leader), with the
// cause it gives. All three are retried after RecheckInterval rather than
// a whole ProbeInterval, so "two consecutive failures" (the default
// threshold) takes a quarter of a second to confirm. Connections accepted but not
// answered before ProbeTimeout (ErrNoAnswer) are what a stop-the-world GC
// pause or SIGSTOP looks like from outside: the status is held, measured
// from the first unanswered probe, for HangAfter; past HungMarkAfter the
// registration gains probe_state=hung (one write, and one more to remove
// it when the daemon answers) so placement takes the node last; past
// HangAfter it is DOWN. While it is held the agent logs the pause and
// Status reports Hung, HungSince and Pauses; no probe writes to the
// registry.
//
// DOWN carries its cause to the registry as the metadata down_cause
// (heureka.MetaDownCause; the Cause constants, or the Role's own), where
// watchers, events and alerts see it with the status. Only "process exited" replaces an
// earlier cause, so the refused probes that follow an exit do not write.
//
// A DOWN daemon is UP again only once it has answered every probe for
// the hold: UpAfter, doubled for each other DOWN within FlapWindow, at
// most FlapHoldMax. A failure restarts the hold. A hold longer than
// UpAfter is logged ("daemon is flapping"), and Status reports
// RecentDowns and Hold. The figures are read again at once when it is
// UP. Every answered probe's Health (its role state and probe metadata,
// such as a NameNode's ha_state and ha_transition_time) is compared with
// the last; any difference is pushed at once, whatever the status, and a
// new role state is logged.
//
// # The process watcher
//
// With Config.PID, PIDFile or SystemdUnit a fourth goroutine holds the
// daemon's process and reports DOWN "process exited" the moment the
// kernel says it ended, without waiting for a probe. On Linux it holds a
// pidfd (pidfd_open) and sleeps in poll(2) on it and on a pipe that the
// context's end writes to, so it wakes at once for either; elsewhere on
// Unix it polls kill(pid, 0) every RecheckInterval. A pidfd refers to one
// process, so once open a reused PID cannot be mistaken for the daemon.
// Before that, the PID must be the daemon's: the process's start time
// (/proc/PID/stat) must not be later than the pid file's modification
// time (plus 10 s for clock steps), since the file is written after the
// fork and a stale file's PID given to a later program fails the check;
// a unit's PID must still be its MainPID once held (systemd keeps MainPID
// itself); a PID given directly is the operator's word, looked at once.
// The start time, not the daemon's command line or listening port, is
// the check because /proc/PID/stat is readable for another user's
// process, while /proc/PID/fd (which sockets a process holds) is not, and
// the agent runs as its own user. After an exit the pid file or the unit
// is read every ProbeInterval until a new process is found, which is then
// watched in turn: a restarted daemon is followed.
//
// # Material changes (collector)
//
// The registry is told about new figures when the Role calls them
// materially different from what it holds (Role.Material; for HDFS, see
// agent/hdfsrole). Smaller drifts ride along with the next push, or are
// pushed on their own once the registry's copy is MetadataMaxAge old.
//
// # The registration state machine (syncer)
//
//	start ──▶ REGISTERING ──register ok──▶ REGISTERED ◀─┐ renew every RenewInterval;
//	           ▲   │    ▲                      │  │       │ a pending change: register
//	           │   └────┘ failed: backoff      │  └───────┘ again (failed: backoff)
//	           └────────── renew answered 404 ─┘
//
//	ctx done, any state ──▶ DRAINING: OUT_OF_SERVICE override, wait
//	                        DrainPeriod, deregister ──▶ STOPPED (Run returns nil)
//
// Every failed registry call is retried after a jittered pause that
// doubles from BackoffMin to BackoffMax (a renewal retries at least every
// RenewInterval); none is fatal. While the registry is unreachable the
// daemon state machine keeps running, and the latest state is pushed when
// the registry returns. A 404 on renew (the lease expired during an outage,
// or the registry restarted) registers again at once with everything the
// agent knows. Each call is bounded by CallTimeout.
//
// # Every peer hears every heartbeat
//
// With more than one registry URL (a Registry that is an OtherPeers, as
// *client.Client is), every successful heartbeat is also sent, once each
// and without failover, to every other peer in the list, and a 404 there
// is answered with the registration that peer missed. So every peer the
// agent reaches hears from the node directly, and a partition between the
// registry peers alone (the agent reaches them all) cannot make any peer
// expire a live node: replication no longer carries its liveness.
//
// Each heartbeat names, in heureka.ToldPeersHeader, the peers that hear
// it from the agent itself, and a heureka peer replicates it only to the
// peers it does not name. The first heartbeat (RenewTold) names the peer
// it reaches and the other peers that answered the last round; the others
// (RenewOthers), and the registrations that answer their 404s, name every
// URL of the list. So with every peer listed and answering nothing is
// replicated and each peer handles one direct heartbeat per node and
// interval; a peer that did not answer the last round is not named, and
// the first peer replicates to it; a peer left out of the list is never
// named, and hears of the node by replication from every peer the agent
// reaches. With a single URL (the packaged default) the first heartbeat
// names only that peer, which replicates it to all the others, as for a
// plain Eureka client. When the last round is still out, this beat sends
// no round and its first heartbeat names nothing (Renew). A node that dies
// stops every heartbeat, and every peer expires it within its lease as
// before.
//
// Failures at the other peers are logged at debug level and change
// nothing but what the next first heartbeat names. These heartbeats run
// in a goroutine of their own, one round at a time (a beat is skipped
// while the last round is still out), so a slow peer never delays the
// first's; the drain waits for them, so that a late registration cannot
// outlive the deregistration. See docs/deployment.md for what each way of
// listing the peers gets, and docs/reliability.md for plain Eureka
// clients.
//
// # Which Eureka call reports the daemon's status
//
// UP and DOWN are reported by registering again with the new status, which
// is how Eureka's own clients report their health (the Java client's
// InstanceInfoReplicator re-registers whenever its InstanceInfo changes).
// The server believes an instance that says it is not well: a registration
// with status DOWN is stored as DOWN whatever else is recorded, and one
// with UP is stored as UP unless an operator's override says otherwise.
// The status override (PUT .../status, SetStatus) is the operator's tool:
// it sticks across heartbeats and registrations until deleted, so an agent
// that set DOWN through it could not come back UP by itself, and it would
// erase an operator's OUT_OF_SERVICE. Metadata changes travel the same way,
// a full registration, so keys that vanish are removed too (a metadata
// update only merges). Each registration carries a lastDirtyTimestamp that
// never goes backwards, so a registry never keeps an older copy over it.
//
// Draining is the exception: on shutdown the agent sets the
// OUT_OF_SERVICE override. A registration cannot drain, because the server
// keeps an UP instance UP when it re-registers as OUT_OF_SERVICE (Eureka's
// rule). The override is what every Eureka client honours, nothing will
// re-register over it (the agent's loops have stopped), and deregistering
// removes it.
//
// # Time
//
// The agent reads the wall clock and runs timers through the time package
// only; its tests run inside testing/synctest bubbles, whose fake clock
// makes minutes of probing, renewing and draining take microseconds and
// behave the same on every run. Nothing in the loops sleeps except the
// drain.
//
// # Concurrency
//
// Status and Instance may be called from any goroutine at any time. Run may
// be called once; it returns after its goroutines have ended. The Role's
// Probe and Collect may be called at the same time, from two goroutines;
// Static and Material are called under the agent's lock and must not block.
//
// # What it does not do
//
// It does not start, stop or restart the daemon, know any system's
// protocol or metadata (its Role does), tell a GC pause from any other
// hang (both accept and do not answer), serve metrics of its own (Status
// is the snapshot to export), decide its rack by itself (Config.Rack, or
// TableRack/ScriptRack, is the operator's), or talk to more than one
// registry cluster (the Registry does failover).
package agent

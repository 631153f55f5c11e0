// Package alert turns a heureka registry's event stream into alerts for
// Prometheus Alertmanager (POST /api/v2/alerts) and/or a webhook: an
// instance that goes DOWN (HeurekaInstanceDown), one whose lease expires
// (HeurekaInstanceExpired), a registry peer that protects expired leases
// (HeurekaSelfPreservation, read from each peer's GET /v1/status), and a
// cluster of a role with a lead whose members are UP and none leads
// (roles.Role.Alert: HeurekaNoActiveResourceManager,
// HeurekaNoActiveHBaseMaster, HeurekaZooKeeperNoLeader,
// HeurekaKafkaNoController; cluster.go), held for a minute by default.
// `heureka alert` is a thin command over it.
//
// A Forwarder follows GET /v1/events with client.Follow, so a dropped
// stream resumes from the last event handled and a server that cannot
// resume (its change log moved on, or it restarted) makes it re-read the
// registry and reconcile its alerts with it. Each alert change is queued
// per destination and retried until delivered or refused; firing alerts are
// re-sent to Alertmanager every Config.Resend. Config.For holds an alert
// back until its condition has lasted that long, as a Prometheus rule's
// "for" does. Config.StateFile keeps the stream position, the firing and
// the pending alerts and the members the cluster alerts are judged on
// (replaced atomically), so a restarted forwarder continues where it
// stopped.
//
// # Concurrency
//
// Run is called once; it runs the stream follower, one status poller per
// registry URL, the re-sender, the pending-alert ticker and one sender per
// destination as goroutines, and returns when ctx ends (after giving
// queued alerts up to five seconds) or when the registry cannot be
// followed at all. The alert state is guarded by one mutex. Time comes
// from Config.Clock, except for the tickers and retry pauses.
//
// It does not evaluate rules of its own beyond these alerts, deduplicate
// across several forwarders (run one, or let Alertmanager deduplicate), or
// persist undelivered alerts: a restart re-sends what is firing.
package alert

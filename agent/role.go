package agent

import (
	"context"
	"errors"

	"github.com/heureka-project/heureka"
)

// Role is what the agent knows of one kind of daemon: how to probe it,
// read its figures, and which changes of them matter. The agent does the
// rest the same way for every role (see doc.go). agent/hdfsrole is the
// HDFS implementation; each other system's lives in agent/<system>role,
// over its knowledge package at the module's root.
//
// The agent calls one method at a time, from one goroutine per method:
// Probe from the prober and Collect from the collector may run at the
// same time, so a Role must be safe for that.
type Role interface {
	// Probe says, cheaply, whether the daemon answers, and how it stands.
	// It is called every Config.ProbeInterval, bounded by ProbeTimeout.
	// An error wrapping ErrRefused means the daemon is dead; one wrapping
	// ErrNoAnswer that it accepts connections but says nothing (paused or
	// hung: its status is held for Config.HangAfter); any other error
	// counts toward Config.FailureThreshold like a refusal, with the
	// cause "probe failed". A daemon that answers but is not well says so
	// in Health.Unhealthy, not with an error.
	Probe(ctx context.Context) (Health, error)
	// Collect reads the daemon's figures in full: every
	// Config.MetadataInterval, and at once when it comes back. It is
	// bounded by Config.CollectTimeout, and not called while the daemon
	// is DOWN.
	Collect(ctx context.Context) (Figures, error)
	// Static returns what the role registers before the daemon has been
	// read (its configured port, say): the first registration of a daemon
	// that is not up yet carries it. It must not block.
	Static() Figures
	// Material reports whether figures that went from old (what the
	// registry holds) to new must reach the registry at once. Smaller
	// changes wait for Config.MetadataMaxAge. It must not block.
	Material(old, new Figures) bool
}

// Health is what one probe that the daemon answered learnt. Two Healths
// are compared with ==: any difference from the last one is pushed to the
// registry at once, and a role state that changed is logged.
type Health struct {
	// State is the daemon's role state, registered as
	// heureka.MetaRoleState: "active", "standby", "leader", "follower",
	// ...; "" for a role that has none (the key is then not registered).
	State string
	// Metadata is what else the probe read that must reach the registry
	// the moment it changes (a NameNode's ha_state and its transition
	// time, say). The agent registers these keys as the last answered
	// probe gave them, over the figures' keys of the same name, so a role
	// leaves them out of Collect.
	Metadata heureka.Metadata
	// Unhealthy, when not "", says the daemon answers but is not well (a
	// ZooKeeper follower that lost its leader, say), and why: the probe
	// counts as failed, and the daemon is reported DOWN with Unhealthy as
	// its cause (heureka.MetaDownCause) after Config.FailureThreshold of
	// them, as a dead daemon is. State and Metadata are still taken.
	Unhealthy string
}

// Figures is what one full read of the daemon learnt, as it is registered.
// Two Figures are compared with ==.
type Figures struct {
	// Port is the daemon's main port (a DataNode's data-transfer port, a
	// broker's listener), registered as the instance's Eureka port; 0
	// registers none.
	Port int
	// Metadata is the role's keys: heureka.MetaVersion and its own. The
	// agent adds heureka.MetaRack, MetaRoleState, MetaDownCause and
	// MetaProbeState itself, over any value given here.
	Metadata heureka.Metadata
}

// The probe failures the agent tells apart (see Role.Probe).
var (
	// ErrRefused: the daemon's port refuses connections; it is dead.
	ErrRefused = errors.New("connection refused")
	// ErrNoAnswer: the daemon accepts connections but says nothing; it is
	// paused (a full GC, SIGSTOP) or hung.
	ErrNoAnswer = errors.New("no answer")
)

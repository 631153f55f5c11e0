package registry

import (
	"github.com/heureka-project/heureka"
)

// RenewRequest is a heartbeat. Zero LastDirtyTimestamp and empty
// OverriddenStatus mean the client did not send them.
type RenewRequest struct {
	App, ID            string
	LastDirtyTimestamp int64
	OverriddenStatus   heureka.Status
	Replication        bool
	// Told is the heartbeat's heureka.ToldPeersHeader as sent, "" when
	// there was none: the peers its sender tells itself. The registry
	// does not read it; it passes it to the forwarder with the heartbeat
	// (Op.Told), which leaves those peers out.
	Told string
}

// RegisterRequest is a registration the caller gives its instance up with
// (RegisterOwned).
type RegisterRequest struct {
	// Instance must be normalised; the registry validates it, sets its
	// fields on it, keeps it and forwards it to the peers, so the caller
	// must not read or change it afterwards.
	Instance    *heureka.Instance
	Replication bool // from a peer: not forwarded
	// Told is the registration's heureka.ToldPeersHeader as sent, "" when
	// there was none; the registry passes it to the forwarder with the
	// registration (Op.Told). It is ignored with Replication.
	Told string
}

// CancelRequest is a cancellation of an instance's registration.
type CancelRequest struct {
	App, ID     string
	Replication bool // from a peer: not forwarded
}

// Stats are the counters and gauges exported as metrics.
type Stats struct {
	Instances        map[string]heureka.StatusCounts // by app
	Registrations    uint64
	Renewals         uint64
	Cancels          uint64
	Evictions        uint64
	SelfPreservation bool // true while eviction is suspended
	RenewsLastMin    int64
	RenewsThreshold  int64
	// ExpectedRenewsPerMinute is what every lease's renewal interval
	// promises, as of the last protection tick.
	ExpectedRenewsPerMinute float64
}

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

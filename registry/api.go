package registry

import (
	"log/slog"
	"time"

	"github.com/heureka-project/heureka"
)

// Mode selects how the registry protects itself when renewals stop arriving.
type Mode string

const (
	// ModeOff evicts every expired lease on time.
	ModeOff Mode = "off"
	// ModeEureka is Eureka's classic rule: stop evicting while renewals in
	// the last minute are at or below RenewalPercentThreshold of expected.
	ModeEureka Mode = "eureka"
)

// Config holds the registry's settings. Start from DefaultConfig.
type Config struct {
	// Clock returns the current time; tests inject a fake one.
	Clock func() time.Time
	// DeltaRetention is how long a change stays in /apps/delta.
	DeltaRetention time.Duration
	// EvictionInterval is how often Run looks for expired leases; it bounds
	// how long an expired instance lingers.
	EvictionInterval time.Duration
	// SelfPreservation is the protection mode.
	SelfPreservation Mode
	// RenewalPercentThreshold is Eureka's renewalPercentThreshold (ModeEureka).
	RenewalPercentThreshold float64
	// ExpectedClientRenewalInterval is Eureka's
	// expectedClientRenewalIntervalSeconds (ModeEureka).
	ExpectedClientRenewalInterval time.Duration
	// ChangeLogSize bounds the change log kept for deltas and watchers.
	ChangeLogSize int
	// Limits bound what one registrant may store.
	Limits heureka.Limits
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		Clock: time.Now,
		// Eureka's retentionTimeInMSInDeltaQueue: clients polling every 30 s
		// see each change several times and heal a missed one by hash.
		DeltaRetention: 3 * time.Minute,
		// An expired instance must be gone within a second of expiry, not on
		// Eureka's 60 s sweep.
		EvictionInterval: 500 * time.Millisecond,
		// Off until the cluster work brings a mode that cannot freeze a dead
		// node in a small cluster.
		SelfPreservation:              ModeOff,
		RenewalPercentThreshold:       0.85,
		ExpectedClientRenewalInterval: 30 * time.Second,
		// Room for a burst of changes well beyond the delta window.
		ChangeLogSize: 100_000,
		Limits:        heureka.DefaultLimits(),
		Logger:        slog.Default(),
	}
}

// RenewRequest is a heartbeat. Zero LastDirtyTimestamp and empty
// OverriddenStatus mean the client did not send them.
type RenewRequest struct {
	App, ID            string
	LastDirtyTimestamp int64
	OverriddenStatus   heureka.Status
	Replication        bool
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
}

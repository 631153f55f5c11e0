package registry

import (
	"log/slog"
	"math"
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
	// ModeSmart evicts isolated losses on time and holds back only a mass
	// loss that looks like the registry's own isolation (see Protection).
	ModeSmart Mode = "smart"
)

// Config holds the registry's settings. Start from DefaultConfig.
type Config struct {
	// Clock returns the current time; tests inject a fake one.
	Clock func() time.Time
	// Elapsed, when set, reads a clock that moves only forward and at the
	// real rate, such as the process's monotonic clock (time.Since of a
	// start). Between two ticks the registry compares it with Clock: a
	// step of Clock forward by more than Elapsed saw and more than
	// EvictionInterval is a jump of the wall clock, not time in which
	// clients could have renewed, and every lease gets it as grace, as
	// after a pause (PauseThreshold). Without it only jumps beyond
	// PauseThreshold are noticed. Nil leaves it off, for fake clocks.
	Elapsed func() time.Duration
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
	// MassLossFraction is the share of instances that must be expired at
	// once, spread across failure domains, before ModeSmart protects them.
	MassLossFraction float64
	// MaxProtection bounds how long ModeSmart holds back evictions: a loss
	// that lasts longer is taken as real.
	MaxProtection time.Duration
	// StormRate is the registration rate, per second and measured from
	// one tick to the next, at or above which the registry counts itself
	// in a registration storm (ModeSmart): while it lasts, the lease clock
	// stands still, as it does for a pause. After a restart every agent
	// registers again within one renewal interval, and the registry hears
	// its fleet only as fast as it takes those registrations: a heartbeat
	// stuck behind the storm is the registry's delay, not the instance's
	// death. A small fleet makes no storm, so its dead nodes are evicted
	// on time from the registry's first second. Zero disables.
	StormRate float64
	// StormHold bounds how long one storm stands the lease clock still: a
	// storm that lasts longer is taken as the registry's normal load.
	StormHold time.Duration
	// PauseThreshold is the gap between two ticks taken as the process having
	// been paused (or the clock having jumped); leases then get the gap as
	// grace, since nobody could renew during it. Zero disables the check.
	PauseThreshold time.Duration
	// MaxAhead bounds how far ahead of this server's clock a
	// lastDirtyTimestamp (or a peer's registration time) may be. Newer
	// wins, so a copy from the future would win over every real update
	// until the clock caught up; past the bound the write is refused
	// (EINVALID), never clamped, since a clamped copy would differ from the
	// sender's for ever.
	MaxAhead time.Duration
	// TombstoneTTL is how long an explicit cancel is remembered, so that a
	// peer that missed it cannot hand the instance back.
	TombstoneTTL time.Duration
	// ChangeLogSize bounds the change log kept for deltas and watchers;
	// changes older than DeltaRetention leave it sooner (appendChange).
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
		// Evicts a dead node on time in any cluster size, yet rides out the
		// registry's own isolation (see ModeSmart).
		SelfPreservation:        ModeSmart,
		RenewalPercentThreshold: 0.85,
		// Losing 40% of everything at once, across racks and applications,
		// is rarely the nodes' fault and usually the registry's.
		MassLossFraction: 0.4,
		// Long enough to ride out a switch reboot or a registry partition;
		// short enough that a real mass failure is reported the same hour.
		MaxProtection: 15 * time.Minute,
		// A thousand registrations a second is a fleet of 10k registering
		// again in ten seconds, or 30k in a 30 s interval: at that rate a
		// registry on one core spends under a tenth of it on
		// registrations, so anything less is no storm. Two minutes is four
		// 30 s leases: an instance that registered in a storm's last
		// second has had three chances to renew before its lease runs
		// again.
		StormRate: 1000,
		StormHold: 2 * time.Minute,
		// Ten missed ticks: a stop-the-world pause, SIGSTOP or a VM freeze.
		PauseThreshold:                5 * time.Second,
		ExpectedClientRenewalInterval: 30 * time.Second,
		// Longer than any partition anti-entropy is expected to heal.
		TombstoneTTL: 30 * time.Minute,
		// Clocks kept by NTP agree within seconds; five minutes (Kerberos's
		// default skew) refuses only a clock that is plainly wrong, and
		// bounds what one bad write can pin.
		MaxAhead: 5 * time.Minute,
		// Room for a burst of changes well beyond the delta window.
		ChangeLogSize: 100_000,
		Limits:        heureka.DefaultLimits(),
		Logger:        slog.Default(),
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c Config) Validate() error {
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "DeltaRetention", Value: c.DeltaRetention},
		heureka.NamedDuration{Field: "EvictionInterval", Value: c.EvictionInterval},
		heureka.NamedDuration{Field: "ExpectedClientRenewalInterval", Value: c.ExpectedClientRenewalInterval},
		heureka.NamedDuration{Field: "MaxProtection", Value: c.MaxProtection},
		heureka.NamedDuration{Field: "TombstoneTTL", Value: c.TombstoneTTL},
		heureka.NamedDuration{Field: "MaxAhead", Value: c.MaxAhead},
	); err != nil {
		return err
	}
	switch {
	case c.Clock == nil:
		return heureka.InvalidConfig("Clock", nil, "is nil: start from DefaultConfig")
	case c.StormRate < 0 || math.IsNaN(c.StormRate) || math.IsInf(c.StormRate, 0):
		return heureka.InvalidConfig("StormRate", c.StormRate, "want 0 (off) or a positive number of registrations a second")
	case c.StormHold < 0:
		return heureka.InvalidConfig("StormHold", c.StormHold, "want 0 (off) or more")
	case c.PauseThreshold < 0:
		return heureka.InvalidConfig("PauseThreshold", c.PauseThreshold, "want 0 (off) or more")
	case c.ChangeLogSize <= 0:
		return heureka.InvalidConfig("ChangeLogSize", c.ChangeLogSize, "want at least 1")
	case c.SelfPreservation != ModeOff && c.SelfPreservation != ModeEureka && c.SelfPreservation != ModeSmart:
		return heureka.InvalidConfig("SelfPreservation", string(c.SelfPreservation), "want off, eureka or smart")
	case c.MassLossFraction <= 0 || c.MassLossFraction > 1:
		return heureka.InvalidConfig("MassLossFraction", c.MassLossFraction, "want a fraction in (0, 1]")
	case c.RenewalPercentThreshold <= 0 || c.RenewalPercentThreshold > 1:
		return heureka.InvalidConfig("RenewalPercentThreshold", c.RenewalPercentThreshold, "want a fraction in (0, 1]")
	}
	return heureka.ConfigIn("Limits", c.Limits.Validate())
}

package registry

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/heureka-project/heureka"
)

// Protection says whether self-preservation is holding back evictions, why,
// and the numbers it decided on. Registry.Protection returns the state as of
// the last tick.
type Protection struct {
	Mode   Mode   `json:"mode"`
	Active bool   `json:"active"`
	Reason string `json:"reason"`
	// Since is when protection last started; zero while inactive.
	Since     time.Time `json:"since,omitzero"`
	Instances int       `json:"instances"`
	// Silent counts the leases that have missed a renewal by half an
	// interval or more (expired ones included): ModeSmart judges a loss by
	// them.
	Silent int `json:"silent"`
	// Expired counts the leases that have expired: held back while Active.
	Expired int `json:"expired"`
	// RenewsLastMinute and ExpectedRenewsPerMinute compare what arrived with
	// what every lease's own renewal interval promises.
	RenewsLastMinute        int64   `json:"renewsLastMinute"`
	ExpectedRenewsPerMinute float64 `json:"expectedRenewsPerMinute"`
	// RenewsMeasured is false until the first one-minute window has closed:
	// until then RenewsLastMinute is 0 because nothing was measured yet,
	// not because nothing renewed.
	RenewsMeasured bool `json:"renewsMeasured"`
	// Threshold is Eureka's numberOfRenewsPerMinThreshold (mode eureka).
	Threshold int64 `json:"threshold,omitempty"`
	// StormSince is when the registration storm that stands the lease
	// clock still began (Config.StormRate); zero when there is none.
	StormSince     time.Time `json:"stormSince,omitzero"`
	PeersReachable int       `json:"peersReachable"`
	Peers          int       `json:"peers"`
}

// Protection returns the self-preservation state as of the last tick.
func (r *Registry) Protection() Protection {
	r.spMu.Lock()
	defer r.spMu.Unlock()
	p := r.protection
	p.RenewsLastMinute, p.RenewsMeasured = r.renewsLastMin, r.renewsMeasured
	if !r.storm.capped {
		p.StormSince = r.storm.since
	}
	p.PeersReachable, p.Peers = r.peers.reachable, r.peers.total
	return p
}

// SetPeers tells the registry how many of its replication peers it can
// reach. A peer cut off from all of its peers that also stops hearing from
// many instances is probably the one that is isolated.
func (r *Registry) SetPeers(reachable, total int) {
	r.spMu.Lock()
	r.peers.reachable, r.peers.total = reachable, total
	r.spMu.Unlock()
}

func renewsPerMinMilli(s *stored) int64 {
	return int64(60_000 / max(s.lease.RenewalIntervalSecs, 1))
}

// graceAfterPause detects a gap in the ticks (the process was stopped, or
// the clock jumped) and moves every lease's last renewal forward by the gap:
// nobody could renew while this process was not listening, so nobody is
// blamed for it. With Config.Elapsed it also notices a smaller forward
// step of the clock, which it gives as grace likewise: in that time
// nobody could renew either. One addition does it: lease times are kept
// less the grace (see expiry.go). It returns the time since the last tick
// (zero at the first) and whether it gave that gap as grace.
func (r *Registry) graceAfterPause(now time.Time) (time.Duration, bool) {
	var el time.Duration
	if r.cfg.Elapsed != nil {
		el = r.cfg.Elapsed()
	}
	r.spMu.Lock()
	last, lastEl := r.lastTick, r.lastElapsed
	r.lastTick, r.lastElapsed = now, el
	r.spMu.Unlock()
	if last.IsZero() {
		return 0, false
	}
	gap := now.Sub(last)
	if r.cfg.PauseThreshold <= 0 {
		return gap, false
	}
	var grace time.Duration
	var msg string
	switch step := gap - (el - lastEl); {
	case gap > r.cfg.PauseThreshold:
		grace = gap - r.cfg.EvictionInterval
		msg = "no tick for a while: the process was paused or the clock jumped; every lease gets the gap as grace"
	case r.cfg.Elapsed != nil && step > r.cfg.EvictionInterval:
		grace = step
		msg = "the clock stepped forward; every lease gets the step as grace"
	default:
		return gap, false
	}
	r.mu.RLock()
	r.grace.Add(int64(grace))
	n := r.census.instances
	r.mu.RUnlock()
	r.log.Warn(msg, "gap", gap.Round(time.Millisecond), "grace", grace.Round(time.Millisecond), "leases", n)
	return gap, true
}

// storm is the registration storm as of the last tick (graceForStorm);
// guarded by Registry.spMu.
type storm struct {
	count  uint64        // registrations and adoptions as of the last tick
	since  time.Time     // when the storm began; zero when there is none
	calm   time.Duration // how long the rate has been under StormRate
	stood  time.Duration // the grace this storm has given
	capped bool          // it has given StormHold: leases run again
}

// Storming reports whether the last tick counted Config.StormRate or more
// registrations a second, adopted copies included, in any
// self-preservation mode. Work that can wait for a storm to pass, such as
// encoding listings a read asks for ahead of the encoder's own schedule,
// waits longer while it is true.
func (r *Registry) Storming() bool { return r.storming.Load() }

// stormCalm is how long the rate must stay under StormRate for a storm to
// be over. A refill's rate dips between ticks (a collection, a burst of
// 404s) while its backlog is still there.
const stormCalm = 2 * time.Second

// graceForStorm stands the lease clock still while the registry takes a
// registration storm (ModeSmart): at least Config.StormRate registrations
// a second, counted from the last tick to this one, copies adopted from
// peers included, until the rate has stayed under it for stormCalm. Every
// tick of the storm gives every lease its length as grace, as a pause
// does: the lease's heartbeats may be waiting behind the storm. One storm
// gives at most Config.StormHold; a tick that a pause already covered
// (paused) gives nothing more. el is the time since the last tick, as
// graceAfterPause measured it (zero at the first tick, or when the clock
// stepped back). In every mode it records whether this tick's rate was a
// storm's (Storming).
func (r *Registry) graceForStorm(now time.Time, el time.Duration, paused bool) {
	n := r.registrations.Load() + r.adoptions.Load()
	r.spMu.Lock()
	s := &r.storm
	lastN := s.count
	s.count = n
	if r.cfg.StormRate <= 0 || el <= 0 {
		r.spMu.Unlock()
		return
	}
	rate := float64(n-lastN) / el.Seconds()
	storming := rate >= r.cfg.StormRate
	r.storming.Store(storming)
	if r.cfg.SelfPreservation != ModeSmart || r.cfg.StormHold <= 0 {
		r.spMu.Unlock()
		return
	}
	if s.since.IsZero() && !storming {
		r.spMu.Unlock()
		return
	}
	if s.since.IsZero() {
		*s = storm{count: n, since: now.Add(-el)}
		r.log.Warn("registration storm: the lease clock stands still while it lasts, since heartbeats may wait behind it",
			"registrations_per_second", int(rate), "storm_rate", r.cfg.StormRate)
	}
	if storming {
		s.calm = 0
	} else {
		s.calm += el
	}
	var grace time.Duration
	if !paused {
		grace = max(min(el, r.cfg.StormHold-s.stood), 0)
	}
	s.stood += grace
	if !s.capped && s.stood >= r.cfg.StormHold {
		s.capped = true
		r.log.Warn("registration storm has lasted longer than the storm hold: taken as the registry's normal load, leases run again",
			"lasted", now.Sub(s.since).Round(time.Second), "storm_hold", r.cfg.StormHold)
	}
	if s.calm >= stormCalm {
		r.log.Info("registration storm over: leases run again",
			"lasted", now.Sub(s.since).Round(time.Millisecond), "grace", s.stood.Round(time.Millisecond))
		s.since = time.Time{}
	}
	r.spMu.Unlock()
	if grace > 0 {
		r.mu.RLock()
		r.grace.Add(int64(grace))
		r.mu.RUnlock()
	}
}

// rollWindow closes the one-minute renewal window when it has run its
// course, as Eureka's MeasuredRate does.
func (r *Registry) rollWindow(now time.Time) {
	r.spMu.Lock()
	defer r.spMu.Unlock()
	elapsed := now.Sub(r.windowStart)
	if elapsed < time.Minute {
		return
	}
	n := r.renewsThisMin.Swap(0)
	if elapsed >= 2*time.Minute {
		n = 0 // a whole window passed with no tick: nothing is known of it
	}
	r.renewsLastMin, r.renewsMeasured = n, true
	r.windowStart = now
}

// lossView is what one tick sees: how many leases there are, the silent
// ones, which of them have expired and may be evicted, and how the silent
// spread over failure domains.
type lossView struct {
	total, expected int64 // instances; expected renewals per minute, thousandths
	silent          int
	expired         int
	evictable       []*stored // expired, and an interval past falling silent (smart)
	byRack, byApp   spread
}

// look brings the expiry bookkeeping up to now and reads the counts. It
// costs what fell silent, recovered or renewed since the last tick, not the
// size of the registry. Renewals go on meanwhile: it holds the read lock.
// With hold, an expired lease is evictable only once every lease that
// stopped with it has shown as silent (lease.evictableAt); without, as soon
// as it expires.
func (r *Registry) look(now time.Time, hold bool) lossView {
	r.tickMu.Lock()
	defer r.tickMu.Unlock()
	r.mu.RLock()
	defer r.mu.RUnlock()
	vnow := r.virtual(now)
	r.advance(vnow)
	v := lossView{
		total:    int64(r.census.instances),
		expected: r.census.expectedMilli,
		silent:   len(r.silent),
		byRack:   r.census.racks.spread(),
		byApp:    r.census.apps.spread(),
	}
	for _, l := range r.silent {
		if l.deadline() >= vnow {
			continue
		}
		v.expired++
		if !hold || l.evictableAt() < vnow {
			v.evictable = append(v.evictable, l.inst)
		}
	}
	return v
}

// evictBatch is how many leases evict removes under one hold of the write
// lock: ~1 ms of work at 100k instances.
const evictBatch = 256

// evict removes the expired leases that self-preservation lets go.
func (r *Registry) evict(now time.Time) int {
	v := r.look(now, r.cfg.SelfPreservation == ModeSmart)
	expired, changed, p := r.decide(now, v)
	if changed {
		if p.Active {
			r.Note("self_preservation_entered", p.Reason)
		} else {
			r.Note("self_preservation_left", p.Reason)
		}
	}
	if len(expired) == 0 {
		return 0
	}
	// A rack going dark evicts thousands at once, and every renewal waits
	// for the write lock: it is taken for evictBatch removals at a time, and
	// the log lines are written after it is released.
	type eviction struct {
		in    *stored
		last  time.Time
		lease time.Duration
	}
	done := make([]eviction, 0, len(expired))
	for batch := range slices.Chunk(expired, evictBatch) {
		r.mu.Lock()
		for _, in := range batch {
			// Re-check under the write lock: a renewal may have come in between.
			if l := r.lookup(in.app(), in.id()); l != nil && r.expired(l, now) {
				done = append(done, eviction{in, time.Unix(0, r.lastRenewal(l)).UTC(), l.duration})
				r.remove(now, in.app(), in.id(), heureka.CauseExpired)
			}
		}
		r.mu.Unlock()
	}
	r.evictions.Add(uint64(len(done)))
	for _, e := range done {
		r.log.Info("evicted expired instance", "app", e.in.app(), "id", e.in.id(),
			"last_renewal", e.last, "lease", e.lease)
	}
	return len(done)
}

// decide applies the mode to what the tick saw, records the outcome and
// returns the instances to evict, and whether protection started or ended.
func (r *Registry) decide(now time.Time, v lossView) ([]*stored, bool, Protection) {
	r.spMu.Lock()
	defer r.spMu.Unlock()
	p := Protection{
		Mode:                    r.cfg.SelfPreservation,
		Instances:               int(v.total),
		Silent:                  v.silent,
		Expired:                 v.expired,
		ExpectedRenewsPerMinute: float64(v.expected) / 1000,
		Since:                   r.protection.Since,
	}
	evict := v.evictable
	switch r.cfg.SelfPreservation {
	case ModeEureka:
		perMin := float64(time.Minute) / float64(r.cfg.ExpectedClientRenewalInterval)
		p.Threshold = int64(float64(v.total) * perMin * r.cfg.RenewalPercentThreshold)
		if !(p.Threshold > 0 && r.renewsLastMin > p.Threshold) {
			p.Active = true
			p.Reason = fmt.Sprintf("renewals in the last minute (%d) are not above the threshold (%d = %d instances × %.0f/min × %.2f)",
				r.renewsLastMin, p.Threshold, v.total, perMin, r.cfg.RenewalPercentThreshold)
			evict = nil
			break
		}
		// Eureka evicts at most (1 - threshold) of the registry per run, in
		// random order, so that no one application is wiped out at once.
		limit := int(v.total) - int(float64(v.total)*r.cfg.RenewalPercentThreshold)
		if len(evict) > limit {
			rand.Shuffle(len(evict), func(i, j int) { evict[i], evict[j] = evict[j], evict[i] })
			evict = evict[:limit]
		}
	case ModeSmart:
		// Protection holds back expired leases; while none has expired
		// there is nothing to hold, however many are late.
		if reason := r.massLoss(v); reason != "" && v.expired > 0 {
			since := r.protection.Since
			if since.IsZero() {
				since = now
			}
			if now.Sub(since) < r.cfg.MaxProtection {
				p.Active, p.Reason, p.Since = true, reason, since
				evict = nil
				break
			}
			p.Reason = fmt.Sprintf("%s; but the loss has lasted %s, longer than the %s limit, so it is taken as real",
				reason, now.Sub(since).Round(time.Second), r.cfg.MaxProtection)
			p.Since = since
			break
		}
		p.Since = time.Time{}
	}
	if !p.Active && p.Reason == "" {
		p.Since = time.Time{}
	}
	changed := p.Active != r.protection.Active
	if changed {
		if p.Active {
			r.log.Warn("self-preservation engaged: expired instances are kept", "reason", p.Reason, "expired", p.Expired, "instances", p.Instances)
		} else {
			r.log.Info("self-preservation left", "reason", p.Reason, "expired", p.Expired, "instances", p.Instances)
		}
	}
	if changed && !p.Active && p.Reason == "" {
		p.Reason = "renewals recovered: no lease has expired"
		if p.Expired > 0 {
			p.Reason = fmt.Sprintf("%d of %d instances expired, no longer a mass loss: evicting them on time", p.Expired, p.Instances)
		}
	}
	r.protection = p
	return evict, changed, p
}

// massLoss returns why the silent leases look like this registry's own
// isolation, or "" when they look like real failures to evict on time: a
// few instances, or losses confined to one rack or one application.
func (r *Registry) massLoss(v lossView) string {
	silent := v.silent
	if silent < 2 || v.total == 0 {
		return ""
	}
	frac := float64(silent) / float64(v.total)
	if r.peers.total > 0 && r.peers.reachable == 0 && frac >= r.cfg.MassLossFraction/2 {
		return fmt.Sprintf("%d of %d instances (%.0f%%) stopped renewing and this peer reaches none of its %d peers",
			silent, v.total, 100*frac, r.peers.total)
	}
	if frac < r.cfg.MassLossFraction {
		return ""
	}
	rackInfo, rackSpread := v.byRack.informative(), v.byRack.wide()
	appInfo, appSpread := v.byApp.informative(), v.byApp.wide()
	if !rackInfo && !appInfo {
		return "" // one rack, one app: nothing says the registry is the one cut off
	}
	if (rackInfo && !rackSpread) || (appInfo && !appSpread) {
		return "" // confined to one failure domain
	}
	return fmt.Sprintf("%d of %d instances (%.0f%%) stopped renewing at once, across %d racks and %d applications",
		silent, v.total, 100*frac, v.byRack.hit, v.byApp.hit)
}

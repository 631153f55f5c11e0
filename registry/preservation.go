package registry

import "time"

// rollWindow closes the one-minute renewal window when it has run its
// course, as Eureka's MeasuredRate does, and re-evaluates protection.
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
	r.renewsLastMin = n
	r.windowStart = now
}

func (r *Registry) renewsLastMinute() int64 {
	r.spMu.Lock()
	defer r.spMu.Unlock()
	return r.renewsLastMin
}

// threshold is Eureka's numberOfRenewsPerMinThreshold, with the expected
// number of renewing clients taken as the number registered now (what
// Eureka's own bookkeeping converges to).
func (r *Registry) threshold() int64 {
	r.mu.RLock()
	n := 0
	for _, a := range r.apps {
		n += len(a.leases)
	}
	r.mu.RUnlock()
	perMin := float64(time.Minute) / float64(r.cfg.ExpectedClientRenewalInterval)
	return int64(float64(n) * perMin * r.cfg.RenewalPercentThreshold)
}

// isProtecting reports whether eviction is suspended, and logs when that
// changes.
func (r *Registry) isProtecting() bool {
	if r.cfg.SelfPreservation != ModeEureka {
		return false
	}
	th := r.threshold()
	last := r.renewsLastMinute()
	on := !(th > 0 && last > th)
	r.spMu.Lock()
	changed := on != r.protecting
	r.protecting = on
	r.spMu.Unlock()
	if changed {
		if on {
			r.log.Warn("self-preservation engaged: renewals in the last minute are at or below the threshold; expired instances are kept",
				"renews_last_min", last, "threshold", th)
		} else {
			r.log.Info("self-preservation left: renewals recovered", "renews_last_min", last, "threshold", th)
		}
	}
	return on
}

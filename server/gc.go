package server

import (
	"context"
	"log/slog"
	"time"
)

// A refill after a restart is a registration storm into an empty process:
// the live heap grows from nothing to the whole registry in one renewal
// period, and at the GC target the command sets for a settled registry
// (GOGC=50) the collector runs every few megabytes of it, marking a heap
// that is still growing. While the registry reports a storm
// (registry.Storming), the collector may let the heap grow further; once
// the storm is over the target goes back, and the heap and the memory the
// runtime keeps shrink back to it.

// stormCheck is how often the storm is looked at: the registry decides it
// once a tick, every second.
const stormCheck = time.Second

// stormCalmChecks is how many checks in a row must find no storm before
// the target goes back: a refill's rate dips under the storm rate for a
// tick now and then (a collection, a burst of 404s) while its backlog is
// still there.
const stormCalmChecks = 3

// collectLessInStorms sets the collector's target to percent while
// storming reports a storm, looked at every period, and puts back the
// target it replaced once calm checks in a row have found no storm, and
// when ctx ends. set is
// debug.SetGCPercent: it sets a target and returns the one it replaced.
func collectLessInStorms(ctx context.Context, storming func() bool, percent int, every time.Duration, calm int, set func(int) int, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	prev, raised, calmed := 0, false, 0
	defer func() {
		if raised {
			set(prev)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if storming() {
			calmed = 0
			if !raised {
				prev, raised = set(percent), true
				log.Info("registration storm: the collector lets the heap grow further until it passes", "gc_percent", percent, "was", prev)
			}
			continue
		}
		if calmed++; raised && calmed >= calm {
			set(prev)
			raised = false
			log.Info("registration storm over: the collector's target is back", "gc_percent", prev)
		}
	}
}

package main

import (
	"fmt"
	"time"
)

// plan is what one run measures and how big. DefaultPlan gives the three
// modes; every loop below is bounded by these counts and durations.
type plan struct {
	Mode string // "full", "quick" or "tiny"

	Peers bool // run etcd and ZooKeeper beside heureka

	// Workload 1: registration storm.
	StormN     []int
	StormLimit time.Duration // a storm that takes longer is cut and reported as such
	Workers    int           // concurrent writers
	PerApp     int           // instances per application
	ZKSessions int           // ZooKeeper sessions shared by the writers

	// Workload 2: steady state.
	SteadyN      []int
	SteadyWindow time.Duration // measured window
	SteadyWarm   time.Duration // heartbeats run this long before the window
	Readers      int           // consumers of the whole registry
	SteadyStock  bool          // also run the stock Eureka configuration (30 s renewals)

	// Workload 3: propagation.
	Watchers []int
	Rounds   int // changes per watcher count

	// Workload 4: failure scenarios.
	Failure      bool
	Observers    int  // clients per configuration whose views are timed
	Reps         int  // repetitions of each fast scenario
	SlowScenario bool // silent host loss with stock timers (90 s lease)
	FailureLimit time.Duration
}

// DefaultPlan returns the plan for mode: full (issue 7's sizes, ≤ 30 min on
// 2 cores), quick (≤ 5 min) or tiny (the test's smoke run, heureka only).
func DefaultPlan(mode string) (plan, error) {
	switch mode {
	case "full":
		return plan{
			Mode: mode, Peers: true,
			StormN: []int{10_000, 100_000}, StormLimit: 3 * time.Minute, Workers: 64, PerApp: 1000, ZKSessions: 64,
			SteadyN: []int{10_000, 100_000}, SteadyWindow: 30 * time.Second, SteadyWarm: 10 * time.Second, Readers: 8, SteadyStock: true,
			Watchers: []int{1000, 5000}, Rounds: 20,
			Failure: true, Observers: 50, Reps: 5, SlowScenario: true, FailureLimit: 10 * time.Minute,
		}, nil
	case "quick":
		return plan{
			Mode: mode, Peers: true,
			StormN: []int{10_000}, StormLimit: time.Minute, Workers: 64, PerApp: 1000, ZKSessions: 64,
			SteadyN: []int{10_000}, SteadyWindow: 10 * time.Second, SteadyWarm: 2 * time.Second, Readers: 8,
			Watchers: []int{1000, 5000}, Rounds: 5,
			Failure: true, Observers: 20, Reps: 2, FailureLimit: 100 * time.Second,
		}, nil
	case "tiny":
		return plan{
			Mode:   mode,
			StormN: []int{200}, StormLimit: 20 * time.Second, Workers: 16, PerApp: 100, ZKSessions: 4,
			SteadyN: []int{200}, SteadyWindow: 2 * time.Second, SteadyWarm: time.Second, Readers: 2,
			Watchers: []int{20}, Rounds: 3,
			Failure: true, Observers: 3, Reps: 1, FailureLimit: 30 * time.Second,
		}, nil
	}
	return plan{}, fmt.Errorf("mode %q is not one of full, quick, tiny", mode)
}

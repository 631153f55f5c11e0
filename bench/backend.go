package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry/registrytest"
)

// backend drives one registry system through the workloads. Every method
// is safe for concurrent use.
type backend interface {
	// register adds in. worker is the caller's index in [0, workers), so a
	// backend can pin workers to connections or sessions.
	register(ctx context.Context, worker int, in *heureka.Instance) error
	// update rewrites a registered instance (new status or metadata), the
	// way its agent would report a change.
	update(ctx context.Context, in *heureka.Instance) error
	// renewAll keeps ins alive, each once per period, spread evenly over
	// the period, until ctx ends; it returns when ctx ends.
	renewAll(ctx context.Context, ins []*heureka.Instance, period time.Duration, st *renewStats)
	// consumer starts one client that reads apps and follows their
	// changes into v, the way the system's own clients do; it returns once
	// the first full read is in v. stop releases it.
	consumer(ctx context.Context, apps []string, v *view) (stop func(), err error)
	// close releases the backend's own connections.
	close()
}

// renewStats counts heartbeats sent during a steady-state window.
type renewStats struct {
	sent, failed atomic.Int64
	lat          latencies
	late         atomic.Int64 // renewals sent more than a second after they were due
	note         string       // how this system heartbeats, for the report
}

// timers are the lease and client settings of one configuration.
type timers struct {
	Renew time.Duration // heartbeat period
	Lease time.Duration // lease / TTL / session timeout
	Poll  time.Duration // polling clients' interval; 0 = clients watch
}

// instanceFor builds the i-th synthetic DataNode of app, shaped like the
// agent's registrations.
func instanceFor(app string, i int, t timers) *heureka.Instance {
	return registrytest.AgentDataNode(app, i, registrytest.Shape{
		Domain: "bench.invalid", Loopback: true,
		Renew: t.Renew, Lease: t.Lease, LastDirty: time.Now().UnixMilli(),
	})
}

// population is n instances spread over apps of at most perApp each
// (HDFS-DATANODE.C000, …), as a registry per role holds several clusters.
func population(n, perApp int, t timers) []*heureka.Instance {
	out := make([]*heureka.Instance, n)
	for i := range n {
		out[i] = instanceFor(appName(i/perApp), i, t)
	}
	return out
}

func appName(k int) string { return "HDFS-DATANODE.C" + fmt.Sprintf("%03d", k) }

// appsOf lists the distinct applications of ins, in order.
func appsOf(ins []*heureka.Instance) []string {
	var apps []string
	seen := map[string]bool{}
	for _, in := range ins {
		if !seen[in.App] {
			seen[in.App] = true
			apps = append(apps, in.App)
		}
	}
	return apps
}

// withRound returns a copy of in carrying round in its metadata: the
// "one change" the propagation workload sends.
func withRound(in *heureka.Instance, round int) *heureka.Instance {
	c := in.Clone()
	c.Metadata = c.Metadata.With("bench_round", strconv.Itoa(round))
	c.LastDirtyTimestamp = time.Now().UnixMilli()
	return c
}

func roundOf(in *heureka.Instance) int {
	if in == nil {
		return -1
	}
	n, err := strconv.Atoi(in.Metadata.Get("bench_round"))
	if err != nil {
		return -1
	}
	return n
}

// pace calls fn(i) for every index in [0, n) once per period, evenly
// spread, from a pool of workers, until ctx ends. Lateness beyond a second
// is counted in late.
func pace(ctx context.Context, n int, period time.Duration, workers int, late *atomic.Int64, fn func(i int)) {
	if n == 0 {
		<-ctx.Done()
		return
	}
	jobs := make(chan int, workers)
	done := make(chan struct{})
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range jobs {
				fn(i)
			}
		}()
	}
	start := time.Now()
	step := period / time.Duration(n)
loop:
	for k := 0; ; k++ {
		for i := range n {
			due := start.Add(time.Duration(k)*period + time.Duration(i)*step)
			if d := time.Until(due); d > time.Millisecond {
				select {
				case <-ctx.Done():
					break loop
				case <-time.After(d):
				}
			} else if d < -time.Second {
				late.Add(1)
			}
			select {
			case <-ctx.Done():
				break loop
			case jobs <- i:
			}
		}
	}
	close(jobs)
	for range workers {
		<-done
	}
}

// lastRegistration remembers what a backend last registered, for
// SetStatus: etcd and ZooKeeper keep no status of their own, so a status
// change writes the record again.
type lastRegistration struct {
	mu sync.Mutex
	in *heureka.Instance
}

func (l *lastRegistration) set(in *heureka.Instance) {
	l.mu.Lock()
	l.in = in.Clone()
	l.mu.Unlock()
}

// setStatus registers the last registration again with status as both its
// status and its override.
func (l *lastRegistration) setStatus(ctx context.Context, status heureka.Status, register func(context.Context, *heureka.Instance) error) error {
	l.mu.Lock()
	in := l.in
	l.mu.Unlock()
	if in == nil {
		return heureka.Errorf(heureka.ENOTFOUND, "not registered")
	}
	in = in.Clone()
	in.Status, in.OverriddenStatus = status, status
	return register(ctx, in)
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// heurekaBackend talks to one heureka server through the client package,
// the way agents and Go services do: Eureka REST for writes, a Cache that
// polls (/apps/delta) or watches (/v1/watch) for reads.
type heurekaBackend struct {
	base  string // http://HOST:PORT/eureka
	c     *client.Client
	tr    *http.Transport
	poll  time.Duration // 0 = consumers watch
	quiet *slog.Logger
}

func newHeurekaBackend(addr string, workers int, poll time.Duration) (*heurekaBackend, error) {
	b := &heurekaBackend{base: "http://" + addr + "/eureka", poll: poll, quiet: slog.New(slog.DiscardHandler)}
	b.tr = newTransport(workers)
	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Transport, ccfg.Logger, ccfg.Rounds = []string{b.base}, b.tr, b.quiet, 1
	c, err := client.New(ccfg)
	if err != nil {
		return nil, err
	}
	b.c = c
	return b, nil
}

// newTransport keeps one idle connection per worker: writers that share a
// host must not churn through connections (and TIME_WAIT ports).
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
	}
}

func (b *heurekaBackend) register(ctx context.Context, _ int, in *heureka.Instance) error {
	return b.c.Register(ctx, in)
}

// update registers again with the new record: that is how Eureka clients,
// heureka's agent included, report a change of their own.
func (b *heurekaBackend) update(ctx context.Context, in *heureka.Instance) error {
	return b.c.Register(ctx, in)
}

func (b *heurekaBackend) renewAll(ctx context.Context, ins []*heureka.Instance, period time.Duration, st *renewStats) {
	st.note = "one `PUT /eureka/apps/{APP}/{ID}` per instance per period, evenly spread, 128 keep-alive connections"
	pace(ctx, len(ins), period, 128, &st.late, func(i int) {
		t := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := b.c.Renew(rctx, ins[i].App, ins[i].ID)
		cancel()
		if ctx.Err() != nil {
			return
		}
		st.sent.Add(1)
		if err != nil {
			st.failed.Add(1)
			return
		}
		st.lat.add(time.Since(t))
	})
}

// consumer is one client.Cache of its own (own client, own connections),
// watching or polling every b.poll, restricted to apps.
func (b *heurekaBackend) consumer(ctx context.Context, apps []string, v *view) (func(), error) {
	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Transport, ccfg.Logger = []string{b.base}, newTransport(2), b.quiet
	c, err := client.New(ccfg)
	if err != nil {
		return nil, err
	}
	cfg := client.DefaultCacheConfig()
	cfg.Apps, cfg.DisableWatch, cfg.AllowEmpty, cfg.Logger = apps, b.poll > 0, true, b.quiet
	if b.poll > 0 {
		cfg.PollInterval = b.poll
		cfg.RetryMax = max(cfg.RetryMax, b.poll)
	}
	cache, err := client.NewCache(c, cfg)
	if err != nil {
		return nil, err
	}
	// The view follows the listener only: notifications arrive in
	// publication order, so the view never goes back to an older state.
	var applied atomic.Uint64
	cache.OnChange(func(_, snap *client.Snapshot, changes []client.Change) {
		for _, ch := range changes {
			v.put(ch.App, ch.ID, ch.New)
		}
		applied.Store(snap.Seq())
	})
	if err := cache.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	stop := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = cache.Close(cctx)
		_ = c.Close()
	}
	// Bounded: a cache that cannot read the registry (it once could not
	// read 100k instances) must fail the workload, not stall the run.
	select {
	case <-cache.Synced():
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	case <-time.After(3 * time.Minute):
		stop()
		return nil, fmt.Errorf("the cache did not complete its first read of the registry within 3 minutes: %v", cache.Status())
	}
	// Return once the listener has applied the first full read.
	want := cache.Snapshot().Seq()
	for applied.Load() < want && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	return stop, nil
}

func (b *heurekaBackend) close() {
	_ = b.c.Close()
	b.tr.CloseIdleConnections()
}

// heurekaModes names the three heureka configurations of issue 7.
type heurekaConfig struct {
	name             string
	selfPreservation string
	t                timers
}

var (
	heurekaStock = heurekaConfig{"heureka, stock Eureka timers", "eureka",
		timers{Renew: 30 * time.Second, Lease: 90 * time.Second, Poll: 30 * time.Second}}
	heurekaTuned = heurekaConfig{"heureka, field-tuned", "off",
		timers{Renew: 10 * time.Second, Lease: 30 * time.Second, Poll: 5 * time.Second}}
	heurekaWatch = heurekaConfig{"heureka, defaults + watch", "smart",
		timers{Renew: 10 * time.Second, Lease: 30 * time.Second}}
	// The peers run with the equivalent of heureka's defaults: a 30 s
	// lease (etcd TTL, ZooKeeper session timeout) kept alive every 10 s.
	peerTimers = timers{Renew: 10 * time.Second, Lease: 30 * time.Second}
)

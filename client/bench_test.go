package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// benchCache is a synced cache over 100 applications of 10 instances.
func benchCache(b *testing.B) *client.Cache {
	b.Helper()
	srv := startServer(b)
	for a := range 100 {
		for i := range 10 {
			srv.register(b, fmt.Sprintf("APP-%03d", a), fmt.Sprintf("i-%02d", i), heureka.StatusUp)
		}
	}
	cfg := pollingCache()
	cfg.PollInterval = time.Hour // no background work while measuring
	cfg.RetryMax = time.Hour
	cache := startCache(b, newClient(b, srv.URL), cfg)
	waitSynced(b, cache)
	if cache.Snapshot().Len() != 1000 {
		b.Fatalf("cache holds %d instances", cache.Snapshot().Len())
	}
	return cache
}

// BenchmarkSnapshotRead is the read path: loading the snapshot, then
// looking up an application's instances and one instance in it. None of it
// may allocate.
func BenchmarkSnapshotRead(b *testing.B) {
	cache := benchCache(b)
	b.Run("Snapshot", func(b *testing.B) {
		b.ReportAllocs()
		var s *client.Snapshot
		for b.Loop() {
			s = cache.Snapshot()
		}
		if s.Len() == 0 {
			b.Fatal("empty")
		}
	})
	b.Run("Instances", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n += len(cache.Snapshot().Instances("APP-050"))
		}
		if n == 0 {
			b.Fatal("nothing read")
		}
	})
	b.Run("Instance", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if _, ok := cache.Snapshot().Instance("APP-050", "i-05"); ok {
				n++
			}
		}
		if n == 0 {
			b.Fatal("nothing read")
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = cache.Instances("APP-050")
			}
		})
	})
}

func TestSnapshotReadDoesNotAllocate(t *testing.T) {
	srv := startServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	cache := startCache(t, newClient(t, srv.URL), pollingCache())
	waitSynced(t, cache)
	allocs := testing.AllocsPerRun(1000, func() {
		s := cache.Snapshot()
		_ = s.Instances("ORDERS")
		_, _ = s.Instance("ORDERS", "o1")
		_ = cache.Instances("ORDERS")
		_ = cache.Apps()
	})
	if allocs != 0 {
		t.Errorf("the read path allocates %.1f times per read", allocs)
	}
}

package cluster_test

import (
	"context"
	"testing"
	"time"

	hclient "github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/proctest"
)

// TestClientReadsALargeRegistry fills a real server with 100k instances
// and has the Go discovery client's cache read them all: a registry that
// size is ~90 MiB of JSON, more than the client once accepted.
func TestClientReadsALargeRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("registers 100k instances")
	}
	p := startProc(t, "large", proctest.FreeAddr(t, "127.0.0.2"), "--log-level", "info")
	const n = 100_000
	registerMany(t, p, n)
	cfg := hclient.DefaultConfig()
	cfg.URLs = []string{p.url()}
	c, err := hclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cache, err := hclient.NewCache(c, hclient.DefaultCacheConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cache.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer cache.Close(context.Background())
	select {
	case <-cache.Synced():
	case <-ctx.Done():
		t.Fatalf("the cache did not read the registry: %+v", cache.Status())
	}
	if got := cache.Snapshot().Len(); got != n {
		t.Fatalf("the cache holds %d instances, want %d", got, n)
	}
}

package cluster_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
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
	// A listing read right after a bulk write may be served the last
	// snapshot whose blocks were all encoded (at most 30 s behind, as
	// Eureka's response cache is) while the encoder catches up; the test
	// is about the client reading all of it, so it starts once the
	// server's listing holds every instance.
	proctest.Eventually(t, time.Minute, "the server's listing to hold every instance", func() bool {
		return bytes.Contains(listingHead(t, p), []byte(`"apps__hashcode":"UP_100000_"`))
	})
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

// listingHead returns the first bytes of the server's full JSON listing,
// which hold its hash code, fetched gzipped and not read further.
func listingHead(t *testing.T, p *proc) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.url()+"/apps/", nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatalf("GET %s/apps/: %v", p.url(), err)
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatalf("GET %s/apps/: not gzip: %v", p.url(), err)
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(zr, head)
	return head[:n]
}

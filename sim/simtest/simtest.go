// Package simtest opens simulated clusters (sim.Cluster) for tests, as
// net/http/httptest does servers: on loopback, closed when the test ends.
//
// Every function may be called from parallel tests.
package simtest

import (
	"context"
	"testing"
	"time"

	"github.com/heureka-project/heureka/sim"
)

// Open opens a simulated cluster of system (a sim.System constant) with
// sim.DefaultClusterConfig changed by mod (which may be nil), and closes
// it when the test ends.
func Open(t testing.TB, system string, mod func(*sim.ClusterConfig)) *sim.Cluster {
	t.Helper()
	cfg := sim.DefaultClusterConfig(system)
	if mod != nil {
		mod(&cfg)
	}
	c, err := sim.NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("closing the simulated %s cluster: %v", system, err)
		}
	})
	return c
}

// Addr is member's address: host:port of its web port, AdminServer or
// broker.
func Addr(t testing.TB, c *sim.Cluster, member string) string {
	t.Helper()
	m, ok := c.Member(member)
	if !ok {
		t.Fatalf("the simulated cluster has no member %s", member)
	}
	return m.Addr
}

// URL is member's base URL, "http://" and its Addr.
func URL(t testing.TB, c *sim.Cluster, member string) string {
	t.Helper()
	return "http://" + Addr(t, c, member)
}

package zookeeperrole

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
	"github.com/heureka-project/heureka/zookeeper"
	"github.com/heureka-project/heureka/zookeeper/zktest"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func openSim(t *testing.T, id string) *sim.Cluster {
	return simtest.Open(t, sim.SystemZooKeeper, func(c *sim.ClusterConfig) { c.ClusterID = id })
}

func newRole(t *testing.T, url, ensemble string) *Role {
	t.Helper()
	cfg := DefaultConfig()
	cfg.URL, cfg.Ensemble = url, ensemble
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRoleAgainstSim: leader and followers, the leader's death and the
// election, the loss of quorum, figures, a pause, another ensemble.
func TestRoleAgainstSim(t *testing.T) {
	c := openSim(t, "zk-prod")
	ens := c.State().Ensemble
	role := func(name string) *Role {
		m, _ := c.Member(name)
		return newRole(t, "http://"+m.Addr, ens)
	}
	zk1, zk2, zk3 := role("zk1"), role("zk2"), role("zk3")
	state := func(r *Role) string {
		t.Helper()
		h, err := r.Probe(ctxFor(t, 5*time.Second))
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
		return h.State + h.Unhealthy
	}
	if got := state(zk1) + "," + state(zk3); got != "follower,leader" {
		t.Errorf("at start: %s", got)
	}
	f, err := zk3.Collect(ctxFor(t, 5*time.Second))
	if err != nil || f.Port != 2181 || f.Metadata.Get(heureka.MetaVersion) != "3.8.4" || f.Metadata.Get(zookeeper.MetaZnodeCount) != "5" || !f.Metadata.Has(heureka.MetaHTTPPort) {
		t.Errorf("Collect: %+v, %v", f, err)
	}
	if zk3.Material(f, agent.Figures{Port: f.Port, Metadata: f.Metadata.With(zookeeper.MetaOutstandingRequests, "900")}) ||
		!zk3.Material(f, agent.Figures{Port: f.Port, Metadata: f.Metadata.With(heureka.MetaVersion, "3.9.3")}) {
		t.Error("Material: a queue is not, a version is")
	}
	if err := c.Stop("zk3"); err != nil {
		t.Fatal(err)
	}
	if _, err := zk3.Probe(ctxFor(t, 2*time.Second)); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("stopped: %v", err)
	}
	if got := state(zk2); got != "leader" {
		t.Errorf("after the leader died: %s", got)
	}
	if err := c.Stop("zk2"); err != nil {
		t.Fatal(err)
	}
	if h, err := zk1.Probe(ctxFor(t, 5*time.Second)); err != nil || h.State != "not-serving" || !strings.Contains(h.Unhealthy, "not serving") {
		t.Errorf("no quorum: %+v, %v", h, err)
	}
	if err := c.Pause("zk1"); err != nil {
		t.Fatal(err)
	}
	if _, err := zk1.Probe(ctxFor(t, 300*time.Millisecond)); !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("paused: %v", err)
	}
	other := openSim(t, "zk-other")
	m, _ := other.Member("zk1")
	h, err := newRole(t, "http://"+m.Addr, ens).Probe(ctxFor(t, 5*time.Second))
	if err != nil || h.State != "" || !strings.Contains(h.Unhealthy, "zk-other") || !strings.Contains(h.Unhealthy, "zk-prod") {
		t.Errorf("another ensemble: %+v, %v", h, err)
	}
}

// TestRealStandalone probes a real ZooKeeper server: standalone, paused
// with SIGSTOP (no answer), killed (refused).
func TestRealStandalone(t *testing.T) {
	s := zktest.StartStandalone(t)
	r := newRole(t, s.AdminURL, "")
	h, err := r.Probe(ctxFor(t, 5*time.Second))
	if err != nil || h.State != "standalone" || h.Unhealthy != "" {
		t.Fatalf("probe: %+v, %v", h, err)
	}
	f, err := r.Collect(ctxFor(t, 5*time.Second))
	if err != nil || !strings.HasPrefix(f.Metadata.Get(heureka.MetaVersion), "3.") {
		t.Errorf("Collect: %+v, %v", f, err)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	_, err = r.Probe(ctxFor(t, 800*time.Millisecond))
	if rerr := s.Resume(); rerr != nil {
		t.Fatal(rerr)
	}
	if !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("paused: %v", err)
	}
	if h, err := r.Probe(ctxFor(t, 5*time.Second)); err != nil || h.State != "standalone" {
		t.Errorf("resumed: %+v, %v", h, err)
	}
	s.Kill()
	if _, err := r.Probe(ctxFor(t, 2*time.Second)); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("killed: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{URL: "zk1:8080", Port: 2181},
		{URL: "http://zk1:8080", Port: 0},
		{URL: "http://zk1:8080", Port: 2181, Ensemble: "1=zk1"},
	} {
		if _, err := New(c); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
}

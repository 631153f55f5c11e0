package yarnrole

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
)

func openSim(t *testing.T, clusterID string) *sim.Cluster {
	return simtest.Open(t, sim.SystemYARN, func(c *sim.ClusterConfig) { c.ClusterID = clusterID })
}

func newRole(t *testing.T, c *sim.Cluster, member, clusterID string) *Role {
	t.Helper()
	m, _ := c.Member(member)
	cfg := DefaultConfig()
	cfg.URL, cfg.ClusterID = "http://"+m.Addr, clusterID
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func probe(t *testing.T, r *Role, d time.Duration) (agent.Health, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return r.Probe(ctx)
}

// TestRoleAgainstSim reads a simulated HA pair through a failover, a lost
// ZooKeeper connection, a pause and a death.
func TestRoleAgainstSim(t *testing.T) {
	c := openSim(t, "yarn-prod")
	rm1, rm2 := newRole(t, c, "rm1", "yarn-prod"), newRole(t, c, "rm2", "yarn-prod")
	state := func(r *Role) string {
		t.Helper()
		h, err := probe(t, r, 5*time.Second)
		if err != nil || h.Unhealthy != "" {
			t.Fatalf("probe: %+v, %v", h, err)
		}
		return h.State
	}
	if s1, s2 := state(rm1), state(rm2); s1 != "active" || s2 != "standby" {
		t.Errorf("at start: %s, %s", s1, s2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	figs, err := rm1.Collect(ctx)
	m, _ := c.Member("rm1")
	port := m.Addr[strings.LastIndexByte(m.Addr, ':')+1:]
	if err != nil || figs.Port != 8032 || figs.Metadata.Get(heureka.MetaVersion) != "3.3.6" || figs.Metadata.Get(heureka.MetaHTTPPort) != port {
		t.Errorf("Collect: %+v, %v", figs, err)
	}
	if st := rm1.Static(); st.Port != 8032 || st.Metadata.Get(heureka.MetaHTTPPort) != port || st.Metadata.Has(heureka.MetaVersion) {
		t.Errorf("Static: %+v", st)
	}
	if !rm1.Material(rm1.Static(), figs) || rm1.Material(figs, figs) {
		t.Error("Material: a new version is material, no change is not")
	}

	if err := c.SetState("rm2", "active"); err != nil {
		t.Fatal(err)
	}
	if s1, s2 := state(rm1), state(rm2); s1 != "standby" || s2 != "active" {
		t.Errorf("after the failover: %s, %s", s1, s2)
	}
	if err := c.Set("rm2", "zk", "lost"); err != nil {
		t.Fatal(err)
	}
	if h, err := probe(t, rm2, 5*time.Second); err != nil || h.State != "active" || !strings.Contains(h.Unhealthy, "lost its ZooKeeper connection") {
		t.Errorf("ZooKeeper lost: %+v, %v", h, err)
	}
	if err := c.Pause("rm1"); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(t, rm1, 300*time.Millisecond); !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("paused: %v", err)
	}
	if err := c.Stop("rm1"); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(t, rm1, 2*time.Second); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("stopped: %v", err)
	}
}

// TestForeignCluster: an RM of another cluster answers unhealthy, naming
// both ids, without its role state, and Collect refuses it.
func TestForeignCluster(t *testing.T) {
	c := openSim(t, "yarn-other")
	r := newRole(t, c, "rm1", "yarn-prod")
	h, err := probe(t, r, 5*time.Second)
	if err != nil || h.State != "" || !strings.Contains(h.Unhealthy, `belongs to cluster "yarn-other"`) || !strings.Contains(h.Unhealthy, `not "yarn-prod"`) {
		t.Errorf("Probe: %+v, %v", h, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.Collect(ctx); heureka.ErrorCode(err) != heureka.ECONFLICT {
		t.Errorf("Collect: %v", err)
	}
}

// TestBadAnswers: garbage and a slow answer are failures the agent tells
// apart (a failed probe, a pause), never a state.
func TestBadAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>a proxy's login page</html>"))
	}))
	defer srv.Close()
	r, err := New(Config{URL: srv.URL, Port: 8032})
	if err != nil {
		t.Fatal(err)
	}
	h, err := probe(t, r, 5*time.Second)
	if err == nil || errors.Is(err, agent.ErrRefused) || errors.Is(err, agent.ErrNoAnswer) || !strings.Contains(err.Error(), "not the cluster-info JSON") || h.State != "" {
		t.Errorf("garbage: %+v, %v", h, err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	r, _ = New(Config{URL: slow.URL, Port: 8032})
	if _, err := probe(t, r, 200*time.Millisecond); !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("slow: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{URL: "rm1:8088", Port: 8032},
		{URL: "http://rm1:8088", Port: 0},
		{URL: "http://rm1:8088", Port: 8032, ClusterID: "a\nb"},
	} {
		if _, err := New(c); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
	if d := DefaultConfig(); d.Port != 8032 {
		t.Errorf("DefaultConfig: %+v", d)
	}
}

package hbaserole

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
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
)

func openSim(t *testing.T, clusterID string) *sim.Cluster {
	return simtest.Open(t, sim.SystemHBase, func(c *sim.ClusterConfig) { c.ClusterID = clusterID })
}

func addr(t *testing.T, c *sim.Cluster, member string) string {
	t.Helper()
	m, ok := c.Member(member)
	if !ok {
		t.Fatalf("no %s", member)
	}
	return "http://" + m.Addr
}

func newRole(t *testing.T, cfg Config) *Role {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func probe(r *Role, d time.Duration) (agent.Health, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return r.Probe(ctx)
}

func collect(t *testing.T, r *Role) agent.Figures {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := r.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

const id = "5d9d9b3e-6a63-4c49-bd8e-0e5f3c7a9f10"

// TestMasters: the active master and the backup, and the handover.
func TestMasters(t *testing.T) {
	c := openSim(t, id)
	cfg := DefaultConfig()
	cfg.Role, cfg.ClusterID = hbase.MasterRoleName, id
	cfg.URL = addr(t, c, "master1")
	m1 := newRole(t, cfg)
	cfg.URL = addr(t, c, "master2")
	m2 := newRole(t, cfg)
	states := func() string {
		t.Helper()
		h1, err1 := probe(m1, 5*time.Second)
		h2, err2 := probe(m2, 5*time.Second)
		if err1 != nil || err2 != nil || h1.Unhealthy != "" || h2.Unhealthy != "" {
			t.Fatalf("probes: %+v %v, %+v %v", h1, err1, h2, err2)
		}
		return h1.State + "," + h2.State
	}
	if got := states(); got != "active,backup" {
		t.Errorf("at start: %s", got)
	}
	f := collect(t, m1)
	if f.Port != 16000 || !strings.HasPrefix(f.Metadata.Get(hbase.MetaServerName), "master1.") ||
		f.Metadata.Get(hbase.MetaRegionServers) != "3" || f.Metadata.Get(hbase.MetaDeadRegionServers) != "0" ||
		!f.Metadata.Has(heureka.MetaHTTPPort) || f.Metadata.Has(heureka.MetaVersion) {
		t.Errorf("the active master's figures: %+v", f)
	}
	if f2 := collect(t, m2); f2.Metadata.Has(hbase.MetaRegionServers) {
		t.Errorf("a backup has RegionServer figures: %+v", f2)
	}
	if err := c.Stop("rs3"); err != nil {
		t.Fatal(err)
	}
	if f2 := collect(t, m1); !m1.Material(f, f2) || f2.Metadata.Get(hbase.MetaDeadRegionServers) != "1" {
		t.Errorf("a RegionServer's death is material to the master's figures: %+v", f2)
	}
	if err := c.SetState("master2", "active"); err != nil {
		t.Fatal(err)
	}
	if got := states(); got != "backup,active" {
		t.Errorf("after the handover: %s", got)
	}
	if err := c.Stop("master2"); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(m2, 2*time.Second); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("a stopped master: %v", err)
	}
	if h, err := probe(m1, 5*time.Second); err != nil || h.State != "active" {
		t.Errorf("master1 after master2 died: %+v %v", h, err)
	}
}

// TestRegionServer: serving; counted dead by the active master (a
// zombie); paused; stopped.
func TestRegionServer(t *testing.T) {
	c := openSim(t, id)
	cfg := DefaultConfig()
	cfg.Role, cfg.ClusterID, cfg.URL = hbase.RegionServerRoleName, id, addr(t, c, "rs1")
	cfg.MasterURLs = []string{addr(t, c, "master2"), addr(t, c, "master1")}
	cfg.MasterCheckInterval = time.Nanosecond
	rs := newRole(t, cfg)
	h, err := probe(rs, 5*time.Second)
	if err != nil || h.State != "serving" || h.Unhealthy != "" {
		t.Fatalf("at start: %+v %v", h, err)
	}
	f := collect(t, rs)
	if f.Port != 16020 || f.Metadata.Get(hbase.MetaRegionCount) != "14" || f.Metadata.Get(hbase.MetaStoreFileCount) != "42" {
		t.Errorf("figures: %+v", f)
	}
	if err := c.Set("rs1", "regions", "20"); err != nil {
		t.Fatal(err)
	}
	if f2 := collect(t, rs); rs.Material(f, f2) || f2.Metadata.Get(hbase.MetaRegionCount) != "20" {
		t.Errorf("regions drift, not material: %+v", f2)
	}
	if err := c.SetState("rs1", "dead"); err != nil {
		t.Fatal(err)
	}
	if h, err := probe(rs, 5*time.Second); err != nil || h.State != "serving" || !strings.Contains(h.Unhealthy, "counts regionserver rs1.") {
		t.Errorf("a zombie: %+v %v", h, err)
	}
	// Without the masters' addresses the check is skipped.
	bare := cfg
	bare.MasterURLs = nil
	if h, err := probe(newRole(t, bare), 5*time.Second); err != nil || h.Unhealthy != "" {
		t.Errorf("no masters to ask: %+v %v", h, err)
	}
	// The view is kept for MasterCheckInterval.
	slow := cfg
	slow.MasterCheckInterval = time.Hour
	cached := newRole(t, slow)
	if h, _ := probe(cached, 5*time.Second); h.Unhealthy == "" {
		t.Error("the first probe did not ask the masters")
	}
	if err := c.SetState("rs1", "serving"); err != nil {
		t.Fatal(err)
	}
	if h, _ := probe(cached, 5*time.Second); h.Unhealthy == "" {
		t.Error("the masters were asked again within MasterCheckInterval")
	}
	if h, _ := probe(rs, 5*time.Second); h.Unhealthy != "" {
		t.Errorf("serving again: %+v", h)
	}
	if err := c.Pause("rs1"); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(rs, 300*time.Millisecond); !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("paused: %v", err)
	}
	if err := c.Stop("rs1"); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(rs, 2*time.Second); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("stopped: %v", err)
	}
}

// TestForeignAndGarbage: a server of another cluster is unhealthy with
// both ids and no state; a web server that is not HBase fails the probe.
func TestForeignAndGarbage(t *testing.T) {
	c := openSim(t, "another-cluster")
	cfg := DefaultConfig()
	cfg.Role, cfg.ClusterID, cfg.URL = hbase.RegionServerRoleName, id, addr(t, c, "rs1")
	h, err := probe(newRole(t, cfg), 5*time.Second)
	if err != nil || h.State != "" || !strings.Contains(h.Unhealthy, `"another-cluster"`) || !strings.Contains(h.Unhealthy, id) {
		t.Errorf("another cluster: %+v %v", h, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"beans":[{"name":"java.lang:type=Runtime"}]}`))
	}))
	defer srv.Close()
	cfg.URL = srv.URL
	_, err = probe(newRole(t, cfg), 5*time.Second)
	if err == nil || errors.Is(err, agent.ErrRefused) || errors.Is(err, agent.ErrNoAnswer) || !strings.Contains(err.Error(), "no "+hbase.RegionServerBean) {
		t.Errorf("not HBase: %v", err)
	}
}

func TestConfig(t *testing.T) {
	ok := DefaultConfig()
	ok.Role, ok.URL = hbase.MasterRoleName, "http://hm1:16010"
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(*Config){
		func(c *Config) { c.Role = "hbase-thrift" },
		func(c *Config) { c.URL = "hm1:16010" },
		func(c *Config) { c.Port = 70000 },
		func(c *Config) { c.MasterURLs = []string{"hm2"} },
		func(c *Config) { c.MasterCheckInterval = 0 },
	} {
		c := ok
		f(&c)
		if _, err := New(c); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
	if p := rpcPort("rs1.example.net,16020,1718000001001"); p != 16020 {
		t.Errorf("rpcPort: %d", p)
	}
	for _, bad := range []string{"", "rs1", "rs1,x,1", "rs1,70000,1"} {
		if p := rpcPort(bad); p != 0 {
			t.Errorf("rpcPort(%q) = %d", bad, p)
		}
	}
}

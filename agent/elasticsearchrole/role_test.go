package elasticsearchrole

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
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
)

func openSim(t *testing.T, uuid string) *sim.Cluster {
	return simtest.Open(t, sim.SystemElasticsearch, func(c *sim.ClusterConfig) { c.ClusterID = uuid })
}

func newRole(t *testing.T, c *sim.Cluster, member, uuid string) *Role {
	t.Helper()
	m, _ := c.Member(member)
	cfg := DefaultConfig()
	cfg.URL, cfg.ClusterUUID = "http://"+m.Addr, uuid
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

const uuid = "Jx2n5Cw1QCe0c0l3a3bI9w"

// TestRoleAgainstSim: the elected master and the others, the master's
// death and the election, a node that left, a red cluster, a pause, a
// death; the figures and the rack.
func TestRoleAgainstSim(t *testing.T) {
	c := openSim(t, uuid)
	es1, es2 := newRole(t, c, "es1", uuid), newRole(t, c, "es2", uuid)
	state := func(r *Role) string {
		t.Helper()
		h, err := r.Probe(ctxFor(t, 5*time.Second))
		if err != nil || h.Unhealthy != "" {
			t.Fatalf("probe: %+v, %v", h, err)
		}
		return h.State
	}
	if s1, s2 := state(es1), state(es2); s1 != "master" || s2 != "master-eligible" {
		t.Errorf("at start: %s, %s", s1, s2)
	}
	f, err := es1.Collect(ctxFor(t, 5*time.Second))
	m, _ := c.Member("es1")
	port := m.Addr[strings.LastIndexByte(m.Addr, ':')+1:]
	if err != nil || f.Metadata.Get(heureka.MetaVersion) != "8.15.1" || f.Metadata.Get(elasticsearch.MetaNodeName) != "es1" ||
		f.Metadata.Get(elasticsearch.MetaNodeRoles) != "data,ingest,master" || f.Metadata.Get(elasticsearch.MetaTransportPort) != "9300" ||
		f.Metadata.Get(heureka.MetaHTTPPort) != port || f.Metadata.Get(elasticsearch.MetaNodeID) == "" {
		t.Errorf("Collect: %+v, %v", f, err)
	}
	if st := es1.Static(); st.Port != f.Port || st.Metadata.Has(heureka.MetaVersion) {
		t.Errorf("Static %+v against %+v", st, f)
	}
	if rack, err := es2.Rack(ctxFor(t, 5*time.Second)); err != nil || rack != "r2" {
		t.Errorf("Rack: %q, %v", rack, err)
	}
	if err := c.Stop("es1"); err != nil {
		t.Fatal(err)
	}
	if _, err := es1.Probe(ctxFor(t, 2*time.Second)); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("stopped: %v", err)
	}
	if s := state(es2); s != "master" {
		t.Errorf("after the master died: %s", s)
	}
	if err := c.SetState("es3", "left"); err != nil {
		t.Fatal(err)
	}
	es3 := newRole(t, c, "es3", uuid)
	if h, err := es3.Probe(ctxFor(t, 5*time.Second)); err != nil || !strings.Contains(h.Unhealthy, "knows no elected master") {
		t.Errorf("a node that left: %+v, %v", h, err)
	}
	if err := c.Set("es2", "health", "red"); err != nil {
		t.Fatal(err)
	}
	if h, err := es2.Probe(ctxFor(t, 5*time.Second)); err != nil || h.State != "master" || !strings.Contains(h.Unhealthy, "red") {
		t.Errorf("a red cluster: %+v, %v", h, err)
	}
	if err := c.Pause("es2"); err != nil {
		t.Fatal(err)
	}
	if _, err := es2.Probe(ctxFor(t, 300*time.Millisecond)); !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("paused: %v", err)
	}
}

// TestForeignAndGarbage: a node of another cluster is unhealthy with both
// UUIDs and no state; a server that is not Elasticsearch fails the probe.
func TestForeignAndGarbage(t *testing.T) {
	c := openSim(t, "AnotherClusterUUID0000")
	h, err := newRole(t, c, "es1", uuid).Probe(ctxFor(t, 5*time.Second))
	if err != nil || h.State != "" || !strings.Contains(h.Unhealthy, "AnotherClusterUUID0000") || !strings.Contains(h.Unhealthy, uuid) {
		t.Errorf("another cluster: %+v, %v", h, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"nodes":{}}`))
	}))
	defer srv.Close()
	r, err := New(Config{URL: srv.URL, RackAttribute: "rack_id"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Probe(ctxFor(t, 5*time.Second)); err == nil || errors.Is(err, agent.ErrRefused) || errors.Is(err, agent.ErrNoAnswer) || !strings.Contains(err.Error(), "describes 0 nodes") {
		t.Errorf("not a node: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{URL: "es1:9200", RackAttribute: "rack_id"},
		{URL: "http://es1:9200"},
		{URL: "http://es1:9200", RackAttribute: "rack_id", Port: -1},
		{URL: "http://es1:9200", RackAttribute: "rack_id", ClusterUUID: "a b"},
	} {
		if _, err := New(c); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
}

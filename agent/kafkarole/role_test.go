package kafkarole

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
	"github.com/twmb/franz-go/pkg/kfake"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func openSim(t *testing.T, id string) *sim.Cluster {
	return simtest.Open(t, sim.SystemKafka, func(c *sim.ClusterConfig) { c.ClusterID = id })
}

func newRole(t *testing.T, c *sim.Cluster, member string, nodeID int32, id string) *Role {
	t.Helper()
	m, _ := c.Member(member)
	cfg := DefaultConfig()
	cfg.Addr, cfg.NodeID, cfg.ClusterID = m.Addr, nodeID, id
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestRoleAgainstSim probes kfake brokers: controller and brokers, the
// controller moving, racks, figures, a pause, a death.
func TestRoleAgainstSim(t *testing.T) {
	c := openSim(t, "kafka-prod")
	b0, b2 := newRole(t, c, "broker0", -1, "kafka-prod"), newRole(t, c, "broker2", 2, "kafka-prod")
	state := func(r *Role) string {
		t.Helper()
		h, err := r.Probe(ctxFor(t, 10*time.Second))
		if err != nil || h.Unhealthy != "" {
			t.Fatalf("probe: %+v, %v", h, err)
		}
		return h.State
	}
	if got := state(b0) + "," + state(b2); got != "broker,controller" {
		t.Errorf("at start: %s", got)
	}
	if h, _ := b0.Probe(ctxFor(t, 10*time.Second)); h.Metadata.Has(kafka.MetaKRaft) {
		t.Errorf("a ZooKeeper-mode broker's probe says %s", h.Metadata)
	}
	f, err := b2.Collect(ctxFor(t, 10*time.Second))
	m, _ := c.Member("broker2")
	port, _ := strconv.Atoi(m.Addr[strings.LastIndexByte(m.Addr, ':')+1:])
	if err != nil || f.Port != port || f.Metadata.Get(kafka.MetaBrokerID) != "2" || f.Metadata.Get(kafka.MetaListener) != m.Addr {
		t.Errorf("Collect: %+v, %v", f, err)
	}
	if st := b2.Static(); st.Port != port || st.Metadata.Get(kafka.MetaBrokerID) != "2" {
		t.Errorf("Static: %+v", st)
	}
	if rack, err := b0.Rack(ctxFor(t, 10*time.Second)); err != nil || rack != "r1" {
		t.Errorf("Rack: %q, %v", rack, err)
	}
	if err := c.SetState("broker0", "controller"); err != nil {
		t.Fatal(err)
	}
	if got := state(b0) + "," + state(b2); got != "controller,broker" {
		t.Errorf("the controller moved: %s", got)
	}
	if err := c.Pause("broker2"); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Probe(ctxFor(t, 500*time.Millisecond)); !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("paused: %v", err)
	}
	if err := c.Resume("broker2"); err != nil {
		t.Fatal(err)
	}
	if got := state(b2); got != "broker" {
		t.Errorf("resumed: %s", got)
	}
	if err := c.Stop("broker0"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := b0.Probe(ctxFor(t, 2*time.Second)); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("stopped: %v (after %v)", err, time.Since(began))
	}
	b1 := newRole(t, c, "broker1", 1, "kafka-prod")
	if got := state(b1) + "," + state(b2); got != "controller,broker" {
		t.Errorf("after the controller died: %s", got)
	}
}

// TestKRaft: a broker of a KRaft cluster (kfake itself, which finalizes
// metadata.version) is a "broker", and says kraft=true, so that its
// cluster is not taken for one that lost its controller.
func TestKRaft(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := DefaultConfig()
	cfg.Addr = c.ListenAddrs()[0]
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	h, err := r.Probe(ctxFor(t, 10*time.Second))
	if err != nil || h.Unhealthy != "" || h.State != kafka.RoleBroker || h.Metadata.Get(kafka.MetaKRaft) != "true" {
		t.Errorf("a KRaft broker's probe: %+v, %v", h, err)
	}
}

// TestForeignAndUnlisted: a broker of another cluster is unhealthy with
// both ids and no state; a node id the cluster does not list is unhealthy.
func TestForeignAndUnlisted(t *testing.T) {
	c := openSim(t, "kafka-other")
	h, err := newRole(t, c, "broker0", 0, "kafka-prod").Probe(ctxFor(t, 10*time.Second))
	if err != nil || h.State != "" || !strings.Contains(h.Unhealthy, "kafka-other") || !strings.Contains(h.Unhealthy, "kafka-prod") {
		t.Errorf("another cluster: %+v, %v", h, err)
	}
	h, err = newRole(t, c, "broker0", 7, "").Probe(ctxFor(t, 10*time.Second))
	if err != nil || !strings.Contains(h.Unhealthy, "not in its cluster's metadata") {
		t.Errorf("node 7: %+v, %v", h, err)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{Addr: "9092", NodeID: -1},
		{Addr: "kafka1:0", NodeID: -1},
		{Addr: "kafka1:9092", NodeID: -2},
		{Addr: "kafka1:9092", NodeID: -1, Port: 70000},
	} {
		if _, err := New(c); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
}

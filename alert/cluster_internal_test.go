package alert

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/testclock"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/roles"
)

// memberEvent is an event of an instance of app in role state state
// (none when ""), with kv more metadata.
func memberEvent(clk *testclock.Clock, typ heureka.EventType, app, id string, st heureka.Status, state string, kv ...string) heureka.Event {
	md := heureka.NewMetadata(kv...)
	if state != "" {
		md = md.With(heureka.MetaRoleState, state)
	}
	e := heureka.Event{Type: typ, Time: clk.Now().UnixMilli(), App: app, ID: id, HostName: id, Status: st, By: heureka.ByInstance}
	if typ == heureka.EventRegistered || typ == heureka.EventMetadataChanged {
		e.Metadata = md
	}
	return e
}

// clusterSent lists what the webhook holds as "status alertname app".
func clusterSent(f *Forwarder) string {
	s := f.sinks[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, q := range s.queue {
		out = append(out, q.Status+" "+q.Labels["alertname"]+" "+q.Labels["app"])
	}
	return strings.Join(out, "|")
}

const rmApp = "YARN-RESOURCEMANAGER.PROD"

// TestNoActiveResourceManager: an RM pair's failover (the old active steps
// down before the new one takes over) sends nothing, with the default
// hold of a minute; the active dying leaves the standby UP and no active:
// the alert fires once that has lasted a minute, says which members are
// UP and in what state, and resolves when the standby takes over.
func TestNoActiveResourceManager(t *testing.T) {
	f, clk := newTestForwarder(t, nil)
	if f.cfg.For[roles.AlertNoActiveResourceManager] != time.Minute {
		t.Fatalf("default For %v: the cluster alerts hold a minute", f.cfg.For)
	}
	feed(t, f, memberEvent(clk, heureka.EventRegistered, rmApp, "rm1", heureka.StatusUp, "active"))
	feed(t, f, memberEvent(clk, heureka.EventRegistered, rmApp, "rm2", heureka.StatusUp, "standby"))
	feed(t, f, memberEvent(clk, heureka.EventMetadataChanged, rmApp, "rm1", heureka.StatusUp, "standby"))
	clk.Advance(3 * time.Second)
	feed(t, f, memberEvent(clk, heureka.EventMetadataChanged, rmApp, "rm2", heureka.StatusUp, "active"))
	clk.Advance(2 * time.Minute)
	f.promotePending()
	if got := clusterSent(f); got != "" {
		t.Fatalf("a failover sent %q", got)
	}

	feed(t, f, memberEvent(clk, heureka.EventStatusChanged, rmApp, "rm2", heureka.StatusDown, ""))
	wantSent(t, f, "firing HeurekaInstanceDown rm2")
	began := clk.Now()
	clk.Advance(59 * time.Second)
	f.promotePending()
	clk.Advance(time.Second)
	f.promotePending()
	if got := clusterSent(f); got != "firing HeurekaInstanceDown "+rmApp+"|firing HeurekaNoActiveResourceManager "+rmApp {
		t.Fatalf("sent %q", got)
	}
	a := f.sinks[0].queue[1]
	if a.Labels["cluster"] != "prod" || a.Labels["severity"] != "critical" || !a.StartsAt.Equal(began.Truncate(time.Millisecond)) ||
		a.Annotations["summary"] != "YARN cluster prod has no active ResourceManager" ||
		!strings.Contains(a.Annotations["description"], "1 ResourceManagers of "+rmApp+" are UP and none is active: rm1 (standby)") {
		t.Errorf("the alert: %+v", a)
	}
	feed(t, f, memberEvent(clk, heureka.EventMetadataChanged, rmApp, "rm1", heureka.StatusUp, "active"))
	if got := clusterSent(f); !strings.HasSuffix(got, "|resolved HeurekaNoActiveResourceManager "+rmApp) {
		t.Fatalf("after rm1 took over: %q", got)
	}
}

// TestClusterAlertsFollowTheirRoles: each role's alert at once (For 0):
// ZooKeeper without a leader and Kafka (ZooKeeper mode) without a
// controller fire; a standalone ZooKeeper server leads; a KRaft Kafka
// cluster expects no controller broker; every member DOWN or gone
// resolves; RegionServers have no lead to miss.
func TestClusterAlertsFollowTheirRoles(t *testing.T) {
	f, clk := newTestForwarder(t, func(c *Config) { c.For = nil })
	reg := func(app, id, state string, kv ...string) {
		feed(t, f, memberEvent(clk, heureka.EventRegistered, app, id, heureka.StatusUp, state, kv...))
	}
	reg("ZOOKEEPER.PROD", "zk1", "follower")
	reg("ZOOKEEPER.PROD", "zk2", "follower")
	reg("ZOOKEEPER.DEV", "zk9", "standalone")
	reg("KAFKA-BROKER.EVENTS", "b1", "broker")
	reg("KAFKA-BROKER.LOGS", "b1", "broker", kafka.MetaKRaft, "true")
	reg("HBASE-REGIONSERVER.PROD", "rs1", "serving")
	want := "firing HeurekaZooKeeperNoLeader ZOOKEEPER.PROD|firing HeurekaKafkaNoController KAFKA-BROKER.EVENTS"
	if got := clusterSent(f); got != want {
		t.Fatalf("sent %q, want %q", got, want)
	}
	// Every member of the ensemble DOWN: their own alerts say so.
	feed(t, f, memberEvent(clk, heureka.EventStatusChanged, "ZOOKEEPER.PROD", "zk1", heureka.StatusDown, ""))
	feed(t, f, memberEvent(clk, heureka.EventStatusChanged, "ZOOKEEPER.PROD", "zk2", heureka.StatusDown, ""))
	// The only broker deregisters: no cluster left to judge.
	feed(t, f, memberEvent(clk, heureka.EventCancelled, "KAFKA-BROKER.EVENTS", "b1", heureka.StatusUp, ""))
	got := clusterSent(f)
	for _, w := range []string{"resolved HeurekaZooKeeperNoLeader ZOOKEEPER.PROD", "resolved HeurekaKafkaNoController KAFKA-BROKER.EVENTS"} {
		if !strings.Contains(got, w) {
			t.Errorf("sent %q, want %q", got, w)
		}
	}
	if _, ok := f.state.Members["KAFKA-BROKER.EVENTS"]; ok || len(f.state.Members["ZOOKEEPER.PROD"]) != 2 {
		t.Errorf("members %v", f.state.Members)
	}
}

// TestClusterAlertsReconcile: reading the registry again (a resync) judges
// every cluster from the listing: a cluster now led resolves, one gone
// resolves, one unled fires.
func TestClusterAlertsReconcile(t *testing.T) {
	f, clk := newTestForwarder(t, func(c *Config) { c.For = nil })
	feed(t, f, memberEvent(clk, heureka.EventRegistered, rmApp, "rm1", heureka.StatusUp, "standby"))
	feed(t, f, memberEvent(clk, heureka.EventRegistered, "ZOOKEEPER.PROD", "zk1", heureka.StatusUp, "follower"))
	member := func(app, id, state string) *heureka.Instance {
		return &heureka.Instance{App: app, ID: id, Status: heureka.StatusUp, Metadata: heureka.NewMetadata(heureka.MetaRoleState, state)}
	}
	apps := &heureka.Applications{Apps: []*heureka.Application{
		{Name: rmApp, Instances: []*heureka.Instance{member(rmApp, "rm1", "active")}},
		{Name: "HBASE-MASTER.PROD", Instances: []*heureka.Instance{member("HBASE-MASTER.PROD", "m1", "backup")}},
	}}
	f.mu.Lock()
	f.reconcileClustersLocked(membersOf(apps, func(string) bool { return true }), clk.Now())
	f.mu.Unlock()
	want := "firing HeurekaNoActiveResourceManager " + rmApp + "|firing HeurekaZooKeeperNoLeader ZOOKEEPER.PROD|" +
		"resolved HeurekaZooKeeperNoLeader ZOOKEEPER.PROD|firing HeurekaNoActiveHBaseMaster HBASE-MASTER.PROD|resolved HeurekaNoActiveResourceManager " + rmApp
	if got := clusterSent(f); got != want {
		t.Errorf("sent %q\nwant %q", got, want)
	}
}

// TestMembersSurviveARestart: the members are kept in the state file, so
// a restarted forwarder judges the next event against all of them; a
// state file without them is not resumed from.
func TestMembersSurviveARestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	edit := func(c *Config) { c.For, c.StateFile = nil, state }
	f, clk := newTestForwarder(t, edit)
	feed(t, f, memberEvent(clk, heureka.EventRegistered, rmApp, "rm1", heureka.StatusUp, "active"))
	feed(t, f, memberEvent(clk, heureka.EventRegistered, rmApp, "rm2", heureka.StatusUp, "standby"))
	f.mu.Lock()
	f.state.Node = "node-1"
	f.saveLocked(true)
	f.mu.Unlock()

	g, _ := newTestForwarder(t, edit)
	if g.state.Node != "node-1" || len(g.state.Members[rmApp]) != 2 {
		t.Fatalf("resumed %+v", g.state)
	}
	// A standby's metadata changes: rm1 is still active, nothing fires.
	feed(t, g, memberEvent(clk, heureka.EventMetadataChanged, rmApp, "rm2", heureka.StatusUp, "standby"))
	if got := clusterSent(g); got != "" {
		t.Errorf("sent %q", got)
	}
	g.mu.Lock()
	g.state.Members = nil
	g.saveLocked(true)
	g.mu.Unlock()
	h, _ := newTestForwarder(t, edit)
	if h.state.Node != "" {
		t.Errorf("a state file without members is resumed from node %q", h.state.Node)
	}
}

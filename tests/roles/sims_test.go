package roles_test

import (
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
	"github.com/heureka-project/heureka/yarn"
)

// Bounds for what the agents must see: timeouts for a busy machine, not
// speeds (docs/benchmarks.md has those).
const (
	settle = 30 * time.Second // a registration, a change seen
	bound  = 15 * time.Second // a probe-driven change (the agent's is ~1.25 s)
)

// lifecycle takes the agent beside member (registered UP as app/id) through
// a pause shorter than --hang-after (held: no change), a stop (DOWN "port
// refused"), a start (UP again after --up-after) and SIGTERM (drained:
// OUT_OF_SERVICE, then gone, exit 0).
func lifecycle(t *testing.T, c *sim.Cluster, cl *client.Client, w *watcher, agent *proctest.Proc, member, app, id string) {
	t.Helper()
	before := instance(t, cl, app, id)
	from := w.mark()
	if err := c.Pause(member); err != nil {
		t.Fatal(err)
	}
	agent.WaitFor(regexp.MustCompile(`does not answer \(paused`), bound)
	time.Sleep(2 * time.Second) // the rest of the pause: its length, under --hang-after, is what is tested
	if err := c.Resume(member); err != nil {
		t.Fatal(err)
	}
	agent.WaitFor(regexp.MustCompile(`msg="daemon answers again; status unchanged"`), bound)
	if after := instance(t, cl, app, id); after.Status != heureka.StatusUp || after.LastDirtyTimestamp != before.LastDirtyTimestamp {
		t.Errorf("%s after a short pause: %s (lastDirtyTimestamp %d, was %d): the agent wrote", id, describe(after), after.LastDirtyTimestamp, before.LastDirtyTimestamp)
	}
	if got := w.states(from, id); len(got) > 0 {
		t.Errorf("%s: watch events during a short pause: %v", id, got)
	}

	from = w.mark()
	if err := c.Stop(member); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, id, `^DOWN .*down_cause=port refused`, bound)
	from = w.mark()
	if err := c.Start(member); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, id, `^UP`, bound)

	from = w.mark()
	agent.Signal(syscall.SIGTERM)
	w.await(t, from, id, `^OUT_OF_SERVICE`, bound)
	await(t, cl, app, id, `^gone$`, bound)
	if code := agent.Exit(bound); code != 0 {
		t.Errorf("%s's agent exited %d after SIGTERM", id, code)
	}
}

// TestYARN: a simulated ResourceManager pair, an agent beside each:
// registered with their HA state, a failover reported the moment it
// happens, the active's death reported DOWN while the standby takes over,
// a pause held, a drain.
func TestYARN(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	c := simtest.Open(t, sim.SystemYARN, func(cfg *sim.ClusterConfig) { cfg.ClusterID = "yarn-prod" })
	cl := newClient(t, reg)
	app := heureka.RoleApp(yarn.RoleName, "prod")
	w := newWatcher(t, reg, app)
	agents := map[string]*proctest.Proc{}
	for _, rm := range []string{"rm1", "rm2"} {
		agents[rm] = startAgent(t, reg, yarn.RoleName, rm+".test", "--url", simtest.URL(t, c, rm),
			"--cluster-id", "yarn-prod", "--rack", "/r1", "--drain", "1s")
	}
	rm1, rm2 := id("rm1.test", "/r1"), id("rm2.test", "/r1")
	in := await(t, cl, app, rm1, `^UP role_state=active$`, settle)
	await(t, cl, app, rm2, `^UP role_state=standby$`, settle)
	if in.Port.Number != 8032 || in.Metadata.Get(heureka.MetaVersion) != "3.3.6" || in.Metadata.Get(heureka.MetaRack) != "/r1" || !in.Metadata.Has(heureka.MetaHTTPPort) {
		t.Errorf("rm1 registered as %+v", in)
	}

	from := w.mark()
	if err := c.SetState("rm2", "active"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, rm2, `^UP role_state=active$`, bound)
	w.await(t, from, rm1, `^UP role_state=standby$`, bound)
	agents["rm2"].WaitFor(regexp.MustCompile(`msg="role state changed" .*from=standby to=active`), bound)

	// The active dies: DOWN, and the standby is the active one.
	from = w.mark()
	if err := c.Stop("rm2"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, rm2, `^DOWN role_state=active down_cause=port refused$`, bound)
	w.await(t, from, rm1, `^UP role_state=active$`, bound)
	from = w.mark()
	if err := c.Start("rm2"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, rm2, `^UP role_state=standby$`, bound)

	// An RM whose elector lost ZooKeeper is DOWN with that cause.
	from = w.mark()
	if err := c.Set("rm2", "zk", "lost"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, rm2, `^DOWN role_state=standby down_cause=resourcemanager lost its ZooKeeper connection`, bound)
	lifecycle(t, c, cl, w, agents["rm1"], "rm1", app, rm1)
}

// TestHBase: simulated masters and RegionServers: the active and the
// backup, the hand-over, a RegionServer the master counts dead (DOWN
// while it still answers), one that dies, a pause, a drain.
func TestHBase(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	c := simtest.Open(t, sim.SystemHBase, nil)
	cid := c.State().ClusterID
	cl := newClient(t, reg)
	mApp, rsApp := heureka.RoleApp(hbase.MasterRoleName, "prod"), heureka.RoleApp(hbase.RegionServerRoleName, "prod")
	w := newWatcher(t, reg, mApp, rsApp)
	masters := simtest.URL(t, c, "master1") + "," + simtest.URL(t, c, "master2")
	agents := map[string]*proctest.Proc{}
	for _, m := range []string{"master1", "master2"} {
		agents[m] = startAgent(t, reg, hbase.MasterRoleName, m+".test", "--url", simtest.URL(t, c, m), "--cluster-id", cid, "--drain", "1s")
	}
	for _, rs := range []string{"rs1", "rs2"} {
		agents[rs] = startAgent(t, reg, hbase.RegionServerRoleName, rs+".test", "--url", simtest.URL(t, c, rs), "--cluster-id", cid,
			"--masters", masters, "--master-check-interval", "200ms", "--drain", "1s")
	}
	m1, m2 := id("master1.test", ""), id("master2.test", "")
	rs1, rs2 := id("rs1.test", ""), id("rs2.test", "")
	in := await(t, cl, mApp, m1, `^UP role_state=active$`, settle)
	await(t, cl, mApp, m2, `^UP role_state=backup$`, settle)
	r := await(t, cl, rsApp, rs1, `^UP role_state=serving$`, settle)
	await(t, cl, rsApp, rs2, `^UP role_state=serving$`, settle)
	if in.Port.Number != 16000 || r.Port.Number != 16020 || in.Metadata.Get(hbase.MetaRegionServers) != "3" || r.Metadata.Get(hbase.MetaRegionCount) != "14" {
		t.Errorf("registered %+v and %+v", in, r)
	}

	from := w.mark()
	if err := c.SetState("master2", "active"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, m2, `^UP role_state=active$`, bound)
	w.await(t, from, m1, `^UP role_state=backup$`, bound)

	// A zombie: it answers, the active master counts it dead.
	from = w.mark()
	if err := c.SetState("rs2", "dead"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, rs2, `^DOWN role_state=serving down_cause=the active hbase master counts regionserver rs2\.`, bound)
	from = w.mark()
	if err := c.SetState("rs2", "serving"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, rs2, `^UP role_state=serving$`, bound)

	// The active master dies: DOWN, and the backup takes over.
	from = w.mark()
	if err := c.Stop("master2"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, m2, `^DOWN .*down_cause=port refused$`, bound)
	w.await(t, from, m1, `^UP role_state=active$`, bound)
	lifecycle(t, c, cl, w, agents["rs1"], "rs1", rsApp, rs1)
}

// TestElasticsearch: three simulated nodes, their racks read from the
// nodes' rack_id attribute: the elected master, a new election when it
// dies, a node that left the cluster, a pause, a drain.
func TestElasticsearch(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	c := simtest.Open(t, sim.SystemElasticsearch, nil)
	uuid := c.State().ClusterID
	cl := newClient(t, reg)
	app := heureka.RoleApp(elasticsearch.RoleName, "prod")
	w := newWatcher(t, reg, app)
	agents := map[string]*proctest.Proc{}
	for _, n := range []string{"es1", "es2", "es3"} {
		agents[n] = startAgent(t, reg, elasticsearch.RoleName, n+".test", "--url", simtest.URL(t, c, n), "--cluster-id", uuid, "--drain", "1s")
	}
	es1, es2, es3 := id("es1.test", "/r1"), id("es2.test", "/r2"), id("es3.test", "/r3")
	in := await(t, cl, app, es1, `^UP role_state=master$`, settle)
	await(t, cl, app, es2, `^UP role_state=master-eligible$`, settle)
	await(t, cl, app, es3, `^UP role_state=master-eligible$`, settle)
	if in.Metadata.Get(heureka.MetaRack) != "/r1" || in.Metadata.Get(elasticsearch.MetaTransportPort) != "9300" || in.Metadata.Get(heureka.MetaVersion) != "8.15.1" {
		t.Errorf("es1 registered as %+v", in)
	}

	from := w.mark()
	if err := c.Stop("es1"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, es1, `^DOWN .*down_cause=port refused$`, bound)
	w.await(t, from, es2, `^UP role_state=master$`, bound)

	from = w.mark()
	if err := c.SetState("es3", "left"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, es3, `^DOWN .*down_cause=elasticsearch node knows no elected master`, bound)
	from = w.mark()
	if err := c.SetState("es3", "joined"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, es3, `^UP role_state=master-eligible$`, bound)
	lifecycle(t, c, cl, w, agents["es3"], "es3", app, es3)
}

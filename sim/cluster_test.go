package sim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/yarn"
	"github.com/heureka-project/heureka/zookeeper"
	"github.com/twmb/franz-go/pkg/kgo"
)

func openCluster(t *testing.T, cfg ClusterConfig) *Cluster {
	t.Helper()
	c, err := NewCluster(cfg)
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
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// baseURL is member name's base URL.
func baseURL(t *testing.T, c *Cluster, name string) string {
	t.Helper()
	m, ok := c.Member(name)
	if !ok {
		t.Fatalf("no member %s", name)
	}
	return "http://" + m.Addr
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// refused reports whether a GET of url is refused, as a dead daemon's is.
func refused(url string) bool {
	_, err := http.Get(url)
	return errors.Is(err, syscall.ECONNREFUSED)
}

// TestYARN reads the simulated ResourceManagers with package yarn's own
// reader, through a failover, the active's death, a restart and a lost
// ZooKeeper connection.
func TestYARN(t *testing.T) {
	cfg := DefaultClusterConfig(SystemYARN)
	cfg.ClusterID = "yarn-prod"
	c := openCluster(t, cfg)
	hc := &http.Client{Timeout: 5 * time.Second}
	read := func(name string) yarn.ResourceManager {
		t.Helper()
		rm, err := yarn.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, c, name), "yarn-prod")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rm
	}
	states := func() string { return read("rm1").RoleState() + "," + read("rm2").RoleState() }
	rm1 := read("rm1")
	if ok, cause := rm1.Health(); !ok || rm1.Version != "3.3.6" || rm1.ZooKeeper != yarn.ZKConnected || rm1.ClusterID != "yarn-prod" {
		t.Errorf("rm1: %+v (%s)", rm1, cause)
	}
	if got := states(); got != "active,standby" {
		t.Errorf("at start: %s", got)
	}
	if _, err := yarn.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, c, "rm1"), "yarn-other"); heureka.ErrorCode(err) != heureka.ECONFLICT {
		t.Errorf("another cluster's id: %v", err)
	}
	must(t, c.SetState("rm2", "active"))
	if got := states(); got != "standby,active" {
		t.Errorf("after a failover to rm2: %s", got)
	}
	must(t, c.Stop("rm2"))
	if !refused(baseURL(t, c, "rm2") + yarn.ClusterInfoPath) {
		t.Error("a stopped RM answers")
	}
	if got := read("rm1").RoleState(); got != "active" {
		t.Errorf("rm1 after the active died: %s", got)
	}
	must(t, c.Start("rm2"))
	if got := states(); got != "active,standby" {
		t.Errorf("rm2 restarted: %s", got)
	}
	must(t, c.Set("rm1", "zk", "lost"))
	if ok, cause := read("rm1").Health(); ok || !strings.Contains(cause, "lost its ZooKeeper") {
		t.Errorf("rm1 with ZooKeeper lost: healthy %v, %s", ok, cause)
	}
	one := DefaultClusterConfig(SystemYARN)
	one.Members = 1
	solo := openCluster(t, one)
	rm, err := yarn.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, solo, "rm1"), "")
	if ok, _ := rm.Health(); err != nil || !ok || rm.RoleState() != "active" || rm.ZooKeeper != yarn.ZKNoElector {
		t.Errorf("an RM without HA: %+v, %v", rm, err)
	}
}

// TestHBase reads the simulated masters and RegionServers with package
// hbase's readers: the active master's view of its RegionServers, a
// RegionServer's death and restart, a zombie, the master handing over.
func TestHBase(t *testing.T) {
	c := openCluster(t, DefaultClusterConfig(SystemHBase))
	id := c.State().ClusterID
	hc := &http.Client{Timeout: 5 * time.Second}
	master := func(name string) hbase.Master {
		t.Helper()
		m, err := hbase.ReadMaster(ctxFor(t, 5*time.Second), hc, baseURL(t, c, name), id)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	rs := func(name string) hbase.RegionServer {
		t.Helper()
		r, err := hbase.ReadRegionServer(ctxFor(t, 5*time.Second), hc, baseURL(t, c, name), id)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	m1, m2 := master("master1"), master("master2")
	if !m1.Active || m2.Active || m1.NumRegionServers != 3 || m1.NumDeadRegionServers != 0 || !strings.HasSuffix(strings.Split(m1.ServerName, ",")[1], "16000") {
		t.Errorf("masters: %+v / %+v", m1, m2)
	}
	rs1 := rs("rs1")
	if ok, _ := rs1.Health(&m1); !ok || rs1.RegionCount != 14 || rs1.RoleState() != hbase.RoleServing {
		t.Errorf("rs1: %+v", rs1)
	}
	must(t, c.Stop("rs2"))
	m1 = master("master1")
	if m1.NumRegionServers != 2 || m1.NumDeadRegionServers != 1 || !strings.HasPrefix(m1.DeadRegionServers[0], "rs2.") {
		t.Errorf("after rs2 died: %+v", m1)
	}
	must(t, c.Start("rs2"))
	m1 = master("master1")
	if r2 := rs("rs2"); m1.NumRegionServers != 3 || m1.DeadRegionServers[0] == r2.ServerName {
		t.Errorf("rs2 restarted as %s: %+v", r2.ServerName, m1)
	}
	must(t, c.SetState("rs1", "dead"))
	if ok, cause := rs("rs1").Health(ptr(master("master1"))); ok || !strings.Contains(cause, "counts regionserver") {
		t.Errorf("a zombie: %v %s", ok, cause)
	}
	must(t, c.SetState("rs1", "serving"))
	if ok, _ := rs("rs1").Health(ptr(master("master1"))); !ok {
		t.Error("rs1 serving again is unhealthy")
	}
	must(t, c.Stop("master1"))
	if m := master("master2"); !m.Active || m.NumRegionServers != 3 {
		t.Errorf("the backup after the active died: %+v", m)
	}
	must(t, c.SetState("master1", "active"))
	if _, err := hbase.ReadMaster(ctxFor(t, 5*time.Second), hc, baseURL(t, c, "master2"), "another-cluster"); heureka.ErrorCode(err) != heureka.ECONFLICT {
		t.Errorf("another cluster's id: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestElasticsearch reads the simulated nodes with package
// elasticsearch's reader: the elected master, racks, a new election when
// the master dies, a node that left, a red cluster.
func TestElasticsearch(t *testing.T) {
	c := openCluster(t, DefaultClusterConfig(SystemElasticsearch))
	uuid := c.State().ClusterID
	hc := &http.Client{Timeout: 5 * time.Second}
	read := func(name string) elasticsearch.Node {
		t.Helper()
		n, err := elasticsearch.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, c, name), uuid)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	es1, es2 := read("es1"), read("es2")
	if es1.RoleState() != elasticsearch.RoleMaster || es2.RoleState() != elasticsearch.RoleMasterEligible ||
		es1.Rack("rack_id") != "r1" || es2.Rack("rack_id") != "r2" || es1.Version != "8.15.1" || es1.Nodes != 3 ||
		"http://"+es1.HTTPAddr != baseURL(t, c, "es1") {
		t.Errorf("nodes: %+v / %+v", es1, es2)
	}
	if ok, _ := es2.Health(); !ok {
		t.Error("es2 unhealthy")
	}
	must(t, c.Stop("es1"))
	if n := read("es2"); n.RoleState() != elasticsearch.RoleMaster || n.Nodes != 2 {
		t.Errorf("after the master died: %+v", n)
	}
	must(t, c.SetState("es3", "left"))
	if ok, cause := read("es3").Health(); ok || !strings.Contains(cause, "knows no elected master") {
		t.Errorf("a node that left: %v %s", ok, cause)
	}
	must(t, c.SetState("es3", "joined"))
	must(t, c.Set("es3", "health", "red"))
	if ok, cause := read("es3").Health(); ok || !strings.Contains(cause, "red") {
		t.Errorf("a red cluster: %v %s", ok, cause)
	}
	if _, err := elasticsearch.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, c, "es2"), "anotherUUID"); heureka.ErrorCode(err) != heureka.ECONFLICT {
		t.Errorf("another cluster's uuid: %v", err)
	}
}

// TestZooKeeper reads the simulated ensemble with package zookeeper's
// reader, checking the ensemble: the leader's death and the election, the
// loss of quorum (mntr 500, srvr "not serving"), its return.
func TestZooKeeper(t *testing.T) {
	c := openCluster(t, DefaultClusterConfig(SystemZooKeeper))
	want, err := zookeeper.ParseEnsemble(c.State().Ensemble)
	if err != nil || len(want) != 3 {
		t.Fatalf("ensemble %q: %v", c.State().Ensemble, err)
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	read := func(name string) zookeeper.Mntr {
		t.Helper()
		m, err := zookeeper.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, c, name), want)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	states := func(names ...string) string {
		var s []string
		for _, n := range names {
			s = append(s, read(n).RoleState())
		}
		return strings.Join(s, ",")
	}
	if got := states("zk1", "zk2", "zk3"); got != "follower,follower,leader" {
		t.Errorf("at start: %s", got)
	}
	if m := read("zk3"); !m.LeaderFiguresKnown || m.SyncedFollowers != 2 || m.QuorumSize != 3 || m.Version != "3.8.4" {
		t.Errorf("the leader: %+v", m)
	}
	must(t, c.Stop("zk3"))
	if got := states("zk1", "zk2"); got != "follower,leader" {
		t.Errorf("after the leader died: %s", got)
	}
	if ok, cause := read("zk2").Health(); !ok {
		t.Errorf("a leader with one synced follower of three (a majority) is unhealthy: %s", cause)
	}
	must(t, c.Stop("zk2"))
	if m := read("zk1"); m.State != zookeeper.StateNotServing {
		t.Errorf("without quorum: %+v", m)
	}
	must(t, c.Start("zk3"))
	if got := states("zk1", "zk3"); got != "follower,leader" {
		t.Errorf("quorum back: %s", got)
	}
	must(t, c.Start("zk2"))
	must(t, c.SetState("zk1", "leader"))
	if got := states("zk1", "zk2", "zk3"); got != "leader,follower,follower" {
		t.Errorf("zk1 elected: %s", got)
	}
	other := DefaultClusterConfig(SystemZooKeeper)
	other.ClusterID = "other-ensemble"
	o := openCluster(t, other)
	if _, err := zookeeper.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, o, "zk1"), want); heureka.ErrorCode(err) != heureka.ECONFLICT {
		t.Errorf("another ensemble: %v", err)
	}
	one := DefaultClusterConfig(SystemZooKeeper)
	one.Members = 1
	solo := openCluster(t, one)
	if m, err := zookeeper.Read(ctxFor(t, 5*time.Second), hc, baseURL(t, solo, "zk1"), nil); err != nil || m.State != zookeeper.StateStandalone {
		t.Errorf("standalone: %+v, %v", m, err)
	}
}

// TestKafka probes the simulated brokers with package kafka's probe (a
// real franz-go client against kfake): a ZooKeeper-mode cluster whose
// controller moves, racks, a stopped broker leaving the metadata and the
// controller moving off it, a pause; and a real client produces and
// consumes through it.
func TestKafka(t *testing.T) {
	c := openCluster(t, DefaultClusterConfig(SystemKafka))
	id := c.State().ClusterID
	probe := func(name string, d time.Duration) (kafka.Report, error) {
		t.Helper()
		m, _ := c.Member(name)
		cl, err := kafka.NewClient(m.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		return kafka.Probe(ctxFor(t, d), cl, kafka.Self{NodeID: -1, Addr: m.Addr}, id)
	}
	role := func(name string) string {
		t.Helper()
		r, err := probe(name, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r.RoleState()
	}
	r0, err := probe("broker0", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ok, cause := r0.Health(); !ok || r0.KRaft || r0.Rack != "r1" || r0.Brokers != 3 || r0.ControllerID != 2 || r0.Version != "" {
		t.Errorf("broker0: %+v (%s)", r0, cause)
	}
	if got := role("broker0") + "," + role("broker2"); got != "broker,controller" {
		t.Errorf("at start: %s", got)
	}
	must(t, c.SetState("broker0", "controller"))
	if got := role("broker0") + "," + role("broker2"); got != "controller,broker" {
		t.Errorf("the controller moved: %s", got)
	}
	must(t, c.Stop("broker0"))
	if _, err := probe("broker0", 3*time.Second); err == nil {
		t.Error("a stopped broker answered")
	}
	r1, err := probe("broker1", 10*time.Second)
	if err != nil || r1.Brokers != 2 || r1.RoleState() != kafka.RoleController {
		t.Errorf("broker1 after broker0, the controller, died: %+v, %v", r1, err)
	}
	must(t, c.Pause("broker2"))
	if _, err := probe("broker2", 500*time.Millisecond); err == nil {
		t.Error("a paused broker answered")
	}
	must(t, c.Resume("broker2"))
	must(t, c.Start("broker0"))
	if got := role("broker0"); got != "broker" {
		t.Errorf("broker0 restarted: %s", got)
	}

	// A real client bootstraps from the brokers and produces and consumes.
	var seeds []string
	for _, m := range c.State().Members {
		seeds = append(seeds, m.Addr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("heureka-sim"), kgo.DefaultProduceTopic("heureka-sim"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := ctxFor(t, 20*time.Second)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatalf("consume: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "hello" {
		t.Errorf("consumed %d records", len(recs))
	}
}

// TestClusterDaemon: a paused member accepts and answers nothing until it
// resumes; a stopped one refuses; a started one is back on its address.
func TestClusterDaemon(t *testing.T) {
	c := openCluster(t, DefaultClusterConfig(SystemZooKeeper))
	u := baseURL(t, c, "zk1") + zookeeper.MntrPath
	must(t, c.Pause("zk1"))
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(u)
		if err != nil {
			resp = nil
		}
		answered <- resp
	}()
	select {
	case <-answered:
		t.Fatal("a paused member answered")
	case <-time.After(300 * time.Millisecond):
	}
	must(t, c.Resume("zk1"))
	select {
	case resp := <-answered:
		if resp == nil || resp.StatusCode != 200 || resp.Header.Get("X-Heureka-Simulator") != "true" {
			t.Errorf("after resume: %+v", resp)
		}
		if resp != nil {
			resp.Body.Close()
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer after resume")
	}
	must(t, c.Stop("zk1"))
	if !refused(u) {
		t.Error("a stopped member answers")
	}
	if err := c.Pause("zk1"); err == nil {
		t.Error("paused a stopped member")
	}
	must(t, c.Start("zk1"))
	if code, _, _ := get(t, u); code != 200 {
		t.Errorf("after start: %d", code)
	}
}

// TestClusterControl drives the control API over HTTP.
func TestClusterControl(t *testing.T) {
	c := openCluster(t, DefaultClusterConfig(SystemYARN))
	base := "http://" + c.ControlAddr()
	code, body, h := get(t, base+"/sim")
	if code != 200 || !strings.Contains(body, "SIMULATED yarn cluster") || !strings.Contains(body, "rm2") || h.Get("X-Heureka-Simulator") != "true" {
		t.Errorf("GET /sim: %d %s", code, body)
	}
	code, body = post(t, base+"/sim/role?member=rm2&state=active")
	var st ClusterState
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || !st.Simulated || st.Members[1].State != "active" || st.Members[0].State != "standby" {
		t.Errorf("POST /sim/role: %d %s", code, body)
	}
	code, body = post(t, base+"/sim/stop?member=rm1")
	if code != 200 || !strings.Contains(body, `"running": false`) {
		t.Errorf("POST /sim/stop: %d %s", code, body)
	}
	post(t, base+"/sim/start?member=rm1")
	code, body = post(t, base+"/sim/set?member=rm1&zk=lost&version=3.4.0")
	if m, _ := c.Member("rm1"); code != 200 || m.Version != "3.4.0" {
		t.Errorf("POST /sim/set: %d %s", code, body)
	}
	for _, bad := range []struct{ path, want string }{
		{"/sim/stop?member=rm9", "the members are rm1, rm2"},
		{"/sim/role?member=rm1&state=leader", "active (a failover)"},
		{"/sim/set?member=rm1&zk=maybe", "want connected or lost"},
		{"/sim/set?member=rm1", "set what?"},
		{"/sim/set?member=rm1&color=blue", "not \"color\""},
	} {
		if code, body := post(t, base+bad.path); code != 400 || !strings.Contains(body, bad.want) {
			t.Errorf("POST %s: %d %s, want 400 with %q", bad.path, code, body, bad.want)
		}
	}
	for _, cfg := range []ClusterConfig{
		{System: "cassandra", Members: 1, ClusterID: "x", Version: "1", Host: "127.0.0.1", ControlAddr: ":0"},
		func() ClusterConfig { c := DefaultClusterConfig(SystemYARN); c.Members = 0; return c }(),
		func() ClusterConfig { c := DefaultClusterConfig(SystemYARN); c.RegionServers = 2; return c }(),
		func() ClusterConfig { c := DefaultClusterConfig(SystemZooKeeper); c.ClusterID = "a,b"; return c }(),
		func() ClusterConfig { c := DefaultClusterConfig(SystemKafka); c.Host = "localhost"; return c }(),
	} {
		if _, err := NewCluster(cfg); err == nil {
			t.Errorf("NewCluster(%+v) accepted", cfg)
		}
	}
}

package httpapi_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry"
)

// scrape returns /metrics as sample line ("name{labels}") to value text,
// comments left out.
func (ts *testServer) scrape() map[string]string {
	ts.t.Helper()
	out := map[string]string{}
	for line := range strings.SplitSeq(string(ts.expect(200, "GET", "/metrics", nil).body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		out[line[:i]] = line[i+1:]
	}
	return out
}

func hdfsNode(app, id string, md map[string]string) *heureka.Instance {
	in := &heureka.Instance{ID: id, App: app, HostName: id, IPAddr: "127.0.0.1", Status: heureka.StatusUp,
		Lease: heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90}, Metadata: heureka.MetadataOf(md)}
	in.Normalize()
	return in
}

func wantSamples(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestHDFSMetrics: NameNodes by HA state with every state present (so no
// active is a 0), DataNodes by rack and status, both following changes
// after a scrape has memoised the counts.
func TestHDFSMetrics(t *testing.T) {
	ts := newTestServer(t)
	for _, in := range []*heureka.Instance{
		hdfsNode("HDFS-NAMENODE.PROD", "nn1", map[string]string{"ha_state": "active"}),
		hdfsNode("HDFS-NAMENODE.PROD", "nn2", map[string]string{"ha_state": "standby"}),
		hdfsNode("HDFS-NAMENODE.DEV", "nn3", map[string]string{"ha_state": "initializing"}),
		hdfsNode("HDFS-DATANODE.PROD", "dn1", map[string]string{"rack": "/r1"}),
		hdfsNode("HDFS-DATANODE.PROD", "dn2", map[string]string{"rack": "r1/"}),
		hdfsNode("HDFS-DATANODE.PROD", "dn3", nil),
		hdfsNode("ORDERS", "o1", map[string]string{"rack": "/r9", "ha_state": "active"}),
	} {
		if err := ts.reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	got := ts.scrape()
	wantSamples(t, got, map[string]string{
		`heureka_hdfs_namenodes{cluster="prod",ha_state="active"}`:                "1",
		`heureka_hdfs_namenodes{cluster="prod",ha_state="standby"}`:               "1",
		`heureka_hdfs_namenodes{cluster="prod",ha_state="observer"}`:              "0",
		`heureka_hdfs_namenodes{cluster="prod",ha_state="unknown"}`:               "0",
		`heureka_hdfs_namenodes{cluster="dev",ha_state="unknown"}`:                "1",
		`heureka_hdfs_namenodes{cluster="dev",ha_state="active"}`:                 "0",
		`heureka_hdfs_datanodes{cluster="prod",rack="/r1",status="UP"}`:           "2",
		`heureka_hdfs_datanodes{cluster="prod",rack="/default-rack",status="UP"}`: "1",
	})
	for k := range got {
		if strings.Contains(k, "r9") || strings.Contains(k, `cluster="orders"`) {
			t.Errorf("a non-HDFS application is exported as HDFS: %s", k)
		}
	}

	// The active NameNode goes DOWN, a DataNode too: the memo must follow.
	if err := ts.reg.SetStatus("HDFS-NAMENODE.PROD", "nn1", heureka.StatusDown, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := ts.reg.SetStatus("HDFS-DATANODE.PROD", "dn2", heureka.StatusDown, 0, false); err != nil {
		t.Fatal(err)
	}
	got = ts.scrape()
	wantSamples(t, got, map[string]string{
		`heureka_hdfs_namenodes{cluster="prod",ha_state="active"}`:        "0",
		`heureka_hdfs_namenodes{cluster="prod",ha_state="standby"}`:       "1",
		`heureka_hdfs_namenodes{cluster="dev",ha_state="unknown"}`:        "1",
		`heureka_hdfs_datanodes{cluster="prod",rack="/r1",status="UP"}`:   "1",
		`heureka_hdfs_datanodes{cluster="prod",rack="/r1",status="DOWN"}`: "1",
	})
}

// TestWatchersAndExpectedRenewalsMetrics: heureka_watchers counts open
// streams and heureka_renews_expected_per_minute is exported.
func TestWatchersAndExpectedRenewalsMetrics(t *testing.T) {
	ts := newTestServer(t)
	if got := ts.scrape(); got["heureka_watchers"] != "0" || got["heureka_renews_expected_per_minute"] == "" {
		t.Fatalf("before any stream: heureka_watchers %q, heureka_renews_expected_per_minute %q; want 0 and a value",
			got["heureka_watchers"], got["heureka_renews_expected_per_minute"])
	}
	w1 := openStream(t, ts.url+"/v1/watch")
	openStream(t, ts.url+"/v1/events")
	proctest.Eventually(t, 5*time.Second, "heureka_watchers 2", func() bool { return ts.scrape()["heureka_watchers"] == "2" })
	w1.cancel()
	proctest.Eventually(t, 5*time.Second, "heureka_watchers 1 after a stream closed", func() bool { return ts.scrape()["heureka_watchers"] == "1" })
}

// TestHDFSMetricsAddUpBlocks: an application of several blocks
// (registry.BlockSize) is counted block by block, memoised per block; the
// sums follow a change in one block and a removal in another.
func TestHDFSMetricsAddUpBlocks(t *testing.T) {
	ts := newTestServer(t)
	const n = 5 * registry.BlockSize
	for i := range n {
		in := hdfsNode("HDFS-DATANODE.BIG", fmt.Sprintf("dn%04d", i), map[string]string{"rack": fmt.Sprintf("/r%d", i%3)})
		if err := ts.reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	if blocks, _ := ts.reg.Snapshot().AppBlocks("HDFS-DATANODE.BIG"); len(blocks.Blocks) < 3 {
		t.Fatalf("%d blocks: the test needs an application of several", len(blocks.Blocks))
	}
	per := func(rack int) string { return fmt.Sprint((n - rack + 2) / 3) } // instances i with i%3 == rack
	wantSamples(t, ts.scrape(), map[string]string{
		`heureka_hdfs_datanodes{cluster="big",rack="/r0",status="UP"}`: per(0),
		`heureka_hdfs_datanodes{cluster="big",rack="/r1",status="UP"}`: per(1),
		`heureka_hdfs_datanodes{cluster="big",rack="/r2",status="UP"}`: per(2),
	})
	// dn0003 (rack 0, first block) drained; dn0601 (rack 1, last block) gone.
	if err := ts.reg.SetStatus("HDFS-DATANODE.BIG", "dn0003", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := ts.reg.Cancel(registry.CancelRequest{App: "HDFS-DATANODE.BIG", ID: "dn0601"}); err != nil {
		t.Fatal(err)
	}
	r0, _ := strconv.Atoi(per(0))
	r1, _ := strconv.Atoi(per(1))
	wantSamples(t, ts.scrape(), map[string]string{
		`heureka_hdfs_datanodes{cluster="big",rack="/r0",status="UP"}`:             fmt.Sprint(r0 - 1),
		`heureka_hdfs_datanodes{cluster="big",rack="/r0",status="OUT_OF_SERVICE"}`: "1",
		`heureka_hdfs_datanodes{cluster="big",rack="/r1",status="UP"}`:             fmt.Sprint(r1 - 1),
		`heureka_hdfs_datanodes{cluster="big",rack="/r2",status="UP"}`:             per(2),
	})
}

// TestRoleMetrics: UP members of each role's cluster by role state, every
// state the role knows exported (0s included) and made-up states as
// other; the leaders of each cluster that needs one (not a KRaft Kafka
// cluster, not RegionServers), following a change after a scrape.
func TestRoleMetrics(t *testing.T) {
	ts := newTestServer(t)
	st := func(s string, kv ...string) map[string]string {
		m := map[string]string{"role_state": s}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, in := range []*heureka.Instance{
		hdfsNode("YARN-RESOURCEMANAGER.PROD", "rm1", st("active")),
		hdfsNode("YARN-RESOURCEMANAGER.PROD", "rm2", st("standby")),
		hdfsNode("ZOOKEEPER.PROD", "zk1", st("follower")),
		hdfsNode("ZOOKEEPER.PROD", "zk2", st("follower")),
		hdfsNode("ZOOKEEPER.PROD", "zk3", st("lurking")),
		hdfsNode("KAFKA-BROKER.OLD", "b1", st("broker")),
		hdfsNode("KAFKA-BROKER.NEW", "b1", st("broker", "kraft", "true")),
		hdfsNode("HBASE-REGIONSERVER.PROD", "rs1", st("serving")),
		hdfsNode("HDFS-DATANODE.PROD", "dn1", nil),
	} {
		if err := ts.reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	got := ts.scrape()
	wantSamples(t, got, map[string]string{
		`heureka_role_members{cluster="prod",role="yarn-resourcemanager",state="active"}`:  "1",
		`heureka_role_members{cluster="prod",role="yarn-resourcemanager",state="standby"}`: "1",
		`heureka_role_leaders{cluster="prod",role="yarn-resourcemanager"}`:                 "1",
		`heureka_role_members{cluster="prod",role="zookeeper",state="leader"}`:             "0",
		`heureka_role_members{cluster="prod",role="zookeeper",state="follower"}`:           "2",
		`heureka_role_members{cluster="prod",role="zookeeper",state="other"}`:              "1",
		`heureka_role_leaders{cluster="prod",role="zookeeper"}`:                            "0",
		`heureka_role_leaders{cluster="old",role="kafka-broker"}`:                          "0",
		`heureka_role_members{cluster="new",role="kafka-broker",state="broker"}`:           "1",
		`heureka_role_members{cluster="prod",role="hbase-regionserver",state="serving"}`:   "1",
	})
	for k := range got {
		if strings.Contains(k, `heureka_role_leaders{cluster="new"`) || strings.Contains(k, `role="hbase-regionserver"`) && strings.HasPrefix(k, "heureka_role_leaders") ||
			strings.Contains(k, `role="hdfs-datanode"`) || strings.Contains(k, `state="unknown"`) {
			t.Errorf("exported %s: a KRaft cluster, RegionServers and DataNodes have no leader series, DataNodes no role series, and no member lacks a state", k)
		}
	}

	// The active ResourceManager goes DOWN, a ZooKeeper server leads.
	if err := ts.reg.SetStatus("YARN-RESOURCEMANAGER.PROD", "rm1", heureka.StatusDown, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := ts.reg.Register(hdfsNode("ZOOKEEPER.PROD", "zk1", st("leader")), false); err != nil {
		t.Fatal(err)
	}
	wantSamples(t, ts.scrape(), map[string]string{
		`heureka_role_members{cluster="prod",role="yarn-resourcemanager",state="active"}`: "0",
		`heureka_role_leaders{cluster="prod",role="yarn-resourcemanager"}`:                "0",
		`heureka_role_members{cluster="prod",role="zookeeper",state="leader"}`:            "1",
		`heureka_role_leaders{cluster="prod",role="zookeeper"}`:                           "1",
	})
}

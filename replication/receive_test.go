package replication_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

func newReceiver(t *testing.T) (*replication.Receiver, *registry.Registry) {
	t.Helper()
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return replication.NewReceiver(reg, "node-a", slog.New(slog.DiscardHandler)), reg
}

// Every item gets its own answer, in position, with the status the Eureka
// resource it stands for would give; the batch as a whole succeeds.
func TestReceiverAnswersEachItem(t *testing.T) {
	rc, reg := newReceiver(t)
	const app = "HDFS-DATANODE.PROD"
	newer := dn("b")
	newer.LastDirtyTimestamp = 2000
	if err := reg.Register(newer, false); err != nil {
		t.Fatal(err)
	}
	items := []eureka.ReplicationItem{
		{Action: "Register", AppName: app, ID: "a", Instance: dn("a")},
		{Action: "Heartbeat", AppName: app, ID: "ghost"},
		{Action: "Heartbeat", AppName: app, ID: "b", LastDirtyTimestamp: 1000},
		{Action: "Cancel", AppName: app, ID: "ghost"},
		{Action: "StatusUpdate", AppName: app, ID: "a"},
		{Action: "StatusUpdate", AppName: app, ID: "a", Status: heureka.StatusOutOfService},
		{Action: "Reboot", AppName: app, ID: "a"},
	}
	out, err := rc.Batch(eureka.EncodeReplicationList(items))
	if err != nil {
		t.Fatal(err)
	}
	res, err := eureka.DecodeReplicationResults(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{200, 404, 409, 404, 400, 200, 400}
	if len(res) != len(want) {
		t.Fatalf("%d answers to %d items: %s", len(res), len(want), out)
	}
	for i, w := range want {
		if res[i].StatusCode != w {
			t.Errorf("item %d (%s %s): status %d, want %d", i, items[i].Action, items[i].ID, res[i].StatusCode, w)
		}
	}
	if res[2].Instance == nil || res[2].Instance.ID != "b" {
		t.Errorf("a 409 heartbeat comes with the receiver's copy: %+v", res[2].Instance)
	}
	if in, ok := reg.Snapshot().Instance(app, "a"); !ok || in.Status != heureka.StatusOutOfService {
		t.Errorf("a after the batch: %+v %v", in, ok)
	}
}

func TestReceiverRefusesWhatIsNotABatch(t *testing.T) {
	rc, reg := newReceiver(t)
	for _, body := range []string{"\xff\xfe{}", `{"replicationList":`, `[]`} {
		if _, err := rc.Batch([]byte(body)); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("batch %q: error %v, want EINVALID", body, err)
		}
	}
	if reg.Snapshot().Len() != 0 {
		t.Fatal("a refused batch changed the registry")
	}
}

func TestReceiverDigestAndApp(t *testing.T) {
	rc, reg := newReceiver(t)
	for _, id := range []string{"a", "b"} {
		if err := reg.Register(dn(id), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Cancel(registry.CancelRequest{App: "HDFS-DATANODE.PROD", ID: "b"}); err != nil {
		t.Fatal(err)
	}
	body, err := rc.Digest()
	if err != nil {
		t.Fatal(err)
	}
	var d replication.Digest
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	wantDigest := replication.FormatDigest(reg.Snapshot().Digests()["HDFS-DATANODE.PROD"])
	if d.Node != "node-a" || d.Apps["HDFS-DATANODE.PROD"] != wantDigest || len(d.Tombstones) != 1 || d.Tombstones[0].ID != "b" {
		t.Fatalf("digest %s", body)
	}
	app, err := rc.App("HDFS-DATANODE.PROD")
	if err != nil {
		t.Fatal(err)
	}
	a, err := eureka.DecodeApplication(app, eureka.JSON)
	if err != nil || len(a.Instances) != 1 || a.Instances[0].ID != "a" {
		t.Fatalf("application %s: %v", app, err)
	}
	if _, err := rc.App("NOBODY"); heureka.ErrorCode(err) != heureka.ENOTFOUND {
		t.Fatalf("unknown application: %v", err)
	}
}

// A numbered batch at or below the highest number applied from its sender
// is late (its sender gave up on it and sent its writes again since):
// nothing in it is applied. Senders are numbered apart.
func TestReceiverRefusesALateBatch(t *testing.T) {
	rc, reg := newReceiver(t)
	const app = "HDFS-DATANODE.PROD"
	if err := reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	override := eureka.EncodeReplicationList([]eureka.ReplicationItem{
		{Action: "StatusUpdate", AppName: app, ID: "a", Status: heureka.StatusOutOfService}})
	clear := eureka.EncodeReplicationList([]eureka.ReplicationItem{
		{Action: "StatusUpdate", AppName: app, ID: "a", Status: heureka.StatusOutOfService},
		{Action: "DeleteStatusOverride", AppName: app, ID: "a", Status: heureka.StatusUp}})
	if _, last, err := rc.BatchInOrder("node-b", 20, clear); err != nil || last != 20 {
		t.Fatalf("batch 20: last %d, %v", last, err)
	}
	for _, seq := range []uint64{19, 20} {
		_, last, err := rc.BatchInOrder("node-b", seq, override)
		if heureka.ErrorCode(err) != heureka.ECONFLICT || last != 20 {
			t.Errorf("late batch %d: last %d, error %v; want ECONFLICT and 20", seq, last, err)
		}
	}
	if in, _ := reg.Snapshot().Instance(app, "a"); in.Status != heureka.StatusUp {
		t.Fatalf("a late batch was applied: a is %s, want UP", in.Status)
	}
	// Another sender has numbers of its own.
	if _, _, err := rc.BatchInOrder("node-c", 5, override); err != nil {
		t.Fatalf("node-c's first batch: %v", err)
	}
	if in, _ := reg.Snapshot().Instance(app, "a"); in.Status != heureka.StatusOutOfService {
		t.Fatalf("node-c's batch was not applied: a is %s", in.Status)
	}
	for _, seq := range []uint64{0, 1 << 63} {
		if _, _, err := rc.BatchInOrder("node-d", seq, override); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("batch number %d: error %v, want EINVALID", seq, err)
		}
	}
	// A body that is not a batch uses up no number.
	if _, _, err := rc.BatchInOrder("node-b", 30, []byte(`[]`)); heureka.ErrorCode(err) != heureka.EINVALID {
		t.Fatalf("garbage: %v", err)
	}
	if _, last, err := rc.BatchInOrder("node-b", 21, clear); err != nil || last != 21 {
		t.Fatalf("batch 21 after a refused 30: last %d, %v", last, err)
	}
}

// A receiver remembers a bounded number of senders (every start of a
// server is a new node ID), forgetting the one heard from least recently:
// a sender in use keeps its order however many others come and go.
func TestReceiverForgetsTheOldestSender(t *testing.T) {
	rc, _ := newReceiver(t)
	empty := []byte(`{"replicationList":[]}`)
	if _, _, err := rc.BatchInOrder("old", 10, empty); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rc.BatchInOrder("busy", 10, empty); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if _, _, err := rc.BatchInOrder(fmt.Sprintf("gone-%d", i), 1, empty); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 { // busy keeps sending
			if _, _, err := rc.BatchInOrder("busy", uint64(11+i), empty); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := rc.BatchInOrder("busy", 5, empty); heureka.ErrorCode(err) != heureka.ECONFLICT {
		t.Errorf("a late batch from a sender in use: %v, want ECONFLICT", err)
	}
	// The oldest was forgotten: its numbers start again.
	if _, _, err := rc.BatchInOrder("old", 5, empty); err != nil {
		t.Errorf("a forgotten sender's batch: %v, want it applied", err)
	}
}

// The per-instance digests are Digests' hash of each instance alone, and
// App given IDs answers with those instances only.
func TestReceiverInstanceDigestsAndAppByID(t *testing.T) {
	rc, reg := newReceiver(t)
	const app = "HDFS-DATANODE.PROD"
	for _, id := range []string{"a", "b", "c"} {
		if err := reg.Register(dn(id), false); err != nil {
			t.Fatal(err)
		}
	}
	body, err := rc.AppDigests(app)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	snap := reg.Snapshot()
	for _, id := range []string{"a", "b", "c"} {
		in, _ := snap.Instance(app, id)
		if want := replication.FormatDigest(registry.DigestOf([]*heureka.Instance{in})); got[id] != want {
			t.Fatalf("digest of %s: %q, want %q (all: %s)", id, got[id], want, body)
		}
	}
	if len(got) != 3 {
		t.Fatalf("digests %s", body)
	}
	out, err := rc.App(app, "c", "a", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	a, err := eureka.DecodeApplication(out, eureka.JSON)
	if err != nil || len(a.Instances) != 2 || a.Instances[0].ID != "a" || a.Instances[1].ID != "c" {
		t.Fatalf("application by ID %s: %v", out, err)
	}
	if _, err := rc.AppDigests("NOBODY"); heureka.ErrorCode(err) != heureka.ENOTFOUND {
		t.Fatalf("unknown application: %v", err)
	}
}

package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/httpapi"
)

// peerRefusalsOf reads the "peerRefusals" entry of /v1/status.
func peerRefusalsOf(t *testing.T, ts *testServer, hdr ...string) (requests map[string]uint64, items uint64, last map[string]any) {
	t.Helper()
	r := ts.expect(200, "GET", "/v1/status", nil, append([]string{"Accept", jsonAccept}, hdr...)...)
	var st struct {
		PeerRefusals struct {
			Requests map[string]uint64 `json:"requests"`
			Items    uint64            `json:"items"`
			Last     map[string]any    `json:"last"`
		} `json:"peerRefusals"`
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("/v1/status: %v: %s", err, r.body)
	}
	return st.PeerRefusals.Requests, st.PeerRefusals.Items, st.PeerRefusals.Last
}

// TestPretendPeersAreRefusedAndReported: a caller without the peer role
// that posts a replication batch, or sends a write with the replication
// header, is refused (401 or 403), changes nothing, and is counted and
// named in /v1/status and in the log.
func TestPretendPeersAreRefusedAndReported(t *testing.T) {
	as := newAuthServer(t, auth.ReadsOpen)
	as.seed()
	before := as.apps()
	cancel := `{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"dn1","action":"Cancel"}]}`
	ct := []string{"Content-Type", jsonAccept, "Accept", jsonAccept}
	as.expect(401, "POST", "/eureka/peerreplication/batch", []byte(cancel), ct...)
	as.expect(403, "POST", "/eureka/peerreplication/batch", []byte(cancel), append(ct, "Authorization", header(uDN))...)
	as.expect(403, "POST", "/eureka/peerreplication/batch", []byte(cancel), append(ct, "Authorization", header(uOps))...)
	as.expect(403, "GET", "/v1/replication/digest", nil, append(ct, "Authorization", header(uReader))...)
	// An agent claiming its own write is a replication, to get past the
	// override rules.
	as.expect(403, "DELETE", "/eureka/apps/HDFS-DATANODE.PROD/dn1", nil, "Authorization", header(uDN), "x-netflix-discovery-replication", "true")
	// Ordinary refusals of clients are not a peer's business.
	as.expect(403, "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nn1", nil, "Authorization", header(uDN))

	if after := as.apps(); after != before {
		t.Fatalf("refused requests changed the registry:\nbefore %s\nafter  %s", before, after)
	}
	req, _, last := peerRefusalsOf(t, as.testServer)
	if req["unauthenticated"] != 1 || req["forbidden"] != 4 {
		t.Errorf("refusals by reason %v, want unauthenticated 1 and forbidden 4", req)
	}
	if last["user"] != "dn-agent" || last["status"] != float64(403) || !strings.Contains(fmt.Sprint(last["path"]), "/apps/HDFS-DATANODE.PROD/dn1") {
		t.Errorf("last refusal %v, want dn-agent's replicated cancel, 403", last)
	}
	if logs := as.logs.String(); strings.Count(logs, "refused a request claiming to come from a peer") != 5 {
		t.Errorf("want one log line per refusal (5):\n%s", logs)
	}
	// The real peer passes.
	as.expect(200, "POST", "/eureka/peerreplication/batch", []byte(cancel), append(ct, "Authorization", header(uPeer))...)
}

// TestHostilePeerBatches: batches from a peer with absurd timestamps,
// a body over the limit, garbage, and a batch replayed out of order. Each
// bad item is refused on its own (400) and counted, the batch as a whole
// gets the status its fault deserves, and the registry stays as it was: in
// particular, no timestamp from the future pins a record against later
// updates.
func TestHostilePeerBatches(t *testing.T) {
	ts := newTestServer(t, func(c *httpapi.Config) { c.MaxBodyBytes = 64 << 10 })
	ts.registerJSON(newInst("HDFS-DATANODE.PROD", "dn1"))
	ct := []string{"Content-Type", jsonAccept, "Accept", jsonAccept}
	now := time.Now()
	future := now.Add(24 * time.Hour).UnixMilli()
	far := newInst("HDFS-DATANODE.PROD", "dn1")
	far.lastDirty, far.metadata = future, map[string]string{"from": "the future"}
	farIn, err := eureka.DecodeInstance(far.json(), eureka.JSON)
	if err != nil {
		t.Fatal(err)
	}
	neg := newInst("HDFS-DATANODE.PROD", "dn2")
	neg.lastDirty = -5
	negIn, err := eureka.DecodeInstance(neg.json(), eureka.JSON)
	if err != nil {
		t.Fatal(err)
	}
	// Times the receiver sets itself are ignored, however absurd.
	odd := newInst("HDFS-DATANODE.PROD", "dn3")
	oddIn, err := eureka.DecodeInstance(odd.json(), eureka.JSON)
	if err != nil {
		t.Fatal(err)
	}
	oddIn.LastUpdatedTimestamp, oddIn.Lease.RegistrationTimestamp, oddIn.Lease.LastRenewalTimestamp = future, future, -7
	const app = "HDFS-DATANODE.PROD"
	okay := eureka.EncodeReplicationList([]eureka.ReplicationItem{{Action: "Register", AppName: app, ID: "dn3", Instance: oddIn}})
	ts.expect(200, "POST", "/eureka/peerreplication/batch", okay, ct...)
	if in, ok := ts.reg.Snapshot().Instance(app, "dn3"); !ok || in.LastUpdatedTimestamp > time.Now().UnixMilli() ||
		in.Lease.RegistrationTimestamp > time.Now().UnixMilli() || in.Lease.LastRenewalTimestamp < now.UnixMilli() {
		t.Fatalf("dn3 kept a peer's times: %+v", in)
	}
	items := []eureka.ReplicationItem{
		{Action: "Register", AppName: app, ID: "dn1", Instance: farIn, LastDirtyTimestamp: future},
		{Action: "Register", AppName: app, ID: "dn2", Instance: negIn},
		{Action: "StatusUpdate", AppName: app, ID: "dn1", Status: heureka.StatusOutOfService, LastDirtyTimestamp: future},
		{Action: "DeleteStatusOverride", AppName: app, ID: "dn1", Status: heureka.StatusDown, LastDirtyTimestamp: -1},
		{Action: "Heartbeat", AppName: app, ID: "dn1", LastDirtyTimestamp: future, OverriddenStatus: heureka.StatusOutOfService},
	}
	r := ts.expect(200, "POST", "/eureka/peerreplication/batch", eureka.EncodeReplicationList(items), ct...)
	res, err := eureka.DecodeReplicationResults(r.body)
	if err != nil || len(res) != len(items) {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	for i, rr := range res {
		if rr.StatusCode != 400 {
			t.Errorf("item %d (%s, lastDirtyTimestamp %d): %d, want 400", i, items[i].Action, items[i].LastDirtyTimestamp, rr.StatusCode)
		}
	}
	in, ok := ts.reg.Snapshot().Instance(app, "dn1")
	if !ok || in.LastDirtyTimestamp != 1717171717000 || in.Status != heureka.StatusUp || in.Metadata.Get("from") != "" {
		t.Fatalf("dn1 after the hostile batch: %+v", in)
	}
	if _, ok := ts.reg.Snapshot().Instance(app, "dn2"); ok {
		t.Fatal("dn2 was registered with a negative lastDirtyTimestamp")
	}
	// A client's own heartbeat from the future is refused with a message
	// that names the clocks.
	r = ts.expect(400, "PUT", fmt.Sprintf("/eureka/apps/%s/dn1?lastDirtyTimestamp=%d", app, future), nil, "Accept", jsonAccept)
	if !strings.Contains(string(r.body), "ahead of this server's clock") {
		t.Errorf("the refusal does not say what is wrong: %s", r)
	}
	// The record still takes real updates.
	upd := newInst(app, "dn1")
	upd.lastDirty, upd.metadata = now.UnixMilli(), map[string]string{"rev": "2"}
	ts.registerJSON(upd)
	if in, _ := ts.reg.Snapshot().Instance(app, "dn1"); in.Metadata.Get("rev") != "2" {
		t.Fatalf("a current registration did not win: %+v", in.Metadata)
	}

	before := ts.apps()
	// Over the body limit, garbage, and a batch numbered below one
	// applied already.
	big := `{"replicationList":[` + strings.Repeat(`{"appName":"A","id":"x","action":"Cancel"},`, 2000) + `{"appName":"A","id":"x","action":"Cancel"}]}`
	ts.expect(413, "POST", "/eureka/peerreplication/batch", []byte(big), ct...)
	ts.expect(400, "POST", "/eureka/peerreplication/batch", []byte(`{"replicationList":[{"appName":`), ct...)
	ts.expect(400, "POST", "/eureka/peerreplication/batch", []byte(`{"replicationList":[]}`), append(ct, "X-Heureka-Node", "p9", "X-Heureka-Batch-Seq", "soon")...)
	cancel := eureka.EncodeReplicationList([]eureka.ReplicationItem{{Action: "Cancel", AppName: app, ID: "dn1"}})
	ts.expect(200, "POST", "/eureka/peerreplication/batch", []byte(`{"replicationList":[]}`), append(ct, "X-Heureka-Node", "p9", "X-Heureka-Batch-Seq", "100")...)
	r = ts.expect(409, "POST", "/eureka/peerreplication/batch", cancel, append(ct, "X-Heureka-Node", "p9", "X-Heureka-Batch-Seq", "99")...)
	if r.header.Get("X-Heureka-Batch-Seq") != "100" {
		t.Errorf("a late batch's answer names the last applied as %q, want 100", r.header.Get("X-Heureka-Batch-Seq"))
	}
	if after := ts.apps(); after != before {
		t.Fatalf("refused batches changed the registry:\nbefore %s\nafter  %s", before, after)
	}
	req, refusedItems, _ := peerRefusalsOf(t, ts)
	if refusedItems != uint64(len(items)) {
		t.Errorf("items refused %d, want %d", refusedItems, len(items))
	}
	if req["tooLarge"] != 1 || req["invalid"] != 2 || req["lateBatch"] != 1 {
		t.Errorf("refused batches by reason %v, want tooLarge 1, invalid 2, lateBatch 1", req)
	}
}

// A peer's anti-entropy request that names more instances than the bound
// is refused with a message, not answered with a listing built for it.
func TestPeerAppByIDIsBounded(t *testing.T) {
	ts := newTestServer(t)
	ts.expect(204, "POST", "/eureka/apps/HDFS-DATANODE.PROD", []byte(`{"instance":{"instanceId":"dn1","app":"HDFS-DATANODE.PROD","hostName":"dn1.example","ipAddr":"10.0.0.1","status":"UP","dataCenterInfo":{"name":"MyOwn"}}}`),
		"Content-Type", jsonAccept)
	ids := strings.Repeat("id=dn1&", 1025)
	r := ts.expect(400, "GET", "/v1/replication/apps/HDFS-DATANODE.PROD?"+ids, nil, "Accept", jsonAccept)
	if !strings.Contains(string(r.body), "at most 1024") {
		t.Fatalf("refusal %s", r)
	}
	r = ts.expect(200, "GET", "/v1/replication/apps/HDFS-DATANODE.PROD?id=dn1&id=dn9", nil, "Accept", jsonAccept)
	if a, err := eureka.DecodeApplication(r.body, eureka.JSON); err != nil || len(a.Instances) != 1 || a.Instances[0].ID != "dn1" {
		t.Fatalf("by ID %s: %v", r.body, err)
	}
}

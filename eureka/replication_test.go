package eureka

import (
	"encoding/json"
	"testing"

	"github.com/heureka-project/heureka"
)

// javaBatch has the shape a Netflix Eureka peer sends: instanceInfo only
// with Register, lastDirtyTimestamp as a number, Cancel with app, id and
// action alone.
const javaBatch = `{"replicationList":[
 {"appName":"ORDERS","id":"10.1.2.3:orders:8080","lastDirtyTimestamp":1717171717000,"status":"UP",
  "instanceInfo":{"instanceId":"10.1.2.3:orders:8080","hostName":"10.1.2.3","app":"ORDERS","ipAddr":"10.1.2.3",
   "status":"UP","overriddenStatus":"UNKNOWN","port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},
   "countryId":1,"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
   "leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90},"metadata":{"zone":"z1"},
   "lastDirtyTimestamp":"1717171717000"},"action":"Register"},
 {"appName":"ORDERS","id":"10.1.2.4:orders:8080","lastDirtyTimestamp":1717171700000,"status":"UP","overriddenStatus":"OUT_OF_SERVICE","action":"Heartbeat"},
 {"appName":"ORDERS","id":"10.1.2.5:orders:8080","action":"Cancel"},
 {"appName":"ORDERS","id":"10.1.2.6:orders:8080","lastDirtyTimestamp":1717171800000,"status":"OUT_OF_SERVICE","action":"StatusUpdate"},
 {"appName":"ORDERS","id":"10.1.2.7:orders:8080","lastDirtyTimestamp":1717171900000,"status":"UNKNOWN","action":"DeleteStatusOverride"}]}`

func TestDecodeJavaReplicationBatch(t *testing.T) {
	items, errs, err := DecodeReplicationList([]byte(javaBatch))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 {
		t.Fatalf("%d items, want 5", len(items))
	}
	for i, e := range errs {
		if e != nil {
			t.Errorf("item %d: %v", i, e)
		}
	}
	reg := items[0]
	if reg.Action != "Register" || reg.Instance == nil || reg.Instance.ID != "10.1.2.3:orders:8080" ||
		reg.Instance.Metadata.Get("zone") != "z1" || reg.LastDirtyTimestamp != 1717171717000 {
		t.Errorf("register item %+v", reg)
	}
	hb := items[1]
	if hb.Action != "Heartbeat" || hb.OverriddenStatus != heureka.StatusOutOfService || hb.Instance != nil {
		t.Errorf("heartbeat item %+v", hb)
	}
	if c := items[2]; c.Action != "Cancel" || c.ID != "10.1.2.5:orders:8080" || c.LastDirtyTimestamp != 0 {
		t.Errorf("cancel item %+v", c)
	}
	if d := items[4]; d.Status != heureka.StatusUnknown || d.Action != "DeleteStatusOverride" {
		t.Errorf("delete-override item %+v", d)
	}
}

func TestReplicationRoundTrip(t *testing.T) {
	in := &heureka.Instance{ID: "a", App: "DN", HostName: "h", IPAddr: "127.0.0.1", Metadata: heureka.MetadataOf(map[string]string{"rack": "/r1"})}
	in.Normalize()
	items := []ReplicationItem{
		{AppName: "DN", ID: "a", Action: "Register", Instance: in, LastDirtyTimestamp: 5, Status: heureka.StatusUp},
		{AppName: "DN", ID: "a", Action: "Heartbeat", Status: heureka.StatusUp, OverriddenStatus: heureka.StatusOutOfService},
		{AppName: "DN", ID: "a", Action: "Cancel"},
	}
	body := EncodeReplicationList(items)
	if !json.Valid(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	got, errs, err := DecodeReplicationList(body)
	if err != nil || len(got) != 3 {
		t.Fatalf("decode: %v, %d items", err, len(got))
	}
	for _, e := range errs {
		if e != nil {
			t.Fatal(e)
		}
	}
	if got[0].Instance.Metadata.Get("rack") != "/r1" || got[1].OverriddenStatus != heureka.StatusOutOfService || got[2].Action != "Cancel" {
		t.Fatalf("round trip lost data: %+v", got)
	}

	res := EncodeReplicationResults([]ReplicationResult{{StatusCode: 200}, {StatusCode: 409, Instance: in}, {StatusCode: 404}})
	rs, err := DecodeReplicationResults(res)
	if err != nil || len(rs) != 3 || rs[1].StatusCode != 409 || rs[1].Instance == nil || rs[1].Instance.ID != "a" || rs[2].StatusCode != 404 {
		t.Fatalf("results round trip: %+v, %v (%s)", rs, err, res)
	}
}

func TestDecodeReplicationListErrors(t *testing.T) {
	if _, _, err := DecodeReplicationList([]byte(`{"replicationList":`)); heureka.ErrorCode(err) != heureka.EINVALID {
		t.Fatalf("truncated batch: %v, want EINVALID", err)
	}
	items, errs, err := DecodeReplicationList([]byte(`{"replicationList":[{"appName":"A","id":"x","action":"Register","instanceInfo":{"port":[1]}},{"appName":"A","id":"y","action":"Cancel"}]}`))
	if err != nil || len(items) != 2 {
		t.Fatalf("%v, %d items", err, len(items))
	}
	if errs[0] == nil || errs[1] != nil {
		t.Fatalf("per-item errors %v: want the bad instance reported and the cancel fine", errs)
	}
}

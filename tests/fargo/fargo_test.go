// Package fargo_test runs the real github.com/hudl/fargo client against a
// heureka server process, in both of fargo's wire modes.
package fargo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hudl/fargo"
)

// mode is one way fargo talks to the server. Each mode also uses a different
// URL prefix, so both of heureka's prefixes meet a real client.
type mode struct {
	name    string
	useJSON bool
	prefix  string
	// underscoreKey is the name under which fargo reports the metadata key
	// "disk_used". The server writes XML element names the way Eureka's
	// XStream does (`_` → `__`); Java readers undo that, fargo does not.
	underscoreKey string
}

var modes = []mode{
	{name: "xml", useJSON: false, prefix: "/eureka/v2", underscoreKey: "disk__used"},
	{name: "json", useJSON: true, prefix: "/eureka", underscoreKey: "disk_used"},
}

// forEachMode runs f as a parallel subtest per mode, each with its own server.
func forEachMode(t *testing.T, f func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t)
			conn := fargo.NewConn(s.URL(m.prefix))
			conn.UseJson = m.useJSON
			f(t, m, s, &conn)
		})
	}
}

const (
	appName = "hdfs-datanode" // registered in lower case on purpose
	appKey  = "HDFS-DATANODE" // how every response names it
	vip     = "datanode.test"
	svip    = "datanode-secure.test"
)

// wantMetadata is what every test instance registers. Values avoid numbers
// and booleans: fargo's XML metadata parser recasts those.
var wantMetadata = map[string]string{
	"cluster":   "prod-a",
	"rack":      "/dc1/rack7",
	"hdfs.role": "datanode",
	"disk_used": "high",
}

// newInstance returns an instance of appName on host:port, UP, with
// wantMetadata and both VIPs.
func newInstance(host string, port int) *fargo.Instance {
	ins := &fargo.Instance{
		InstanceId:        fmt.Sprintf("%s:%s:%d", host, appName, port),
		HostName:          host,
		App:               appName,
		IPAddr:            "127.0.0.1",
		VipAddress:        vip,
		SecureVipAddress:  svip,
		Status:            fargo.UP,
		Port:              port,
		PortEnabled:       true,
		SecurePort:        port + 1,
		SecurePortEnabled: false,
		HomePageUrl:       fmt.Sprintf("http://%s:%d/", host, port),
		StatusPageUrl:     fmt.Sprintf("http://%s:%d/jmx", host, port),
		HealthCheckUrl:    fmt.Sprintf("http://%s:%d/health", host, port),
		DataCenterInfo:    fargo.DataCenterInfo{Name: fargo.MyOwn},
	}
	for k, v := range wantMetadata {
		ins.SetMetadataString(k, v)
	}
	return ins
}

// register registers a fresh instance and returns it as fargo read it back.
func register(t *testing.T, conn *fargo.EurekaConnection, host string, port int) *fargo.Instance {
	t.Helper()
	ins := newInstance(host, port)
	if err := conn.RegisterInstance(ins); err != nil {
		t.Fatalf("RegisterInstance(%s): %v", ins.InstanceId, err)
	}
	return ins
}

// findInstance returns the instance with id in app, or nil.
func findInstance(app *fargo.Application, id string) *fargo.Instance {
	for _, in := range app.Instances {
		if in.Id() == id {
			return in
		}
	}
	return nil
}

// checkInstance compares what fargo decoded with what newInstance(host, port) registered.
func checkInstance(t *testing.T, m mode, got *fargo.Instance, host string, port int) {
	t.Helper()
	want := newInstance(host, port)
	if got.InstanceId != want.InstanceId {
		t.Errorf("instanceId = %q, want %q", got.InstanceId, want.InstanceId)
	}
	if got.App != appKey {
		t.Errorf("app = %q, want %q", got.App, appKey)
	}
	if got.HostName != host || got.IPAddr != want.IPAddr {
		t.Errorf("hostName, ipAddr = %q, %q; want %q, %q", got.HostName, got.IPAddr, host, want.IPAddr)
	}
	if got.Port != port || !got.PortEnabled {
		t.Errorf("port = %d enabled=%v, want %d enabled=true", got.Port, got.PortEnabled, port)
	}
	if got.SecurePort != port+1 || got.SecurePortEnabled {
		t.Errorf("securePort = %d enabled=%v, want %d enabled=false", got.SecurePort, got.SecurePortEnabled, port+1)
	}
	if got.VipAddress != vip || got.SecureVipAddress != svip {
		t.Errorf("vipAddress, secureVipAddress = %q, %q; want %q, %q", got.VipAddress, got.SecureVipAddress, vip, svip)
	}
	if got.HomePageUrl != want.HomePageUrl || got.HealthCheckUrl != want.HealthCheckUrl || got.StatusPageUrl != want.StatusPageUrl {
		t.Errorf("urls = %q %q %q; want %q %q %q", got.HomePageUrl, got.StatusPageUrl, got.HealthCheckUrl,
			want.HomePageUrl, want.StatusPageUrl, want.HealthCheckUrl)
	}
	if got.DataCenterInfo.Name != fargo.MyOwn {
		t.Errorf("dataCenterInfo.name = %q, want %q", got.DataCenterInfo.Name, fargo.MyOwn)
	}
	checkMetadata(t, m, got, wantMetadata)
}

// checkMetadata checks that fargo sees exactly want (after parsing), with
// "disk_used" under the name the mode documents.
func checkMetadata(t *testing.T, m mode, got *fargo.Instance, want map[string]string) {
	t.Helper()
	if _, err := got.Metadata.GetString("cluster"); err != nil { // parses Raw if needed
		t.Fatalf("metadata does not parse: %v (raw %q)", err, got.Metadata.Raw)
	}
	seen := got.Metadata.GetMap()
	expect := map[string]string{}
	for k, v := range want {
		if k == "disk_used" {
			k = m.underscoreKey
		}
		expect[k] = v
	}
	for k, v := range expect {
		gv, ok := seen[k]
		if !ok {
			t.Errorf("metadata key %q missing; fargo sees %v (raw %q)", k, seen, got.Metadata.Raw)
			continue
		}
		if s, _ := gv.(string); s != v {
			t.Errorf("metadata[%q] = %#v, want %q", k, gv, v)
		}
	}
	for k := range seen {
		if _, ok := expect[k]; !ok {
			t.Errorf("unexpected metadata key %q = %#v (raw %q)", k, seen[k], got.Metadata.Raw)
		}
	}
}

// getApp fetches app and fails unless it holds exactly the ids given.
func getApp(t *testing.T, conn *fargo.EurekaConnection, ids ...string) *fargo.Application {
	t.Helper()
	app, err := conn.GetApp(appName)
	if err != nil {
		t.Fatalf("GetApp(%q): %v", appName, err)
	}
	if app.Name != appKey {
		t.Errorf("GetApp name = %q, want %q", app.Name, appKey)
	}
	var got []string
	for _, in := range app.Instances {
		got = append(got, in.Id())
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(got, want) {
		t.Fatalf("GetApp instances = %v, want %v", got, want)
	}
	return app
}

// rawInstance reads an instance as JSON straight from the server, to check
// what the server stored independently of fargo's decoding.
func rawInstance(t *testing.T, s *server, prefix, app, id string) map[string]any {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL(prefix)+"/apps/"+app+"/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200", req.URL, resp.StatusCode)
	}
	var body struct {
		Instance map[string]any `json:"instance"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: decoding: %v", req.URL, err)
	}
	return body.Instance
}

func TestRegisterHeartbeatRead(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection) {
		ins := register(t, conn, "dn1.example.net", 9866)
		id := ins.Id()

		// RegisterInstance read the registration back into ins.
		checkInstance(t, m, ins, "dn1.example.net", 9866)
		if ins.Status != fargo.UP {
			t.Errorf("read-back status = %q, want UP", ins.Status)
		}
		// fargo sends lease intervals of zero: they mean Eureka's defaults.
		if ins.LeaseInfo.RenewalIntervalInSecs != 30 || ins.LeaseInfo.DurationInSecs != 90 {
			t.Errorf("leaseInfo renewal, duration = %d, %d; want 30, 90",
				ins.LeaseInfo.RenewalIntervalInSecs, ins.LeaseInfo.DurationInSecs)
		}
		if ins.LeaseInfo.RegistrationTimestamp == 0 {
			t.Errorf("leaseInfo.registrationTimestamp = 0, want the registration time")
		}

		// The server stored the key as registered, whatever the wire mode.
		raw := rawInstance(t, s, m.prefix, appKey, id)
		md, _ := raw["metadata"].(map[string]any)
		if md["disk_used"] != "high" {
			t.Errorf("server's JSON metadata = %v, want disk_used=high", md)
		}

		for range 3 {
			if err := conn.HeartBeatInstance(ins); err != nil {
				t.Fatalf("HeartBeatInstance: %v", err)
			}
		}

		app := getApp(t, conn, id)
		got := findInstance(app, id)
		checkInstance(t, m, got, "dn1.example.net", 9866)
		if got.Status != fargo.UP {
			t.Errorf("GetApp status = %q, want UP", got.Status)
		}

		apps, err := conn.GetApps()
		if err != nil {
			t.Fatalf("GetApps: %v", err)
		}
		a, ok := apps[appKey]
		if !ok {
			t.Fatalf("GetApps has no %q: %v", appKey, keys(apps))
		}
		if len(a.Instances) != 1 {
			t.Fatalf("GetApps[%q] has %d instances, want 1", appKey, len(a.Instances))
		}
		checkInstance(t, m, a.Instances[0], "dn1.example.net", 9866)
		if a.Instances[0].Status != fargo.UP {
			t.Errorf("GetApps status = %q, want UP", a.Instances[0].Status)
		}

		// A second RegisterInstance finds the instance (GET 200) and does
		// nothing: still one instance.
		if err := conn.RegisterInstance(newInstance("dn1.example.net", 9866)); err != nil {
			t.Fatalf("second RegisterInstance: %v", err)
		}
		getApp(t, conn, id)
	})
}

func TestStatusOverride(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection) {
		ins := register(t, conn, "dn2.example.net", 9866)
		id := ins.Id()

		status := func() (fargo.StatusType, fargo.StatusType) {
			t.Helper()
			got := findInstance(getApp(t, conn, id), id)
			return got.Status, got.Overriddenstatus
		}

		if err := conn.UpdateInstanceStatus(ins, fargo.OUTOFSERVICE); err != nil {
			t.Fatalf("UpdateInstanceStatus(OUT_OF_SERVICE): %v", err)
		}
		if st, ov := status(); st != fargo.OUTOFSERVICE || ov != fargo.OUTOFSERVICE {
			t.Fatalf("after OUT_OF_SERVICE: status, overriddenstatus = %q, %q; want OUT_OF_SERVICE twice", st, ov)
		}

		// The override survives heartbeats.
		if err := conn.HeartBeatInstance(ins); err != nil {
			t.Fatalf("HeartBeatInstance: %v", err)
		}
		if st, _ := status(); st != fargo.OUTOFSERVICE {
			t.Fatalf("after a heartbeat: status = %q, want OUT_OF_SERVICE", st)
		}
		vis, err := conn.GetInstancesByVIPAddress(vip, false, fargo.ThatAreUp)
		if err != nil {
			t.Fatalf("GetInstancesByVIPAddress(ThatAreUp): %v", err)
		}
		if len(vis) != 0 {
			t.Errorf("VIP lookup of UP instances found %d while OUT_OF_SERVICE, want 0", len(vis))
		}

		if err := conn.UpdateInstanceStatus(ins, fargo.UP); err != nil {
			t.Fatalf("UpdateInstanceStatus(UP): %v", err)
		}
		if st, _ := status(); st != fargo.UP {
			t.Fatalf("after UP: status = %q, want UP", st)
		}
		if err := conn.HeartBeatInstance(ins); err != nil {
			t.Fatalf("HeartBeatInstance after UP: %v", err)
		}
		if st, _ := status(); st != fargo.UP {
			t.Fatalf("after UP and a heartbeat: status = %q, want UP", st)
		}
	})
}

func TestMetadataUpdate(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection) {
		ins := register(t, conn, "dn3.example.net", 9866)
		id := ins.Id()

		if err := conn.AddMetadataString(ins, "hdfs.state", "decommissioning"); err != nil {
			t.Fatalf("AddMetadataString: %v", err)
		}
		want := map[string]string{"hdfs.state": "decommissioning"}
		for k, v := range wantMetadata {
			want[k] = v
		}
		checkMetadata(t, m, findInstance(getApp(t, conn, id), id), want)

		// A later value for the same key replaces the earlier one.
		if err := conn.AddMetadataString(ins, "hdfs.state", "decommissioned"); err != nil {
			t.Fatalf("second AddMetadataString: %v", err)
		}
		want["hdfs.state"] = "decommissioned"
		checkMetadata(t, m, findInstance(getApp(t, conn, id), id), want)

		// Still alive and UP after the updates.
		if err := conn.HeartBeatInstance(ins); err != nil {
			t.Fatalf("HeartBeatInstance: %v", err)
		}
		if st := findInstance(getApp(t, conn, id), id).Status; st != fargo.UP {
			t.Errorf("status after metadata updates = %q, want UP", st)
		}

		// Metadata of an unknown instance: 404.
		ghost := newInstance("ghost.example.net", 1)
		err := conn.AddMetadataString(ghost, "k", "v")
		if code, ok := fargo.HTTPResponseStatusCode(err); !ok || code != http.StatusNotFound {
			t.Errorf("AddMetadataString(unknown) = %v, want an HTTP 404 error", err)
		}
	})
}

func TestVIPLookup(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection) {
		a := register(t, conn, "dn4.example.net", 9866)
		b := register(t, conn, "dn5.example.net", 9876)
		other := &fargo.Instance{
			InstanceId:     "nn1.example.net:hdfs-namenode:8020",
			HostName:       "nn1.example.net",
			App:            "hdfs-namenode",
			IPAddr:         "127.0.0.2",
			VipAddress:     "namenode.test",
			Status:         fargo.UP,
			Port:           8020,
			PortEnabled:    true,
			DataCenterInfo: fargo.DataCenterInfo{Name: fargo.MyOwn},
		}
		if err := conn.RegisterInstance(other); err != nil {
			t.Fatalf("RegisterInstance(namenode): %v", err)
		}

		lookup := func(addr string, secure bool, opts ...fargo.InstanceQueryOption) []string {
			t.Helper()
			ins, err := conn.GetInstancesByVIPAddress(addr, secure, opts...)
			if err != nil {
				t.Fatalf("GetInstancesByVIPAddress(%q, secure=%v): %v", addr, secure, err)
			}
			var ids []string
			for _, in := range ins {
				ids = append(ids, in.Id())
				if in.App != appKey && in.App != "HDFS-NAMENODE" {
					t.Errorf("instance %s has app %q", in.Id(), in.App)
				}
			}
			slices.Sort(ids)
			return ids
		}
		both := slices.Sorted(slices.Values([]string{a.Id(), b.Id()}))
		if got := lookup(vip, false); !slices.Equal(got, both) {
			t.Errorf("vips/%s = %v, want %v", vip, got, both)
		}
		if got := lookup(svip, true); !slices.Equal(got, both) {
			t.Errorf("svips/%s = %v, want %v", svip, got, both)
		}
		if got := lookup("namenode.test", false); !slices.Equal(got, []string{other.Id()}) {
			t.Errorf("vips/namenode.test = %v, want [%s]", got, other.Id())
		}
		// An unknown VIP is an empty result, not an error.
		if got := lookup("nobody.test", false); len(got) != 0 {
			t.Errorf("vips/nobody.test = %v, want none", got)
		}

		if err := conn.UpdateInstanceStatus(b, fargo.DOWN); err != nil {
			t.Fatalf("UpdateInstanceStatus(DOWN): %v", err)
		}
		if got := lookup(vip, false, fargo.ThatAreUp); !slices.Equal(got, []string{a.Id()}) {
			t.Errorf("UP instances of vips/%s = %v, want [%s]", vip, got, a.Id())
		}
	})
}

func TestDeregister(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection) {
		ins := register(t, conn, "dn6.example.net", 9866)
		keep := &fargo.Instance{
			InstanceId:     "other.example.net:keeper:80",
			HostName:       "other.example.net",
			App:            "keeper",
			IPAddr:         "127.0.0.3",
			Status:         fargo.UP,
			Port:           80,
			PortEnabled:    true,
			DataCenterInfo: fargo.DataCenterInfo{Name: fargo.MyOwn},
		}
		if err := conn.RegisterInstance(keep); err != nil {
			t.Fatalf("RegisterInstance(keeper): %v", err)
		}
		getApp(t, conn, ins.Id())

		if err := conn.DeregisterInstance(ins); err != nil {
			t.Fatalf("DeregisterInstance: %v", err)
		}

		_, err := conn.GetApp(appName)
		var notFound fargo.AppNotFoundError
		if !errors.As(err, &notFound) {
			t.Errorf("GetApp after deregister = %v, want fargo.AppNotFoundError (HTTP 404)", err)
		}
		_, err = conn.GetInstance(appName, ins.Id())
		if code, ok := fargo.HTTPResponseStatusCode(err); !ok || code != http.StatusNotFound {
			t.Errorf("GetInstance after deregister = %v, want an HTTP 404 error", err)
		}
		apps, err := conn.GetApps()
		if err != nil {
			t.Fatalf("GetApps: %v", err)
		}
		if _, ok := apps[appKey]; ok {
			t.Errorf("GetApps still lists %q after its only instance left: %v", appKey, keys(apps))
		}
		if _, ok := apps["KEEPER"]; !ok {
			t.Errorf("GetApps lost KEEPER: %v", keys(apps))
		}

		err = conn.HeartBeatInstance(ins)
		if code, ok := fargo.HTTPResponseStatusCode(err); !ok || code != http.StatusNotFound {
			t.Errorf("HeartBeatInstance after deregister = %v, want an HTTP 404 error", err)
		}
		// A second deregister has nothing to remove.
		err = conn.DeregisterInstance(ins)
		if code, ok := fargo.HTTPResponseStatusCode(err); !ok || code != http.StatusNotFound {
			t.Errorf("second DeregisterInstance = %v, want an HTTP 404 error", err)
		}
	})
}

func TestHeartbeatUnknownInstance(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection) {
		// Unknown app.
		err := conn.HeartBeatInstance(newInstance("nobody.example.net", 1))
		if code, ok := fargo.HTTPResponseStatusCode(err); !ok || code != http.StatusNotFound {
			t.Errorf("heartbeat of an unknown app = %v, want an HTTP 404 error", err)
		}
		// Known app, unknown instance.
		register(t, conn, "dn7.example.net", 9866)
		err = conn.HeartBeatInstance(newInstance("dn7.example.net", 9999))
		if code, ok := fargo.HTTPResponseStatusCode(err); !ok || code != http.StatusNotFound {
			t.Errorf("heartbeat of an unknown instance = %v, want an HTTP 404 error", err)
		}
		if err != nil && err.Error() != "heartbeat failed, rcode = "+strconv.Itoa(http.StatusNotFound) {
			t.Errorf("heartbeat error message = %q", err)
		}
	})
}

// TestLeaseRenewalAndExpiry registers with a 2 s lease: heartbeats keep the
// instance well past 2 s, and once they stop it is gone within the lease
// plus a second (heureka expires at last renewal + durationInSecs).
func TestLeaseRenewalAndExpiry(t *testing.T) {
	const lease = 2 * time.Second
	forEachMode(t, func(t *testing.T, m mode, s *server, conn *fargo.EurekaConnection) {
		ins := newInstance("dn8.example.net", 9866)
		ins.LeaseInfo = fargo.LeaseInfo{RenewalIntervalInSecs: 1, DurationInSecs: int32(lease / time.Second)}
		if err := conn.RegisterInstance(ins); err != nil {
			t.Fatalf("RegisterInstance: %v", err)
		}
		if got := ins.LeaseInfo; got.RenewalIntervalInSecs != 1 || got.DurationInSecs != 2 {
			t.Fatalf("leaseInfo renewal, duration = %d, %d; want the registered 1, 2",
				got.RenewalIntervalInSecs, got.DurationInSecs)
		}

		// Renew every 500 ms for twice the lease.
		var lastBeat time.Time
		for end := time.Now().Add(2 * lease); time.Now().Before(end); {
			if err := conn.HeartBeatInstance(ins); err != nil {
				t.Fatalf("HeartBeatInstance: %v", err)
			}
			lastBeat = time.Now()
			if _, err := conn.GetInstance(appName, ins.Id()); err != nil {
				t.Fatalf("GetInstance while renewing: %v", err)
			}
			time.Sleep(500 * time.Millisecond) // the renewal interval: the lease must run on the real clock
		}

		// Stop renewing: the instance must go, but not before its lease ends.
		var goneAfter time.Duration
		waitFor(t, lease+3*time.Second, "the instance to expire", func() error {
			_, err := conn.GetInstance(appName, ins.Id())
			if code, ok := fargo.HTTPResponseStatusCode(err); ok && code == http.StatusNotFound {
				goneAfter = time.Since(lastBeat)
				return nil
			}
			return fmt.Errorf("GetInstance = %v, want 404", err)
		})
		t.Logf("gone %v after the last heartbeat (lease %v)", goneAfter.Round(time.Millisecond), lease)
		if goneAfter < lease-100*time.Millisecond {
			t.Errorf("instance gone %v after its last heartbeat, before its %v lease ended", goneAfter, lease)
		}
		if goneAfter > lease+1500*time.Millisecond {
			t.Errorf("instance gone only %v after its last heartbeat; want within %v + 1 s", goneAfter, lease)
		}
		var notFound fargo.AppNotFoundError
		if _, err := conn.GetApp(appName); !errors.As(err, &notFound) {
			t.Errorf("GetApp after expiry = %v, want fargo.AppNotFoundError", err)
		}
		err := conn.HeartBeatInstance(ins)
		if code, ok := fargo.HTTPResponseStatusCode(err); !ok || code != http.StatusNotFound {
			t.Errorf("heartbeat after expiry = %v, want an HTTP 404 error", err)
		}
	})
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

package yarn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseClusterInfo(t *testing.T) {
	for _, tc := range []struct {
		file          string
		ha            HAState
		zk            ZKConnection
		version, role string
		healthy       bool
		cause         string
	}{
		{"apache/cluster-info-3.x-docs.json", HAActive, ZKNoElector, "3.0.0-SNAPSHOT", "active", true, ""},
		{"own/standby-zk-connected.json", HAStandby, ZKConnected, "3.3.6", "standby", true, ""},
		{"own/active-zk-disconnected.json", HAActive, ZKLost, "3.3.6", "active", false, "lost its ZooKeeper connection (DISCONNECTED)"},
		{"own/curator-standby.json", HAStandby, ZKLost, "3.4.1", "standby", false, "Connected to zookeeper : false"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rm, err := ParseClusterInfo(readFile(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if rm.HAState != tc.ha || rm.ZooKeeper != tc.zk || rm.Version != tc.version || rm.ServiceState != "STARTED" || rm.StartedOn == 0 {
				t.Errorf("got %+v", rm)
			}
			if rm.RoleState() != tc.role {
				t.Errorf("RoleState %q, want %q", rm.RoleState(), tc.role)
			}
			ok, cause := rm.Health()
			if ok != tc.healthy || !strings.Contains(cause, tc.cause) {
				t.Errorf("Health() = %v %q, want %v %q", ok, cause, tc.healthy, tc.cause)
			}
		})
	}
}

func TestHealthRules(t *testing.T) {
	for _, tc := range []struct {
		rm    ResourceManager
		cause string
	}{
		{ResourceManager{ServiceState: "STOPPED", HAState: HAActive}, "service is STOPPED"},
		{ResourceManager{ServiceState: "STARTED", HAState: HAInitializing}, "HA state is initializing"},
		{ResourceManager{ServiceState: "STARTED", HAState: HAStopping}, "HA state is stopping"},
		{ResourceManager{ServiceState: "STARTED", HAState: HAStandby, ZooKeeper: ZKLost, ZooKeeperText: "TERMINATED"}, "(TERMINATED)"},
	} {
		if ok, cause := tc.rm.Health(); ok || !strings.Contains(cause, tc.cause) {
			t.Errorf("%+v: Health() = %v %q, want %q", tc.rm, ok, cause, tc.cause)
		}
	}
	if got := (ResourceManager{ServiceState: "STARTED"}).RoleState(); got != "active" {
		t.Errorf("an RM without HA is %q", got)
	}
}

func TestParseZKConnection(t *testing.T) {
	for in, want := range map[string]ZKConnection{
		"CONNECTED": ZKConnected, "Connected to zookeeper : true": ZKConnected,
		"DISCONNECTED": ZKLost, "TERMINATED": ZKLost, "Connected to zookeeper : false": ZKLost,
		"ResourceManager HA is not enabled.": ZKNoElector, "Auto Failover is not enabled.": ZKNoElector,
		"Could not find leader elector. Verify both HA and automatic failover are enabled.": ZKNoElector,
		"": ZKUnknown, "SOMETHING": ZKUnknown,
	} {
		if got := ParseZKConnection(in); got != want {
			t.Errorf("ParseZKConnection(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseBad(t *testing.T) {
	good := string(readFile(t, "own/standby-zk-connected.json"))
	for in, want := range map[string]string{
		"":                      "not the cluster-info JSON",
		"<html>Standby</html>":  "not the cluster-info JSON",
		good[:len(good)/2]:      "not the cluster-info JSON",
		`{"clusterMetrics":{}}`: `no "clusterInfo" object`,
		`{"clusterInfo":{}}`:    `no "state"`,
		`{"clusterInfo":{"state":"STARTED","haState":"LEADER"}}`: `haState "LEADER" is not one of`,
		`{"clusterInfo":{"state":"STARTED","haState":7}}`:        "not the cluster-info JSON",
	} {
		_, err := ParseClusterInfo([]byte(in))
		if heureka.ErrorCode(err) != heureka.EINVALID || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ClusterInfoPath) {
			t.Errorf("%.40q: %v, want EINVALID naming %s with %q", in, err, ClusterInfoPath, want)
		}
	}
	if _, err := ParseConfProperty([]byte(`{"property":{"key":"other","value":"x"}}`), ClusterIDKey); heureka.ErrorCode(err) != heureka.EINVALID {
		t.Errorf("wrong property: %v", err)
	}
}

func TestRead(t *testing.T) {
	info := readFile(t, "own/standby-zk-connected.json")
	conf := readFile(t, "own/conf-cluster-id.json")
	for _, tc := range []struct {
		name       string
		info, conf func(http.ResponseWriter, *http.Request)
		want       string
		code, text string
	}{
		{name: "same cluster", want: "yarn-prod"},
		{name: "no cluster id wanted", want: ""},
		{name: "another cluster", want: "yarn-test", code: heureka.ECONFLICT, text: `belongs to cluster "yarn-prod"`},
		{name: "cluster id not configured", want: "yarn-prod", conf: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Property yarn.resourcemanager.cluster-id not found", 404)
		}, code: heureka.EUNAVAILABLE, text: "HTTP 404"},
		{name: "garbage", info: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("\x1f\x8b garbage")) }, code: heureka.EINVALID, text: "not the cluster-info JSON"},
		{name: "huge", info: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(strings.Repeat("{", MaxAnswerBytes+1))) }, code: heureka.ETOOLARGE, text: "larger than"},
		{name: "slow", info: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, code: heureka.EUNAVAILABLE, text: "no answer before the deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == ClusterInfoPath && tc.info != nil:
					tc.info(w, r)
				case r.URL.Path == ClusterInfoPath:
					w.Write(info)
				case r.URL.Path == ConfPath && r.URL.Query().Get("name") == ClusterIDKey && r.Header.Get("Accept") == "application/json" && tc.conf != nil:
					tc.conf(w, r)
				case r.URL.Path == ConfPath && r.URL.Query().Get("name") == ClusterIDKey && r.Header.Get("Accept") == "application/json":
					w.Write(conf)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			// A short deadline for the slow daemon; room for the huge answer.
			timeout := 10 * time.Second
			if tc.name == "slow" {
				timeout = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			rm, err := Read(ctx, srv.Client(), srv.URL+"/", tc.want)
			if tc.code != "" {
				if heureka.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), srv.URL) {
					t.Fatalf("%v (code %q), want %s naming the RM with %q", err, heureka.ErrorCode(err), tc.code, tc.text)
				}
				return
			}
			if err != nil || rm.HAState != HAStandby || rm.ClusterID != tc.want {
				t.Fatalf("%+v, %v", rm, err)
			}
		})
	}
}

package elasticsearch

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

func TestParseRecorded(t *testing.T) {
	n, err := ParseNodesLocal(readFile(t, "beats/node.522.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n.ID != "x6_Rm157RqilNEqtdgcNrA" || n.Name != "x6_Rm15" || n.Version != "5.2.2" || n.ClusterName != "elasticsearch" ||
		n.HTTPAddr != "172.18.0.2:9200" || n.TransportAddr != "127.0.0.1:9300" || strings.Join(n.Roles, ",") != "data,ingest,master" {
		t.Errorf("%+v", n)
	}
	if err := ParseHealth(readFile(t, "beats/cluster_health.522.json"), &n); err != nil || n.Status != Green || n.Nodes != 1 || n.DataNodes != 1 {
		t.Fatalf("health: %+v, %v", n, err)
	}
	// The master_node answer of this one-node cluster names the node.
	if err := ParseMasterNode([]byte(`{"cluster_name":"elasticsearch","cluster_uuid":"u1","master_node":"x6_Rm157RqilNEqtdgcNrA"}`), &n); err != nil {
		t.Fatal(err)
	}
	if ok, _ := n.Health(); !ok || n.RoleState() != RoleMaster {
		t.Errorf("lone master: healthy=%v role %q", ok, n.RoleState())
	}
}

func TestRolesAndHealth(t *testing.T) {
	n, err := ParseNodesLocal(readFile(t, "own/nodes-local-8x-rack.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Rack("rack_id") != "r7" || n.HTTPAddr != "10.2.7.11:9200" || n.HTTPHost != "es-data-7.example.net" || n.Version != "8.15.1" ||
		n.TransportAddr != "10.2.7.11:9300" {
		t.Errorf("%+v", n)
	}
	if err := ParseMasterNode(readFile(t, "own/master-node-elected.json"), &n); err != nil {
		t.Fatal(err)
	}
	if n.RoleState() != RoleMaster {
		t.Errorf("elected: %q", n.RoleState())
	}
	n.MasterID = "someone-else"
	if n.RoleState() != RoleData {
		t.Errorf("data node: %q", n.RoleState())
	}
	if err := ParseHealth(readFile(t, "own/health-red.json"), &n); err != nil {
		t.Fatal(err)
	}
	if ok, cause := n.Health(); ok || !strings.Contains(cause, "red") {
		t.Errorf("red data node: %v %q", ok, cause)
	}
	coord := Node{ID: "c", MasterID: "m", Status: Red}
	if ok, _ := coord.Health(); !ok || coord.RoleState() != RoleCoordinating {
		t.Errorf("red cluster, coordinating node: %v %q", ok, coord.RoleState())
	}
	if err := ParseMasterNode(readFile(t, "own/master-node-none.json"), &n); err != nil {
		t.Fatal(err)
	}
	if ok, cause := n.Health(); ok || !strings.Contains(cause, "knows no elected master") {
		t.Errorf("no master: %v %q", ok, cause)
	}
}

func TestParseBad(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		parse    func([]byte) error
	}{
		{`<html>`, "not the nodes-info JSON", func(b []byte) error { _, err := ParseNodesLocal(b); return err }},
		{`{"nodes":{}}`, "describes 0 nodes", func(b []byte) error { _, err := ParseNodesLocal(b); return err }},
		{`{"nodes":{"a":{"version":"8.1.0"}}}`, "no HTTP publish address", func(b []byte) error { _, err := ParseNodesLocal(b); return err }},
		{`{"status":"purple"}`, `status "purple" is not`, func(b []byte) error { return ParseHealth(b, &Node{}) }},
		{`{"cluster_name":"other","status":"green"}`, `cluster "other", but the node said "mine"`, func(b []byte) error { return ParseHealth(b, &Node{ClusterName: "mine"}) }},
		{`{"master_node":"x"}`, "no cluster_uuid", func(b []byte) error { return ParseMasterNode(b, &Node{}) }},
		{`{"error":{"type":"master_not_discovered_exception"},"status":503}`, "no cluster_uuid", func(b []byte) error { return ParseMasterNode(b, &Node{}) }},
	} {
		err := tc.parse([]byte(tc.in))
		if heureka.ErrorCode(err) != heureka.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestRead(t *testing.T) {
	nodes := readFile(t, "own/nodes-local-8x-rack.json")
	master := readFile(t, "own/master-node-elected.json")
	health := readFile(t, "beats/cluster_health.522.json")
	health = []byte(strings.Replace(string(health), `"elasticsearch"`, `"search-prod"`, 1))
	for _, tc := range []struct {
		name       string
		override   map[string]func(http.ResponseWriter, *http.Request)
		want       string
		code, text string
	}{
		{name: "same cluster", want: "Jx2n5Cw1QCe0c0l3a3bI9w"},
		{name: "another cluster", want: "other-uuid", code: heureka.ECONFLICT, text: `belongs to cluster "search-prod" (uuid Jx2n5Cw1QCe0c0l3a3bI9w)`},
		{name: "garbage", override: map[string]func(http.ResponseWriter, *http.Request){NodesLocalPath: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("\xff\xfe")) }}, code: heureka.EINVALID, text: "not the nodes-info JSON"},
		{name: "truncated", override: map[string]func(http.ResponseWriter, *http.Request){HealthPath: func(w http.ResponseWriter, _ *http.Request) { w.Write(health[:40]) }}, code: heureka.EINVALID, text: "not the cluster-health JSON"},
		{name: "huge", override: map[string]func(http.ResponseWriter, *http.Request){NodesLocalPath: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(strings.Repeat(" ", MaxAnswerBytes+1))) }}, code: heureka.ETOOLARGE, text: "larger than"},
		{name: "slow", override: map[string]func(http.ResponseWriter, *http.Request){MasterNodePath: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }}, code: heureka.EUNAVAILABLE, text: "no answer before the deadline"},
		{name: "security on", override: map[string]func(http.ResponseWriter, *http.Request){NodesLocalPath: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{"error":"security_exception"}`, 401) }}, code: heureka.EUNAVAILABLE, text: "HTTP 401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if h := tc.override[r.URL.RequestURI()]; h != nil {
					h(w, r)
					return
				}
				switch r.URL.RequestURI() {
				case NodesLocalPath:
					w.Write(nodes)
				case MasterNodePath:
					w.Write(master)
				case HealthPath:
					w.Write(health)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			timeout := 10 * time.Second
			if tc.name == "slow" {
				timeout = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			n, err := Read(ctx, srv.Client(), srv.URL, tc.want)
			if tc.code != "" {
				if heureka.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), srv.URL) {
					t.Fatalf("%v (code %q), want %s naming the node with %q", err, heureka.ErrorCode(err), tc.code, tc.text)
				}
				return
			}
			if err != nil || n.RoleState() != RoleMaster || n.Status != Green || n.Rack("rack_id") != "r7" {
				t.Fatalf("%+v, %v", n, err)
			}
		})
	}
}

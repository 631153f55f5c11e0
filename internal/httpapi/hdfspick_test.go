package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry/registrytest"
)

type pickAnswer struct {
	Requested, Short, Excluded int
	Nodes                      []json.RawMessage
	Problem                    string
}

func TestHDFSPickChoosesServerSide(t *testing.T) {
	ts := newTestServer(t)
	for i := range 6 {
		if err := ts.reg.Register(registrytest.DataNode(i), false); err != nil {
			t.Fatal(err)
		}
	}
	pick := func(query string) (pickAnswer, []string) {
		t.Helper()
		r := ts.expect(http.StatusOK, "GET", "/v1/hdfs/pick?"+query, nil)
		var a pickAnswer
		if err := json.Unmarshal(r.body, &a); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		var ids []string
		for _, raw := range a.Nodes {
			in, err := eureka.DecodeServerInstance([]byte(`{"instance":`+string(raw)+`}`), eureka.JSON)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, in.ID)
		}
		return a, ids
	}
	dn0, dn1 := registrytest.DataNode(0), registrytest.DataNode(1)
	a, ids := pick("cluster=prod&n=3&writer=" + dn0.HostName)
	if a.Requested != 3 || a.Short != 0 || len(ids) != 3 || ids[0] != dn0.ID || a.Problem != "" {
		t.Errorf("pick with writer %s: %+v %v; want 3 nodes, the writer's first", dn0.HostName, a, ids)
	}
	// Excluding four of six and avoiding one leaves one: a shortfall, with why.
	ex := []string{dn1.IPAddr, strings.ToUpper(registrytest.DataNode(2).HostName), registrytest.DataNode(3).ID, registrytest.DataNode(4).HostName}
	a, ids = pick("cluster=prod&n=3&exclude=" + strings.Join(ex, ",") + "&avoid=" + registrytest.DataNode(5).ID)
	if a.Excluded != 4 || len(ids) != 1 || ids[0] != dn0.ID || a.Short != 2 || !strings.Contains(a.Problem, "1 penalized") {
		t.Errorf("pick with exclude and avoid: %+v %v; want dn0 alone, 4 excluded, 1 penalized", a, ids)
	}

	ts.expect(http.StatusNotFound, "GET", "/v1/hdfs/pick?cluster=nosuch", nil)
	for _, c := range []struct{ query, want string }{
		{"", "cluster"},
		{"cluster=prod&n=0", "1 to 64"},
		{"cluster=prod&n=65", "1 to 64"},
		{"cluster=prod&writer=a&rack=/r", "not both"},
		{"cluster=prod&fullness=2", "fraction"},
		{"cluster=prod&cluster=x", "once"},
		{"cluster=prod&replicas=3", "unknown query parameter"},
		{"cluster=prod&exclude=" + strings.Repeat("x", 300), "at most 253"},
	} {
		r := ts.expect(http.StatusBadRequest, "GET", "/v1/hdfs/pick?"+c.query, nil)
		if !strings.Contains(string(r.body), c.want) {
			t.Errorf("?%.40s: %s, want a message saying %q", c.query, r.body, c.want)
		}
	}
}

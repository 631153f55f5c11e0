package ctl

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/server/servertest"
)

// TestInstancesShowRoleState: `instances` has a STATE column with each
// member's role state, and `show` names the role state and whether it
// leads its cluster; an application without role states has no column.
func TestInstancesShowRoleState(t *testing.T) {
	s := servertest.Open(t, nil)
	zk1 := member("zookeeper", "zk1", "/r1", "leader", "")
	zk2 := member("zookeeper", "zk2", "/r2", "follower", "")
	zk3 := member("zookeeper", "zk3", "/r3", "", heureka.StatusDown)
	for _, in := range []*heureka.Instance{zk1, zk2, zk3, node{host: "dn1", ip: "10.1.0.1", rack: "/r1", usedPct: 10, role: "datanode"}.instance()} {
		servertest.Register(t, s, in)
	}
	c := openConn(t, servertest.URL(s))
	ctx := context.Background()

	var o output
	if err := Instances(ctx, c, o.out(false), InstancesOptions{App: "zookeeper.prod"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(o.w.String()), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[0], "STATE") {
		t.Fatalf("instances zookeeper.prod:\n%s", o.w.String())
	}
	for i, want := range []string{"leader", "follower", "-"} {
		if f := strings.Fields(lines[i+1]); f[len(f)-1] != want {
			t.Errorf("row %d ends %q, want the role state %q:\n%s", i+1, f[len(f)-1], want, o.w.String())
		}
	}
	o = output{}
	if err := Instances(ctx, c, o.out(true), InstancesOptions{App: "zookeeper.prod"}); err != nil {
		t.Fatal(err)
	}
	var views []View
	if err := json.Unmarshal(o.w.Bytes(), &views); err != nil || len(views) != 3 {
		t.Fatalf("-o json: %v\n%s", err, o.w.String())
	}
	if views[0].RoleState != "leader" || !views[0].Lead || views[1].RoleState != "follower" || views[1].Lead {
		t.Errorf("-o json: %+v, %+v", views[0], views[1])
	}

	o = output{}
	if err := Instances(ctx, c, o.out(false), InstancesOptions{App: "hdfs-datanode.prod"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(o.w.String(), "STATE") {
		t.Errorf("DataNodes have no role state, yet a STATE column:\n%s", o.w.String())
	}

	o = output{}
	if err := Show(ctx, c, o.out(false), zk1.ID); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\nrole state +leader \(leads its cluster\)\n`).MatchString(o.w.String()) {
		t.Errorf("show %s:\n%s", zk1.ID, o.w.String())
	}
	o = output{}
	if err := Show(ctx, c, o.out(false), zk2.ID); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\nrole state +follower\n`).MatchString(o.w.String()) {
		t.Errorf("show %s:\n%s", zk2.ID, o.w.String())
	}
}

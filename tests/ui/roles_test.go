package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heureka-project/heureka"
)

// roleMember returns a registration of host as a member of ROLE.CLUSTER,
// in rack, reporting role state st, as a role's agent registers it.
func roleMember(role, cluster, host, rack, st string, port int) *heureka.Instance {
	in := &heureka.Instance{
		ID: host + ":" + cluster, App: strings.ToUpper(heureka.RoleApp(role, cluster)), HostName: host, IPAddr: "10.0.0.2",
		Status: heureka.StatusUp, Port: heureka.Port{Number: port, Enabled: true}, VIPAddress: heureka.RoleApp(role, cluster),
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 3600},
		Metadata: heureka.NewMetadata(heureka.MetaRack, rack, heureka.MetaRoleState, st),
	}
	in.Normalize()
	return in
}

// memberView is what heureka.member reports of a member's button.
type memberView struct {
	Cluster, Rack, Status, State string
	Lead                         bool
}

// TestDashboardRoles: the page shows each cluster of the other systems
// (here a YARN pair, HBase masters and RegionServers, a ZooKeeper
// ensemble) as a card, its members by role and rack with their role
// states, the one that leads marked; a ResourceManager failover, as the
// agents report it, moves the mark without a reload; a member that dies
// shows DOWN. Screenshots at 1400, 1000 and 700 px with
// HEUREKA_SCREENSHOT_DIR set.
func TestDashboardRoles(t *testing.T) {
	p := openPage(t, 1400, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ts := startServer(t)
	rm1 := roleMember("yarn-resourcemanager", "prod", "rm1.example.com", "/dc1/rack-a", "active", 8032)
	rm2 := roleMember("yarn-resourcemanager", "prod", "rm2.example.com", "/dc1/rack-b", "standby", 8032)
	ins := []*heureka.Instance{rm1, rm2,
		roleMember("hbase-master", "prod", "hm1.example.com", "/dc1/rack-a", "backup", 16000),
		roleMember("hbase-master", "prod", "hm2.example.com", "/dc1/rack-b", "active", 16000),
		roleMember("hbase-regionserver", "prod", "rs1.example.com", "/dc1/rack-a", "serving", 16020),
		roleMember("hbase-regionserver", "prod", "rs2.example.com", "/dc1/rack-b", "serving", 16020),
		roleMember("hbase-regionserver", "prod", "rs3.example.com", "/dc1/rack-c", "serving", 16020),
		roleMember("zookeeper", "prod", "zk1.example.com", "/dc1/rack-a", "follower", 2181),
		roleMember("zookeeper", "prod", "zk2.example.com", "/dc1/rack-b", "leader", 2181),
		roleMember("zookeeper", "prod", "zk3.example.com", "/dc1/rack-c", "follower", 2181),
		dataNode("prod", "dn1.example.com", "/dc1/rack-a", 41, 120_034),
	}
	if err := ts.registerAll(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(p.ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 15*time.Second, `window.heureka !== undefined && heureka.stream() === "live"`, "the page to load and follow the stream")
	p.waitFor(t, 15*time.Second, `document.querySelectorAll("#role-clusters button.member").length === 10`, "the ten members of the other systems")
	var cards []string
	p.eval(t, `[...document.querySelectorAll("#role-clusters .role-cluster h3")].map(e => e.textContent)`, &cards)
	if strings.Join(cards, ", ") != "YARN cluster prod, HBase cluster prod, ZooKeeper cluster prod" {
		t.Errorf("the other systems' cards are %q, want YARN, HBase and ZooKeeper of cluster prod, in that order", cards)
	}
	var roleNames []string
	p.eval(t, `[...document.querySelectorAll('#role-clusters .role-cluster[data-system="HBase"] .role-name')].map(e => e.textContent)`, &roleNames)
	if strings.Join(roleNames, ", ") != "masters, RegionServers" {
		t.Errorf("the HBase card's roles are %q, want masters then RegionServers", roleNames)
	}
	member := func(in *heureka.Instance) memberView {
		var m memberView
		p.eval(t, `heureka.member(`+jsString(in.App)+`, `+jsString(in.ID)+`)`, &m)
		return m
	}
	for _, c := range []struct {
		in   *heureka.Instance
		want memberView
	}{
		{rm1, memberView{"YARN cluster prod", "/dc1/rack-a", "UP", "★ active", true}},
		{rm2, memberView{"YARN cluster prod", "/dc1/rack-b", "UP", "standby", false}},
		{ins[3], memberView{"HBase cluster prod", "/dc1/rack-b", "UP", "★ active", true}},
		{ins[4], memberView{"HBase cluster prod", "/dc1/rack-a", "UP", "serving", false}},
		{ins[8], memberView{"ZooKeeper cluster prod", "/dc1/rack-b", "UP", "★ leader", true}},
	} {
		if got := member(c.in); got != c.want {
			t.Errorf("%s shows %+v, want %+v", c.in.ID, got, c.want)
		}
	}
	var heads []string
	p.eval(t, `[...document.querySelectorAll('section.app[data-app="YARN-RESOURCEMANAGER.PROD"] .role, section.app[data-app="YARN-RESOURCEMANAGER.PROD"] th')].map(e => e.textContent)`, &heads)
	if got := strings.Join(heads, "|"); !strings.HasPrefix(got, "ResourceManagers of YARN cluster prod|") || !strings.Contains(got, "|role state|") {
		t.Errorf("the ResourceManagers' table reads %q, want it titled ResourceManagers of YARN cluster prod with a role state column", got)
	}
	var hdfsShown int
	p.eval(t, `document.querySelectorAll("#role-clusters [data-app^='HDFS']").length`, &hdfsShown)
	if hdfsShown != 0 {
		t.Errorf("%d HDFS members in the other systems' section; HDFS has its rack map", hdfsShown)
	}
	p.screenshot(t, "roles-1400.png")

	// The ResourceManager fails over: rm1 steps down, rm2 becomes active,
	// as their agents report it. Then zk3 dies.
	p.eval(t, `window.__loadedOnce = "yes"`, nil)
	rm1.Metadata = heureka.NewMetadata(heureka.MetaRack, "/dc1/rack-a", heureka.MetaRoleState, "standby")
	rm2.Metadata = heureka.NewMetadata(heureka.MetaRack, "/dc1/rack-b", heureka.MetaRoleState, "active")
	for _, in := range []*heureka.Instance{rm1, rm2} {
		if err := ts.register(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.setStatus(ctx, ins[9].App, ins[9].ID, heureka.StatusDown); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, 10*time.Second, `heureka.member(`+jsString(rm2.App)+`, `+jsString(rm2.ID)+`).lead`, "rm2 marked as leading")
	p.waitFor(t, 10*time.Second, `heureka.member(`+jsString(ins[9].App)+`, `+jsString(ins[9].ID)+`).status === "DOWN"`, "zk3 DOWN")
	if got := member(rm1); got.Lead || got.State != "standby" {
		t.Errorf("after the failover rm1 shows %+v, want standby, not leading", got)
	}
	var once string
	p.eval(t, `window.__loadedOnce || ""`, &once)
	if once != "yes" {
		t.Error("the page reloaded to show the failover")
	}
	// Narrower windows, each a browser of that width: the cards reflow
	// and nothing scrolls sideways.
	for _, w := range []int{1000, 700} {
		q := openPage(t, w, 900)
		if err := chromedp.Do(q.ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
			t.Fatal(err)
		}
		q.waitFor(t, 15*time.Second, `document.querySelectorAll("#role-clusters button.member.lead").length === 3`, "the three leads")
		var overflow int
		q.eval(t, `document.documentElement.scrollWidth - document.documentElement.clientWidth`, &overflow)
		if overflow > 0 {
			t.Errorf("at %d px the page scrolls sideways by %d px", w, overflow)
		}
		q.screenshot(t, fmt.Sprintf("roles-%d.png", w))
		if errs := q.Errors(); len(errs) > 0 {
			t.Errorf("at %d px the page logged errors: %q", w, errs)
		}
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("the page logged errors: %q", errs)
	}
}

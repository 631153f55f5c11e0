package roles

import (
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/kafka"
)

func TestTable(t *testing.T) {
	alerts := map[string]bool{}
	for _, r := range All() {
		if !heureka.ValidRoleName(r.Name) || r.System == "" || r.Member == "" || r.Members == "" {
			t.Errorf("%+v: a role needs a valid name, a system and names for its members", r)
		}
		if (len(r.Leads) > 0) != (r.NoLead != "") {
			t.Errorf("%s: leads %v but says %q for a cluster without one", r.Name, r.Leads, r.NoLead)
		}
		for _, l := range r.Leads {
			if r.Label(l) != l {
				t.Errorf("%s: lead state %q is not among its States %v", r.Name, l, r.States)
			}
		}
		if len(r.States) > 0 && len(r.Leads) > 0 && r.States[0] != r.Lead() {
			t.Errorf("%s: States %v do not begin with the lead %q", r.Name, r.States, r.Lead())
		}
		if r.Alert != "" {
			if alerts[r.Alert] || len(r.Leads) == 0 {
				t.Errorf("%s: alert %q is used twice or has no lead to miss", r.Name, r.Alert)
			}
			alerts[r.Alert] = true
			if got, ok := ByAlert(r.Alert); !ok || got.Name != r.Name {
				t.Errorf("ByAlert(%q) = %v, %v", r.Alert, got.Name, ok)
			}
		}
	}
	if len(alerts) != 4 {
		t.Errorf("%d roles raise an alert, want the four of issue 38", len(alerts))
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		app, role, cluster string
		ok                 bool
	}{
		{"YARN-RESOURCEMANAGER.PROD", "yarn-resourcemanager", "prod", true},
		{"hdfs-namenode.eu.west", "hdfs-namenode", "eu.west", true},
		{"zookeeper.prod", "zookeeper", "prod", true},
		{"ORDERS.PROD", "", "", false}, // a role.cluster shape, of no role known here
		{"ORDERS", "", "", false},
		{"kafka-broker.", "", "", false},
	} {
		r, cluster, ok := Parse(c.app)
		if r.Name != c.role || cluster != c.cluster || ok != c.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", c.app, r.Name, cluster, ok, c.role, c.cluster, c.ok)
		}
	}
}

func TestStateAndLabel(t *testing.T) {
	zk, _ := Lookup("zookeeper")
	es, _ := Lookup("elasticsearch")
	for _, c := range []struct {
		r           Role
		md          heureka.Metadata
		state, want string
		lead        bool
	}{
		{zk, heureka.NewMetadata(heureka.MetaRoleState, "Leader "), "leader", "leader", true},
		{zk, heureka.NewMetadata(heureka.MetaRoleState, "standalone"), "standalone", "standalone", true},
		{zk, heureka.NewMetadata(heureka.MetaRoleState, "follower"), "follower", "follower", false},
		{zk, heureka.Metadata{}, "", Unknown, false},
		{es, heureka.NewMetadata(heureka.MetaRoleState, "ingest"), "ingest", Other, false},
		// A NameNode registered by an agent from before role_state.
		{Role{}, heureka.NewMetadata(hdfs.MetaHAState, "active"), "active", Unknown, false},
	} {
		st := State(c.md)
		if st != c.state || (c.r.Name != "" && (c.r.Label(st) != c.want || c.r.IsLead(st) != c.lead)) {
			t.Errorf("%s %s: state %q label %q lead %v; want %q %q %v", c.r.Name, c.md, st, c.r.Label(st), c.r.IsLead(st), c.state, c.want, c.lead)
		}
	}
}

// TestUnled: a cluster is unled when members are UP, none leads and one
// is needed; DOWN members count for nothing; a KRaft Kafka cluster needs
// no controller broker; peers (RegionServers) need no lead.
func TestUnled(t *testing.T) {
	rm, _ := Lookup("yarn-resourcemanager")
	kb, _ := Lookup("kafka-broker")
	rs, _ := Lookup("hbase-regionserver")
	st := func(s string) heureka.Metadata { return heureka.NewMetadata(heureka.MetaRoleState, s) }
	kraft := heureka.NewMetadata(heureka.MetaRoleState, "broker", kafka.MetaKRaft, "true")
	type in struct {
		status heureka.Status
		md     heureka.Metadata
	}
	for _, c := range []struct {
		name  string
		r     Role
		ins   []in
		unled bool
	}{
		{"active and standby", rm, []in{{heureka.StatusUp, st("active")}, {heureka.StatusUp, st("standby")}}, false},
		{"two standbys", rm, []in{{heureka.StatusUp, st("standby")}, {heureka.StatusUp, st("standby")}}, true},
		{"the active is DOWN", rm, []in{{heureka.StatusDown, st("active")}, {heureka.StatusUp, st("standby")}}, true},
		{"every member DOWN", rm, []in{{heureka.StatusDown, st("active")}, {heureka.StatusDown, st("standby")}}, false},
		{"none registered", rm, nil, false},
		{"a standby draining", rm, []in{{heureka.StatusOutOfService, st("standby")}}, false},
		{"ZooKeeper-mode brokers", kb, []in{{heureka.StatusUp, st("broker")}, {heureka.StatusUp, st("broker")}}, true},
		{"KRaft brokers", kb, []in{{heureka.StatusUp, kraft}, {heureka.StatusUp, kraft}}, false},
		{"RegionServers", rs, []in{{heureka.StatusUp, st("serving")}}, false},
	} {
		var n Count
		for _, i := range c.ins {
			c.r.Add(&n, c.r.MemberOf(i.status, i.md))
		}
		if n.Unled() != c.unled {
			t.Errorf("%s: %+v unled %v, want %v", c.name, n, n.Unled(), c.unled)
		}
	}
}

package hdfs

import (
	"testing"

	"github.com/heureka-project/heureka"
)

func TestAppName(t *testing.T) {
	for _, tc := range []struct {
		role    Role
		cluster string
		want    string
	}{
		{RoleDataNode, "prod", "hdfs-datanode.prod"},
		{RoleNameNode, "prod", "hdfs-namenode.prod"},
		{RoleDataNode, "Prod-EU1", "hdfs-datanode.prod-eu1"},
	} {
		if got := AppName(tc.role, tc.cluster); got != tc.want {
			t.Errorf("AppName(%q, %q) = %q, want %q", tc.role, tc.cluster, got, tc.want)
		}
	}
}

func TestParseAppName(t *testing.T) {
	for _, tc := range []struct {
		app     string
		role    Role
		cluster string
		ok      bool
	}{
		{"hdfs-datanode.prod", RoleDataNode, "prod", true},
		{"HDFS-DATANODE.PROD", RoleDataNode, "prod", true}, // as Eureka serves it
		{"HDFS-NAMENODE.PROD-EU1", RoleNameNode, "prod-eu1", true},
		{"Hdfs-NameNode.a.b", RoleNameNode, "a.b", true},
		{"hdfs-datanode.", "", "", false},
		{"hdfs-datanode", "", "", false},
		{"hdfs-journalnode.prod", "", "", false},
		{"datanode.prod", "", "", false},
		{"", "", "", false},
	} {
		role, cluster, ok := ParseAppName(tc.app)
		if role != tc.role || cluster != tc.cluster || ok != tc.ok {
			t.Errorf("ParseAppName(%q) = %q, %q, %v; want %q, %q, %v", tc.app, role, cluster, ok, tc.role, tc.cluster, tc.ok)
		}
	}
	// Round trip through Eureka's upper-casing.
	for _, r := range []Role{RoleDataNode, RoleNameNode} {
		app := heureka.Instance{App: AppName(r, "c1")}
		app.Normalize()
		if role, c, ok := ParseAppName(app.App); !ok || role != r || c != "c1" {
			t.Errorf("round trip of %s via %q gave %q %q %v", r, app.App, role, c, ok)
		}
	}
}

func TestNormalizeRack(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/dc1/rack-a", "/dc1/rack-a"},
		{"dc1/rack-a", "/dc1/rack-a"},
		{"/dc1//rack-a/", "/dc1/rack-a"},
		{"  /rack1  ", "/rack1"},
		{"", DefaultRack},
		{"/", DefaultRack},
		{"//", DefaultRack},
		{"/rack 1", DefaultRack},
		{"/rack\t1", DefaultRack},
		{"/rack\u00a01", DefaultRack},
		{"/192.168.100.0", "/192.168.100.0"},
		{DefaultRack, DefaultRack},
	} {
		if got := NormalizeRack(tc.in); got != tc.want {
			t.Errorf("NormalizeRack(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInstanceID(t *testing.T) {
	for _, tc := range []struct{ cluster, host, rack, want string }{
		{"prod", "dn1.example.com", "/dc1/rack-a", "prod-dn1.example.com-dc1.rack-a"},
		{"Prod", "DN1.Example.com", "/rack1", "prod-dn1.example.com-rack1"},
		{"prod", "dn1", "", "prod-dn1-default-rack"},
		{"prod", "dn1", "/192.168.100.0", "prod-dn1-192.168.100.0"},
		{"prod", "dn1", `/a\b`, "prod-dn1-a_b"},
	} {
		got := InstanceID(tc.cluster, tc.host, tc.rack)
		if got != tc.want {
			t.Errorf("InstanceID(%q, %q, %q) = %q, want %q", tc.cluster, tc.host, tc.rack, got, tc.want)
		}
		if err := heureka.ValidateName("instanceId", got, 256); err != nil {
			t.Errorf("InstanceID(%q, %q, %q) = %q is not a valid ID: %v", tc.cluster, tc.host, tc.rack, got, err)
		}
	}
	// Distinct real-world racks give distinct IDs.
	racks := []string{"/dc1/rack-a", "/dc1-rack-a", "/dc1/rack/a", "/dc1/rack-b", "/dc2/rack-a", "/rack-a", "/default-rack", "/10.1.2.0", "/10.1.3.0"}
	seen := map[string]string{}
	for _, r := range racks {
		id := InstanceID("c", "h", r)
		if prev, dup := seen[id]; dup {
			t.Errorf("racks %q and %q both give ID %q", prev, r, id)
		}
		seen[id] = r
	}
}

package heureka

import (
	"strings"
	"testing"
)

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
		if err := ValidateName("instanceId", got, 256); err != nil {
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

func TestRoleApp(t *testing.T) {
	if got := RoleApp("zookeeper", "Prod"); got != "zookeeper.prod" {
		t.Errorf("RoleApp = %q", got)
	}
	for _, tc := range []struct {
		app, role, cluster string
		ok                 bool
	}{
		{"hdfs-datanode.prod", "hdfs-datanode", "prod", true},
		{"KAFKA-BROKER.PROD", "kafka-broker", "prod", true}, // as Eureka serves it
		{"zookeeper.eu.west", "zookeeper", "eu.west", true},
		{"zookeeper.", "", "", false},
		{"zookeeper", "", "", false},
		{".prod", "", "", false},
		{"-zk.prod", "", "", false},
		{"zk_1.prod", "", "", false},
		{"", "", "", false},
	} {
		role, cluster, ok := ParseRoleApp(tc.app)
		if role != tc.role || cluster != tc.cluster || ok != tc.ok {
			t.Errorf("ParseRoleApp(%q) = %q, %q, %v; want %q, %q, %v", tc.app, role, cluster, ok, tc.role, tc.cluster, tc.ok)
		}
		if ok {
			if back := RoleApp(role, cluster); back != strings.ToLower(tc.app) {
				t.Errorf("RoleApp(ParseRoleApp(%q)) = %q", tc.app, back)
			}
		}
	}
	for _, bad := range []string{"", "-a", "a-", "A", "a.b", strings.Repeat("a", 64)} {
		if ValidRoleName(bad) {
			t.Errorf("ValidRoleName(%q) = true", bad)
		}
	}
}

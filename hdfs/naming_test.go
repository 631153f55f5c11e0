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

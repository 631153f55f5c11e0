package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

func TestHDFSSite(t *testing.T) {
	_, c := cluster(t,
		node{role: hdfs.RoleNameNode, host: "nn-a", ip: "10.0.0.1", rack: "/r1", ha: hdfs.HAStandby, haTime: 100},
		node{role: hdfs.RoleNameNode, host: "nn-b", ip: "10.0.0.2", rack: "/r2", ha: hdfs.HAActive, haTime: 200},
		node{role: hdfs.RoleDataNode, host: "dn1", ip: "10.0.1.1", rack: "/r1"},
	)
	var o output
	if err := HDFSSite(context.Background(), c, o.out(false), "prod", "ns1"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<name>dfs.nameservices</name>\n    <value>ns1</value>",
		"<name>dfs.ha.namenodes.ns1</name>\n    <value>nn-b,nn-a</value>",              // the active one first
		"<name>dfs.namenode.rpc-address.ns1.nn-b</name>\n    <value>nn-b:8020</value>", // IDs name hosts
		"<name>dfs.namenode.rpc-address.ns1.nn-a</name>\n    <value>nn-a:8020</value>",
		hdfs.FailoverProxyProvider,
	} {
		if !strings.Contains(o.w.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, o.w.String())
		}
	}
	for _, bad := range []struct {
		cluster, ns string
		field, err  string // the field of a ConfigError, or words of another error
	}{
		{"prod", "", "Nameservice", ""},
		{"prod", "a.b", "Nameservice", ""},
		{"", "ns1", "Cluster", ""},
		{"other", "ns1", "", `no NameNode of cluster "other" is registered`},
	} {
		var o2 output
		err := HDFSSite(context.Background(), c, o2.out(false), bad.cluster, bad.ns)
		if (bad.field != "" && !isConfigError(err, bad.field)) || (bad.err != "" && (err == nil || !strings.Contains(err.Error(), bad.err))) ||
			o2.w.Len() != 0 {
			t.Errorf("cluster %q, nameservice %q: %v, wrote %q", bad.cluster, bad.ns, err, o2.w.String())
		}
	}
}

func TestHosts(t *testing.T) {
	_, c := cluster(t,
		node{role: hdfs.RoleDataNode, host: "dn1", ip: "10.0.1.1", rack: "/r1", adminState: hdfs.AdminNormal},
		node{role: hdfs.RoleDataNode, host: "dn2", ip: "10.0.1.2", rack: "/r1", adminState: hdfs.AdminDecommissionInProgress},
		node{role: hdfs.RoleDataNode, host: "dn3", ip: "10.0.1.3", rack: "/r2", adminState: hdfs.AdminInMaintenance},
		node{role: hdfs.RoleDataNode, host: "dn4", ip: "10.0.1.4", rack: "/r2", status: heureka.StatusDown},
		node{role: hdfs.RoleNameNode, host: "nn-a", ip: "10.0.0.1", rack: "/r1", ha: hdfs.HAActive},
	)
	for format, want := range map[string]string{"include": "dn1\ndn2\ndn3\ndn4\n", "exclude": "dn2\n"} {
		var o output
		if err := Hosts(context.Background(), c, o.out(false), "prod", format); err != nil || o.w.String() != want {
			t.Errorf("%s: %v %q; want %q", format, err, o.w.String(), want)
		}
	}
	var o output
	if err := Hosts(context.Background(), c, o.out(false), "prod", "json"); err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	if err := json.Unmarshal(o.w.Bytes(), &got); err != nil {
		t.Fatalf("json: %v %s", err, o.w.String())
	}
	states := map[string]string{}
	for _, e := range got {
		states[e["hostName"]] = e["adminState"]
	}
	want := map[string]string{"dn1": "NORMAL", "dn2": "DECOMMISSIONED", "dn3": "IN_MAINTENANCE", "dn4": "NORMAL"}
	if len(states) != len(want) {
		t.Errorf("json hosts %v", states)
	}
	for h, s := range want {
		if states[h] != s {
			t.Errorf("json %s = %q, want %q", h, states[h], s)
		}
	}
	// An empty include file would make the NameNode refuse every DataNode.
	var none output
	if err := Hosts(context.Background(), c, none.out(false), "other", "include"); err == nil || none.w.Len() != 0 ||
		!strings.Contains(err.Error(), `no DataNode of cluster "other"`) {
		t.Errorf("no DataNode: %v, wrote %q", err, none.w.String())
	}
	if err := Hosts(context.Background(), c, none.out(false), "prod", "yaml"); !isConfigError(err, "Format") {
		t.Errorf("format yaml: %v", err)
	}
}

func isConfigError(err error, field string) bool {
	ce, ok := errors.AsType[*heureka.ConfigError](err)
	return ok && ce.Field == field
}

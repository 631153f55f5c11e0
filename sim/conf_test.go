package sim

import (
	"net"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/hdfs"
)

// TestConfShowsTheHANameservice: a NameNode's /conf is Hadoop's JSON, which
// hdfs reads, and with an HA nameservice it names this NameNode by its own
// RPC address, so hdfs.NameNodeIdentity finds its ID as a NameNode does.
func TestConfShowsTheHANameservice(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Role, cfg.Hostname = hdfs.RoleNameNode, "nn-b.example.net"
	s := mustOpen(t, cfg)
	_, port, _ := net.SplitHostPort(s.PortAddr())
	self := net.JoinHostPort(cfg.Hostname, port)
	conf := func() map[string]string {
		t.Helper()
		code, body, _ := get(t, "http://"+s.HTTPAddr()+"/conf?format=json")
		if code != 200 {
			t.Fatalf("/conf: %d %s", code, body)
		}
		c, err := hdfs.ParseConfJSON(strings.NewReader(body))
		if err != nil {
			t.Fatalf("/conf is not Hadoop's JSON: %v\n%s", err, body)
		}
		return c
	}
	if c := conf(); c["dfs.namenode.rpc-address"] != self || c["dfs.nameservices"] != "" {
		t.Errorf("/conf without HA: %v", c)
	}
	if _, _, err := hdfs.NameNodeIdentity(conf(), self); err == nil {
		t.Error("a NameNode outside HA has an HA identity")
	}

	ha := HA{Nameservice: "prod", NameNodes: []HANameNode{{"namenode7", "nn-a.example.net:8020"}, {"namenode9", self}}}
	if err := s.SetHA(ha); err != nil {
		t.Fatal(err)
	}
	c := conf()
	if c["dfs.nameservices"] != "prod" || c["dfs.ha.namenodes.prod"] != "namenode7,namenode9" ||
		c["dfs.namenode.rpc-address.prod.namenode7"] != "nn-a.example.net:8020" || c["fs.defaultFS"] != "hdfs://prod" {
		t.Errorf("/conf with HA: %v", c)
	}
	if ns, id, err := hdfs.NameNodeIdentity(c, self); err != nil || ns != "prod" || id != "namenode9" {
		t.Errorf("NameNodeIdentity = %q, %q, %v; want prod, namenode9", ns, id, err)
	}

	if code, _, _ := get(t, "http://"+s.HTTPAddr()+"/conf?format=xml"); code != 400 {
		t.Errorf("/conf?format=xml: %d, want 400", code)
	}
	for _, bad := range []HA{{Nameservice: "a.b"}, {Nameservice: "ns", NameNodes: []HANameNode{{"nn1", "x"}}},
		{Nameservice: "ns", NameNodes: []HANameNode{{"nn1", "a:1"}, {"nn1", "b:1"}}}} {
		if err := s.SetHA(bad); err == nil {
			t.Errorf("SetHA(%+v) succeeded", bad)
		}
	}
	dn := mustOpen(t, DefaultConfig())
	if err := dn.SetHA(ha); err == nil {
		t.Error("a DataNode took an HA nameservice")
	}
}

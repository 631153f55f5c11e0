package tour

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2/hadoopconf"
)

// loadHDFSSite renders `heureka hadoop hdfs-site` for the demo into a fresh
// HADOOP_CONF_DIR and reads it back with colinmarc/hdfs's hadoopconf.
func loadHDFSSite(t *testing.T, d *demo) hadoopconf.HadoopConf {
	t.Helper()
	out, errs, code := shell(t, t.TempDir(), []string{"HEUREKA_REGISTRY=" + d.Registry},
		heurekaBin+" hadoop hdfs-site --cluster demo --nameservice demo")
	if code != 0 {
		t.Fatalf("hadoop hdfs-site: exit %d: %s", code, errs)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	conf, err := hadoopconf.Load(dir)
	if err != nil || conf == nil {
		t.Fatalf("hadoopconf.Load: %v, %v\n%s", conf, err, out)
	}
	return conf
}

// hostOf returns the host of a "host:port" value.
func hostOf(addr string) string {
	h, _, _ := net.SplitHostPort(addr)
	return h
}

// TestHDFSSiteAcrossFailovers checks that the demo's NameNodes register
// the IDs their own configuration gives them, then fails them over and
// back and checks, with a real reader of the file, that each NameNode ID
// keeps its host and that only dfs.ha.namenodes' order follows the active
// NameNode.
func TestHDFSSiteAcrossFailovers(t *testing.T) {
	needTools(t, "bash", "curl")
	d := startDemo(t)
	nn1, nn2 := d.Nodes["nn1"], d.Nodes["nn2"]
	failover := func(from, to demoNode) {
		for _, c := range []string{from.Control + "/ha?state=standby", to.Control + "/ha?state=active"} {
			if _, errs, code := shell(t, t.TempDir(), nil, "curl -sf -X POST '"+c+"'"); code != 0 {
				t.Fatalf("%s: exit %d %s", c, code, errs)
			}
		}
	}
	// The agents learnt each NameNode's ID from its own configuration (the
	// simulator's /conf?format=json, in Hadoop's shape) and registered it.
	eventually(t, 10*time.Second, "the NameNodes' registered IDs", func() string {
		out, errs, code := shell(t, t.TempDir(), []string{"HEUREKA_REGISTRY=" + d.Registry},
			heurekaBin+" instances hdfs-namenode.demo -o json")
		var nns []struct {
			HostName string            `json:"hostName"`
			Metadata map[string]string `json:"metadata"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &nns) != nil || len(nns) != 2 {
			return fmt.Sprintf("instances hdfs-namenode.demo: exit %d %s%s", code, out, errs)
		}
		for _, nn := range nns {
			if name, _, _ := strings.Cut(nn.HostName, "."); nn.Metadata["namenode_id"] != name || nn.Metadata["nameservice"] != "demo" {
				return fmt.Sprintf("%s registered nameservice %q, namenode_id %q; want demo, %s", nn.HostName,
					nn.Metadata["nameservice"], nn.Metadata["namenode_id"], name)
			}
		}
		return ""
	})
	var addrs []string // nn1's and nn2's addresses, as the first file has them
	for i, step := range []struct {
		name   string
		before func()
		active string
	}{
		{"as started", func() {}, "nn1"},
		{"after failing over to nn2", func() { failover(nn1, nn2) }, "nn2"},
		{"after failing back to nn1", func() { failover(nn2, nn1) }, "nn1"},
	} {
		step.before()
		// The agents read /jmx every second; the file follows the registry.
		var conf hadoopconf.HadoopConf
		eventually(t, 10*time.Second, step.name, func() string {
			conf = loadHDFSSite(t, d)
			if ids := strings.Split(conf["dfs.ha.namenodes.demo"], ","); len(ids) != 2 || ids[0] != step.active {
				return "dfs.ha.namenodes.demo = " + conf["dfs.ha.namenodes.demo"] + ", want " + step.active + " first"
			}
			return ""
		})
		got := []string{conf["dfs.namenode.rpc-address.demo.nn1"], conf["dfs.namenode.rpc-address.demo.nn2"]}
		if hostOf(got[0]) != "nn1.demo" || hostOf(got[1]) != "nn2.demo" {
			t.Fatalf("%s: nn1 → %q, nn2 → %q; want each ID on its own host", step.name, got[0], got[1])
		}
		if i == 0 {
			addrs = got
		} else if !slices.Equal(got, addrs) {
			t.Errorf("%s: nn1, nn2 = %q, first %q", step.name, got, addrs)
		}
		if nns := conf.Namenodes(); !slices.Equal(nns, []string{addrs[0], addrs[1]}) {
			t.Errorf("%s: hadoopconf's Namenodes() = %q, want %q", step.name, nns, addrs)
		}
		if conf["dfs.nameservices"] != "demo" ||
			conf["dfs.client.failover.proxy.provider.demo"] != "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider" {
			t.Errorf("%s: %v", step.name, conf)
		}
	}
}

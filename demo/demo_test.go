package demo_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/demo"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

// TestOpenClose runs a demo with one DataNode on free ports: Open returns
// once all three nodes are registered UP at every peer's listing, the
// NameNodes come first with their HA states, and Close stops every
// listener.
func TestOpenClose(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three servers and three simulators")
	}
	cfg := demo.DefaultConfig()
	cfg.BasePort, cfg.DataNodes, cfg.Cluster = 0, 1, "t"
	d := demo.New(cfg)
	if err := d.Open(context.Background()); err != nil {
		d.Close(context.Background())
		t.Fatal(err)
	}
	var names []string
	for _, n := range d.Nodes() {
		names = append(names, n.Name)
		if st := n.Agent.Status(); st.Reported != heureka.StatusUp {
			t.Errorf("%s: %+v", n.Name, st)
		}
	}
	if strings.Join(names, " ") != "nn1 nn2 dn1" || len(d.URLs()) != 3 {
		t.Errorf("nodes %v, registry %v", names, d.URLs())
	}
	if st := d.Node("nn1").Sim.State(); st.HAState != hdfs.HAActive || d.Node("nn2").Sim.State().HAState != hdfs.HAStandby {
		t.Errorf("HA states %v / %v", st.HAState, d.Node("nn2").Sim.State().HAState)
	}
	if d.Node("dn1").ID != "t-dn1.t-dc1.rack-a" {
		t.Errorf("dn1's ID %q", d.Node("dn1").ID)
	}
	// The NameNodes' agents learn their HA identity from the simulators'
	// /conf, as from Hadoop's, and register it.
	ccfg := client.DefaultConfig()
	ccfg.URLs = d.URLs()
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, name := range []string{"nn1", "nn2"} {
		proctest.Retry(t, 10*time.Second, name+"'s NameNode ID", func() error {
			in, err := c.InstanceByID(context.Background(), d.Node(name).ID)
			if err != nil {
				return err
			}
			if ns, id := in.Metadata.Get(hdfs.MetaNameservice), in.Metadata.Get(hdfs.MetaNameNodeID); ns != "t" || id != name {
				return fmt.Errorf("nameservice %q, namenode_id %q; want t, %s", ns, id, name)
			}
			return nil
		})
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(strings.TrimSuffix(d.URLs()[0], "/eureka") + "/healthz"); err == nil {
		t.Error("a registry server still answers after Close")
	}
}

func TestConfig(t *testing.T) {
	if err := demo.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for field, f := range map[string]func(*demo.Config){
		"BasePort":     func(c *demo.Config) { c.BasePort = 65534 },
		"DataNodes":    func(c *demo.Config) { c.DataNodes = 0 },
		"Cluster":      func(c *demo.Config) { c.Cluster = "a.b" },
		"ReadyTimeout": func(c *demo.Config) { c.ReadyTimeout = 0 },
	} {
		cfg := demo.DefaultConfig()
		f(&cfg)
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

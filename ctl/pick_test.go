package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/hdfs"
)

func pickJSON(t *testing.T, c *Conn, o PickOptions) (PickResult, string, error) {
	t.Helper()
	var out output
	err := Pick(context.Background(), c, out.out(true), o)
	var res PickResult
	if jerr := json.Unmarshal(out.w.Bytes(), &res); jerr != nil {
		t.Fatalf("pick printed no JSON (%v): %s %s", err, out.w.String(), out.notes.String())
	}
	return res, out.w.String(), err
}

// TestPick: the writer's node first, then another rack; nothing over 90%
// full; fewer than asked for prints what it has and is a NotFoundError
// that says why. Fullness is a clean fraction: 58% of 1 TiB in whole bytes
// is 0.58, not 0.5799999999999272.
func TestPick(t *testing.T) {
	dn := func(host, rack string, used int64) node {
		return node{role: hdfs.RoleDataNode, host: host, ip: "10.1.0.1", rack: rack, usedPct: used}
	}
	_, c := cluster(t, dn("dn1.test", "/r1", 30), dn("dn2.test", "/r2", 58), dn("dn3.test", "/r2", 50), dn("full.test", "/r1", 95))
	o := DefaultPickOptions()
	o.Cluster, o.N, o.Writer = "prod", 3, "dn1.test"
	res, raw, err := pickJSON(t, c, o)
	if err != nil || len(res.Nodes) != 3 {
		t.Fatalf("pick 3: %v %s", err, raw)
	}
	if res.Nodes[0].ID != hdfs.InstanceID("prod", "dn1.test", "/r1") || res.Nodes[1].Rack != "/r2" {
		t.Errorf("placement %+v: want the writer's node first, then the other rack", res.Nodes)
	}
	for _, n := range res.Nodes {
		if strings.HasPrefix(n.Host, "full") {
			t.Errorf("chose %s, which is over 90%% full", n.ID)
		}
	}
	if !strings.Contains(raw, `"fullness": 0.58`+"\n") || !strings.Contains(raw, `"fullness": 0.3`+"\n") {
		t.Errorf("fullness is not printed as a clean fraction:\n%s", raw)
	}

	o.Writer, o.Exclude = "", []string{"dn3.test"}
	var out output
	err = Pick(context.Background(), c, out.out(false), o)
	if _, ok := errors.AsType[*NotFoundError](err); !ok || !strings.Contains(err.Error(), "only 2 of 3") ||
		!strings.Contains(err.Error(), "1 full") || !strings.Contains(err.Error(), "1 left out with --exclude") {
		t.Errorf("a shortfall: %v", err)
	}
	if lines := strings.Count(out.w.String(), "\n"); lines != 3 {
		t.Errorf("a shortfall printed %d lines, want a header and the 2 chosen:\n%s", lines, out.w.String())
	}
}

// TestPickProbeReplacesDeadNodes: with Probe, a chosen DataNode whose data
// port refuses is replaced by asking the registry again, avoiding it.
func TestPickProbeReplacesDeadNodes(t *testing.T) {
	// The writer is the dead node, so placement chooses it first and the
	// probe must replace it with the spare.
	var nodes []node
	for host, port := range map[string]int{"dn1.test": livePort(t), "dn2.test": deadPort(t), "dn3.test": livePort(t)} {
		nodes = append(nodes, node{role: hdfs.RoleDataNode, host: host, ip: "127.0.0.1", rack: "/r" + host[2:3], usedPct: 30, dataPort: port})
	}
	_, c := cluster(t, nodes...)
	o := DefaultPickOptions()
	o.Cluster, o.N, o.Writer, o.Probe, o.ProbeTimeout = "prod", 2, "dn2.test", true, 2*time.Second
	for range 2 {
		res, raw, err := pickJSON(t, c, o)
		if err != nil || len(res.Nodes) != 2 {
			t.Fatalf("pick with a probe: %v %s", err, raw)
		}
		for _, n := range res.Nodes {
			if n.Host == "dn2.test" {
				t.Errorf("pick with a probe chose %s, whose data port refuses", n.ID)
			}
		}
	}
	// Without the probe the writer's node comes first, dead or not.
	o.Probe = false
	if res, raw, err := pickJSON(t, c, o); err != nil || len(res.Nodes) != 2 || res.Nodes[0].Host != "dn2.test" {
		t.Errorf("pick for writer dn2.test without a probe: %v %s; want dn2 first", err, raw)
	}
}

// livePort is a loopback port that accepts every connection (and closes
// it) until the test ends.
func livePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// deadPort is a loopback port that was free a moment ago: a connection to
// it is refused.
func deadPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

package ctl

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/server"
)

// topologyCluster registers 40 DataNodes over four racks and two
// NameNodes.
func topologyCluster(t *testing.T) (*server.Server, *Conn) {
	t.Helper()
	var nodes []node
	for i := range 40 {
		nodes = append(nodes, node{role: hdfs.RoleDataNode, host: fmt.Sprintf("dn%02d.example.net", i),
			ip: fmt.Sprintf("10.0.%d.%d", i%4, i), rack: fmt.Sprintf("/dc1/rack-%d", i%4)})
	}
	nodes = append(nodes,
		node{role: hdfs.RoleNameNode, host: "nn-a.example.net", ip: "10.9.0.1", rack: "/dc1/rack-9", ha: hdfs.HAActive},
		node{role: hdfs.RoleNameNode, host: "nn-b.example.net", ip: "10.9.0.2", rack: "/dc1/rack-9", ha: hdfs.HAStandby})
	return cluster(t, nodes...)
}

// expectedRack is the rack topologyCluster gives an argument.
func expectedRack(arg string) string {
	var i int
	if _, err := fmt.Sscanf(arg, "dn%02d.example.net", &i); err == nil && i < 40 && strings.HasSuffix(arg, ".example.net") {
		return fmt.Sprintf("/dc1/rack-%d", i%4)
	}
	var a, b int
	if _, err := fmt.Sscanf(arg, "10.0.%d.%d", &a, &b); err == nil && b < 40 && a == b%4 && arg == fmt.Sprintf("10.0.%d.%d", a, b) {
		return fmt.Sprintf("/dc1/rack-%d", a)
	}
	switch arg {
	case "10.9.0.1", "10.9.0.2", "nn-a.example.net", "nn-b.example.net", "NN-B.EXAMPLE.NET":
		return "/dc1/rack-9"
	}
	return hdfs.DefaultRack
}

// topology runs Topology and returns its output and its log.
func topology(t *testing.T, c *Conn, cache string, args ...string) (out, logs string) {
	t.Helper()
	var w, l bytes.Buffer
	o := TopologyOptions{CachePath: cache, Logger: slog.New(slog.NewTextHandler(&l, nil))}
	if err := Topology(context.Background(), c, &w, o, args); err != nil {
		t.Fatalf("Topology: %v", err)
	}
	return w.String(), l.String()
}

func checkTopology(t *testing.T, what string, args []string, out, logs string) {
	t.Helper()
	// Hadoop splits on any whitespace; we print one per line.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(args) == 0 {
		if out != "" {
			t.Fatalf("%s: output %q for no arguments", what, out)
		}
		return
	}
	if len(lines) != len(args) || len(strings.Fields(out)) != len(args) {
		t.Fatalf("%s: %d lines for %d arguments:\n%s\n%s", what, len(lines), len(args), out, logs)
	}
	for i, a := range args {
		if want := expectedRack(a); lines[i] != want {
			t.Errorf("%s: argument %d %q → %q, want %q\n%s", what, i, a, lines[i], want, logs)
		}
	}
}

func TestTopologyProtocol(t *testing.T) {
	_, c := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "topology.json")
	for _, args := range [][]string{
		{"10.0.1.1"},
		{"dn02.example.net", "10.0.3.3", "unknown.example.net", "10.0.0.0", "192.168.1.1"},
		{"10.0.0.1", "10.0.0.1", "NN-B.EXAMPLE.NET", "10.9.0.1", "::1", ""}, // duplicates, case, IPv6, empty
		{},
	} {
		out, logs := topology(t, c, cache, args...)
		checkTopology(t, fmt.Sprintf("%q", args), args, out, logs)
	}

	// 100 arguments, Hadoop's default batch (net.topology.script.number.args).
	var hundred []string
	for i := range 100 {
		switch i % 3 {
		case 0:
			hundred = append(hundred, fmt.Sprintf("10.0.%d.%d", (i/3)%4, i/3))
		case 1:
			hundred = append(hundred, fmt.Sprintf("dn%02d.example.net", i%50))
		default:
			hundred = append(hundred, fmt.Sprintf("10.1.2.%d", i))
		}
	}
	out, logs := topology(t, c, cache, hundred...)
	checkTopology(t, "100 arguments", hundred, out, logs)
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache file after a successful read: %v", err)
	}
}

// TestTopologyRegistryDown: the registry goes away; the cache file gives
// the same answers, also for a node asked before by its other key; without
// a cache every host gets the default rack.
func TestTopologyRegistryDown(t *testing.T) {
	s, c := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "sub", "topology.json")
	args := []string{"10.0.1.1", "dn02.example.net", "unknown", "10.9.0.2"}
	before, logs := topology(t, c, cache, args...)
	checkTopology(t, "registry up", args, before, logs)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	after, logs := topology(t, c, cache, args...)
	checkTopology(t, "registry down, cache", args, after, logs)
	if after != before || !strings.Contains(logs, "cache file") {
		t.Errorf("from cache: %q (before %q); log %s", after, before, logs)
	}
	// Asked before by address and by name, now by the other: Hadoop calls
	// the script with either.
	other := []string{"dn01.example.net", "10.0.2.2", "nn-b.example.net"}
	out, logs := topology(t, c, cache, other...)
	checkTopology(t, "registry down, cache, the other keys", other, out, logs)

	out, logs = topology(t, c, filepath.Join(t.TempDir(), "none.json"), args...)
	if out != strings.Repeat(hdfs.DefaultRack+"\n", len(args)) || !strings.Contains(logs, "no registry and no cache") {
		t.Errorf("no registry, no cache: %q\n%s", out, logs)
	}
	// A corrupt cache is reported and answered around.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, logs = topology(t, c, bad, args...)
	if out != strings.Repeat(hdfs.DefaultRack+"\n", len(args)) || !strings.Contains(logs, "cannot read the cache file") {
		t.Errorf("corrupt cache: %q\n%s", out, logs)
	}
}

// TestTopologyEmptyRegistry: a registry that knows no HDFS node (it has
// just restarted) does not override the cache.
func TestTopologyEmptyRegistry(t *testing.T) {
	_, c := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "topology.json")
	args := []string{"10.0.2.2", "nobody"}
	out, logs := topology(t, c, cache, args...)
	checkTopology(t, "full", args, out, logs)

	_, empty := cluster(t)
	out2, logs := topology(t, empty, cache, args...)
	if out2 != out || !strings.Contains(logs, "knows no HDFS node") {
		t.Errorf("empty registry: %q (want %q)\n%s", out2, out, logs)
	}
	if out3, _ := topology(t, empty, filepath.Join(t.TempDir(), "n.json"), args...); out3 != strings.Repeat(hdfs.DefaultRack+"\n", 2) {
		t.Errorf("empty registry, no cache: %q", out3)
	}
}

// TestTopologyCacheHoldsOnlyTheAnswers: the cache file keeps the racks the
// registry answered for the hosts asked, by name and address, not the
// registry.
func TestTopologyCacheHoldsOnlyTheAnswers(t *testing.T) {
	_, c := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "topology.json")
	args := []string{"dn01.example.net", "10.0.2.2", "nobody"}
	out, logs := topology(t, c, cache, args...)
	checkTopology(t, "lookup", args, out, logs)
	f, err := os.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := hdfs.ReadRackMemory(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mem.Len() != 4 {
		t.Errorf("cache holds %d entries, want the 2 nodes the registry answered (of 42 registered), each by name and address", mem.Len())
	}
	for _, h := range append(args[:2], "10.0.1.1", "dn02.example.net") { // the other key of each
		if r, ok := mem.Rack(h); !ok || r != expectedRack(h) {
			t.Errorf("cache: %s → %q, %v; want %q", h, r, ok, expectedRack(h))
		}
	}
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/server"
)

// topologyCluster registers 40 DataNodes over four racks and two NameNodes,
// and returns the registry URL.
func topologyCluster(t *testing.T) (*server.Server, string) {
	t.Helper()
	s, base := hdfsTestServer(t)
	var nodes []hdfsNode
	for i := range 40 {
		nodes = append(nodes, hdfsNode{role: hdfs.RoleDataNode, host: fmt.Sprintf("dn%02d.example.net", i),
			ip: fmt.Sprintf("10.0.%d.%d", i%4, i), rack: fmt.Sprintf("/dc1/rack-%d", i%4)})
	}
	nodes = append(nodes,
		hdfsNode{role: hdfs.RoleNameNode, host: "nn-a.example.net", ip: "10.9.0.1", rack: "/dc1/rack-9", ha: hdfs.HAActive},
		hdfsNode{role: hdfs.RoleNameNode, host: "nn-b.example.net", ip: "10.9.0.2", rack: "/dc1/rack-9", ha: hdfs.HAStandby})
	registerHDFSNodes(t, base, nodes...)
	return s, base
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
	case "10.9.0.1", "10.9.0.2", "nn-a.example.net", "NN-B.EXAMPLE.NET":
		return "/dc1/rack-9"
	}
	return hdfs.DefaultRack
}

func checkTopology(t *testing.T, what string, args []string, code int, out, errs string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("%s: exit %d (must be 0 whatever happens)\nstderr: %s", what, code, errs)
	}
	// Hadoop splits on any whitespace; we print one per line.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(args) == 0 {
		if out != "" {
			t.Fatalf("%s: output %q for no arguments", what, out)
		}
		return
	}
	if len(lines) != len(args) || len(strings.Fields(out)) != len(args) {
		t.Fatalf("%s: %d lines for %d arguments:\n%s", what, len(lines), len(args), out)
	}
	for i, a := range args {
		if want := expectedRack(a); lines[i] != want {
			t.Errorf("%s: argument %d %q → %q, want %q", what, i, a, lines[i], want)
		}
	}
}

func TestTopologyProtocol(t *testing.T) {
	_, base := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "topology.json")
	topo := func(args ...string) (int, string, string) {
		return runHeureka(t, append([]string{"topology", "--registry", base, "--cache", cache}, args...)...)
	}

	for _, args := range [][]string{
		{"10.0.1.1"},
		{"dn02.example.net", "10.0.3.3", "unknown.example.net", "10.0.0.0", "192.168.1.1"},
		{"10.0.0.1", "10.0.0.1", "NN-B.EXAMPLE.NET", "10.9.0.1", "::1", ""}, // duplicates, case, IPv6, empty
		{},
	} {
		code, out, errs := topo(args...)
		checkTopology(t, fmt.Sprintf("%q", args), args, code, out, errs)
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
	code, out, errs := topo(hundred...)
	checkTopology(t, "100 arguments", hundred, code, out, errs)
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache file after a successful read: %v", err)
	}
}

// TestTopologyRegistryDown: the registry goes away; the cache file gives
// the same answers; without a cache every host gets the default rack. The
// exit status is 0 throughout.
func TestTopologyRegistryDown(t *testing.T) {
	s, base := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "sub", "topology.json")
	args := []string{"10.0.1.1", "dn02.example.net", "unknown", "10.9.0.2"}
	code, before, errs := runHeureka(t, append([]string{"topology", "--registry", base, "--cache", cache}, args...)...)
	checkTopology(t, "registry up", args, code, before, errs)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, after, errs := runHeureka(t, append([]string{"topology", "--registry", base, "--cache", cache, "--timeout", "2s"}, args...)...)
	checkTopology(t, "registry down, cache", args, code, after, errs)
	if after != before || !strings.Contains(errs, "cache file") {
		t.Errorf("from cache: %q (before %q); stderr %s", after, before, errs)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v with the registry down", took)
	}
	// Asked before by address and by name, now by the other: Hadoop calls
	// the script with either.
	other := []string{"dn01.example.net", "10.0.2.2", "10.9.0.2"}
	code, out, errs := runHeureka(t, append([]string{"topology", "--registry", base, "--cache", cache, "--timeout", "2s"}, other...)...)
	checkTopology(t, "registry down, cache, the other keys", other, code, out, errs)

	code, out, errs = runHeureka(t, append([]string{"topology", "--registry", base, "--cache", filepath.Join(t.TempDir(), "none.json"), "--timeout", "1s"}, args...)...)
	if code != 0 || out != strings.Repeat(hdfs.DefaultRack+"\n", len(args)) || !strings.Contains(errs, "no registry and no cache") {
		t.Errorf("no registry, no cache: exit %d %q\n%s", code, out, errs)
	}

	// A corrupt cache is reported and answered around.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runHeureka(t, append([]string{"topology", "--registry", base, "--cache", bad, "--timeout", "1s"}, args...)...)
	if code != 0 || out != strings.Repeat(hdfs.DefaultRack+"\n", len(args)) || !strings.Contains(errs, "cannot read the cache file") {
		t.Errorf("corrupt cache: exit %d %q\n%s", code, out, errs)
	}

	// No registry configured at all.
	t.Setenv(registryEnvVar, "")
	code, out, errs = runHeureka(t, "topology", "--cache", filepath.Join(t.TempDir(), "x.json"), "h1", "h2")
	if code != 0 || out != hdfs.DefaultRack+"\n"+hdfs.DefaultRack+"\n" || !strings.Contains(errs, "no registry configured") {
		t.Errorf("no registry configured: exit %d %q\n%s", code, out, errs)
	}
	// A bad flag is the one failure.
	if code, _, errs := runHeureka(t, "topology", "--nope", "h1"); code != 2 || !strings.Contains(errs, "nope") {
		t.Errorf("bad flag: exit %d %s", code, errs)
	}
}

// TestTopologyEmptyRegistry: a registry that knows no HDFS node (it has
// just restarted) does not override the cache.
func TestTopologyEmptyRegistry(t *testing.T) {
	_, base := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "topology.json")
	args := []string{"10.0.2.2", "nobody"}
	code, out, errs := runHeureka(t, append([]string{"topology", "--registry", base, "--cache", cache}, args...)...)
	checkTopology(t, "full", args, code, out, errs)

	_, empty := hdfsTestServer(t)
	t.Setenv(registryEnvVar, empty)
	code, out2, errs := runHeureka(t, append([]string{"topology", "--cache", cache}, args...)...)
	if code != 0 || out2 != out || !strings.Contains(errs, "knows no HDFS node") {
		t.Errorf("empty registry: exit %d %q (want %q)\n%s", code, out2, out, errs)
	}
	code, out3, _ := runHeureka(t, append([]string{"topology", "--cache", filepath.Join(t.TempDir(), "n.json")}, args...)...)
	if code != 0 || out3 != strings.Repeat(hdfs.DefaultRack+"\n", 2) {
		t.Errorf("empty registry, no cache: exit %d %q", code, out3)
	}
}

// TestTopologyCacheHoldsOnlyTheAnswers: the cache file keeps the racks the
// registry answered for the hosts asked, not the registry.
func TestTopologyCacheHoldsOnlyTheAnswers(t *testing.T) {
	_, base := topologyCluster(t)
	cache := filepath.Join(t.TempDir(), "topology.json")
	args := []string{"dn01.example.net", "10.0.2.2", "nobody"}
	code, out, errs := runHeureka(t, append([]string{"topology", "--registry", base, "--cache", cache}, args...)...)
	checkTopology(t, "lookup", args, code, out, errs)
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

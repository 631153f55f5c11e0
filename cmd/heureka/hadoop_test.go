package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/server"
)

// hdfsTestServer runs a registry on a free port and returns it with its
// Eureka base URL.
func hdfsTestServer(t *testing.T) (*server.Server, string) {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	s := server.New(cfg, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s, "http://" + s.Addr().String() + "/eureka"
}

// hdfsNode describes an instance to register.
type hdfsNode struct {
	role       hdfs.Role
	host, ip   string
	rack       string
	status     heureka.Status
	ha         hdfs.HAState
	haTime     int64
	adminState hdfs.AdminState
}

func registerHDFSNodes(t *testing.T, base string, nodes ...hdfsNode) {
	t.Helper()
	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Logger = []string{base}, slog.New(slog.DiscardHandler)
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, n := range nodes {
		info := hdfs.NodeInfo{Rack: n.rack, HAState: n.ha, HATransitionTime: n.haTime, Status: string(n.adminState), RPCPort: 8020}
		st := n.status
		if st == "" {
			st = heureka.StatusUp
		}
		in := &heureka.Instance{
			ID: hdfs.InstanceID("prod", n.host, n.rack), App: hdfs.AppName(n.role, "prod"),
			HostName: n.host, IPAddr: n.ip, Status: st, Metadata: info.WriteMetadata(heureka.Metadata{}),
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.Register(ctx, in)
		cancel()
		if err != nil {
			t.Fatalf("register %s: %v", in.ID, err)
		}
	}
}

// runHeureka runs one command line in-process.
func runHeureka(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHadoopHDFSSite(t *testing.T) {
	_, base := hdfsTestServer(t)
	registerHDFSNodes(t, base,
		hdfsNode{role: hdfs.RoleNameNode, host: "nn-a", ip: "10.0.0.1", rack: "/r1", ha: hdfs.HAStandby, haTime: 100},
		hdfsNode{role: hdfs.RoleNameNode, host: "nn-b", ip: "10.0.0.2", rack: "/r2", ha: hdfs.HAActive, haTime: 200},
		hdfsNode{role: hdfs.RoleDataNode, host: "dn1", ip: "10.0.1.1", rack: "/r1"},
	)
	code, out, errs := runHeureka(t, "hadoop", "hdfs-site", "--cluster", "prod", "--nameservice", "ns1", "--registry", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"<name>dfs.nameservices</name>\n    <value>ns1</value>",
		"<name>dfs.ha.namenodes.ns1</name>\n    <value>nn-b,nn-a</value>",              // the active one first
		"<name>dfs.namenode.rpc-address.ns1.nn-b</name>\n    <value>nn-b:8020</value>", // IDs name hosts
		"<name>dfs.namenode.rpc-address.ns1.nn-a</name>\n    <value>nn-a:8020</value>",
		hdfs.FailoverProxyProvider,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	t.Setenv(registryEnvVar, base)
	if code, out, _ := runHeureka(t, "hadoop", "hdfs-site", "--cluster", "prod", "--nameservice", "ns1"); code != 0 || !strings.Contains(out, "nn-b:8020") {
		t.Errorf("with $%s: exit %d\n%s", registryEnvVar, code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"hadoop"}, 2, "subcommand"},
		{[]string{"hadoop", "nope"}, 2, "unknown subcommand"},
		{[]string{"hadoop", "hdfs-site", "--cluster", "prod"}, 2, "--nameservice"},
		{[]string{"hadoop", "hdfs-site", "--cluster", "prod", "--nameservice", "a.b"}, 1, "nameservice"},
		{[]string{"hadoop", "hdfs-site", "--cluster", "other", "--nameservice", "ns1"}, 1, "no NameNode"},
		{[]string{"hadoop", "hosts", "--cluster", "prod", "--format", "yaml"}, 2, "--format"},
		{[]string{"hadoop", "hosts", "--cluster", "prod", "extra"}, 2, "unexpected argument"},
		{[]string{"hadoop", "hosts", "--cluster", "other"}, 1, "no DataNode"},
		{[]string{"hadoop", "hosts", "--cluster", "prod", "--registry", "http://127.0.0.1:1/eureka", "--timeout", "1s"}, 1, "reading the registry"},
	} {
		code, out, errs := runHeureka(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.err) || (code != 0 && out != "") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errs, c.code, c.err)
		}
	}
	if code, out, _ := runHeureka(t, "help", "hadoop"); code != 0 || !strings.Contains(out, "hdfs-site") {
		t.Errorf("help hadoop: %d %s", code, out)
	}
}

func TestHadoopHosts(t *testing.T) {
	_, base := hdfsTestServer(t)
	registerHDFSNodes(t, base,
		hdfsNode{role: hdfs.RoleDataNode, host: "dn1", ip: "10.0.1.1", rack: "/r1", adminState: hdfs.AdminNormal},
		hdfsNode{role: hdfs.RoleDataNode, host: "dn2", ip: "10.0.1.2", rack: "/r1", adminState: hdfs.AdminDecommissionInProgress},
		hdfsNode{role: hdfs.RoleDataNode, host: "dn3", ip: "10.0.1.3", rack: "/r2", adminState: hdfs.AdminInMaintenance},
		hdfsNode{role: hdfs.RoleDataNode, host: "dn4", ip: "10.0.1.4", rack: "/r2", status: heureka.StatusDown},
		hdfsNode{role: hdfs.RoleNameNode, host: "nn-a", ip: "10.0.0.1", rack: "/r1", ha: hdfs.HAActive},
	)
	for format, want := range map[string]string{
		"include": "dn1\ndn2\ndn3\ndn4\n",
		"exclude": "dn2\n",
	} {
		code, out, errs := runHeureka(t, "hadoop", "hosts", "--cluster", "prod", "--format", format, "--registry", base)
		if code != 0 || out != want {
			t.Errorf("%s: exit %d %q %s; want %q", format, code, out, errs, want)
		}
	}
	code, out, errs := runHeureka(t, "hadoop", "hosts", "--cluster", "prod", "--format", "json", "--registry", base)
	var got []map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("json: exit %d %s %s", code, out, errs)
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
}

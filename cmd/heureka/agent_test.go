package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server/servertest"
	"github.com/heureka-project/heureka/sim"
)

func TestAgentCommandLine(t *testing.T) {
	base := servertest.URL(servertest.Open(t, nil))
	common := []string{"--cluster", "prod", "--registry", base, "--jmx", "http://127.0.0.1:1", "--host", "dn1", "--ip", "127.0.0.1"}
	other := []string{"--cluster", "prod", "--registry", base, "--host", "h1", "--ip", "127.0.0.1"}
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"agent", "-h"}, 0, "--topology-script"},
		{append([]string{"agent"}, common...), 2, "--role"},
		{append([]string{"agent", "--role", "journalnode"}, common...), 2, "journalnode"},
		{append([]string{"agent", "--role", "datanode", "--rpc-port", "8020"}, common...), 2, "--rpc-port is for NameNodes"},
		{append([]string{"agent", "--role", "namenode", "--data-port", "9866"}, common...), 2, "for DataNodes"},
		{append([]string{"agent", "--role", "datanode", "--rack", "/r", "--topology-table", "t"}, common...), 2, "at most one"},
		{append([]string{"agent", "--role", "datanode", "--admin-state", "gone"}, common...), 2, "--admin-state"},
		{append([]string{"agent", "--role", "datanode", "--data-port", "70000"}, common...), 2, "out of range"},
		{append(append([]string{"agent", "--role", "datanode"}, common...), "--ip", "not-an-ip"), 2, `--ip "not-an-ip": is not an IP address`},
		{append([]string{"agent", "--role", "datanode", "extra"}, common...), 2, "unexpected argument"},
		{[]string{"agent", "--role", "datanode", "--registry", base, "--jmx", "http://h:1"}, 2, "--cluster"},
		{[]string{"agent", "--role", "datanode", "--cluster", "prod", "--jmx", "http://h:1"}, 2, "--registry"},
		{[]string{"agent", "--role", "datanode", "--cluster", "prod", "--registry", base}, 2, "--jmx"},
		{append([]string{"agent", "--role", "datanode", "--topology-table", "/nonexistent"}, common...), 1, "topology table"},
		{append([]string{"agent", "--role", "datanode", "--pid", "12", "--pid-file", "/run/dn.pid"}, common...), 2, "at most one"},
		{append([]string{"agent", "--role", "datanode", "--systemd-unit", "--all"}, common...), 2, `--systemd-unit "--all"`},
		{append([]string{"agent", "--role", "datanode", "--hang-after", "0s"}, common...), 2, "--hang-after 0s: must be a positive duration"},
		{append([]string{"agent", "--role", "datanode", "--metadata-max-age", "0s"}, common...), 2, "--metadata-max-age 0s"},
		{append([]string{"agent", "--role", "datanode", "--up-after", "10m"}, common...), 2, "--flap-hold-max 5m0s: is less than --up-after 10m0s"},
		{append([]string{"agent", "--role", "datanode", "--port", "9866"}, common...), 2, "--url and --port are for the other roles"},
		// The other roles.
		{append([]string{"agent", "--role", "yarn-resourcemanager"}, other...), 2, "--url"},
		{append([]string{"agent", "--role", "zookeeper", "--url", "http://h:1", "--ensemble", "1=zk1"}, other...), 2, "--ensemble"},
		{append([]string{"agent", "--role", "kafka-broker", "--broker", "kafka1"}, other...), 2, "--broker"},
		{append([]string{"agent", "--role", "kafka-broker", "--broker-id", "-7"}, other...), 2, "--broker-id -7"},
		{append([]string{"agent", "--role", "hbase-regionserver", "--url", "http://h:1", "--masters", "hm1"}, other...), 2, "--masters"},
		{append([]string{"agent", "--role", "elasticsearch", "--url", "http://h:1", "--rack", "/r", "--topology-table", "t"}, other...), 2, "at most one"},
		{append([]string{"agent", "--role", "zookeeper", "--url", "http://h:1", "--hang-after", "0s"}, other...), 2, "--hang-after 0s"},
		{append([]string{"agent", "--role", "zookeeper", "--url", "http://h:1", "--data-port", "9866"}, other...), 2, "are HDFS's"},
		{append([]string{"agent", "--role", "cassandra"}, other...), 2, `"cassandra": want datanode`},
		{[]string{"agent", "--role", "zookeeper", "--url", "http://h:1", "--registry", base}, 2, "--cluster"},
	} {
		t.Setenv(registryEnv, "")
		code, _, errs := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.err) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d with %q", c.args, code, errs, c.code, c.err)
		}
	}
}

func openTestSim(t *testing.T, role hdfs.Role) *sim.Sim {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Role = role
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// TestAgentInProcess runs `heureka agent` against a registry and a
// simulated DataNode in this process, with the rack from a topology
// script, and stops it as a signal would.
func TestAgentInProcess(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	base := servertest.URL(servertest.Open(t, nil))
	dn := openTestSim(t, hdfs.RoleDataNode)
	_, port, _ := net.SplitHostPort(dn.PortAddr())
	script := filepath.Join(t.TempDir(), "topo.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do case $a in 127.*) echo /dc9/rack-7;; *) echo /default-rack;; esac; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr proctest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"agent", "--role", "datanode", "--cluster", "prod", "--registry", base,
			"--jmx", "http://" + dn.HTTPAddr(), "--data-port", port, "--host", "dn1.test", "--ip", "127.0.0.1",
			"--topology-script", script, "--drain", "200ms"}, &stderr, &stderr)
	}()

	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Logger = []string{base}, slog.New(slog.DiscardHandler)
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	const id = "prod-dn1.test-dc9.rack-7"
	var in *heureka.Instance
	proctest.Eventually(t, 10*time.Second, "the agent's registration", func() bool {
		rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer rcancel()
		in, err = c.Instance(rctx, "hdfs-datanode.prod", id)
		return err == nil
	})
	if in.Status != heureka.StatusUp || in.Metadata.Get(hdfs.MetaRack) != "/dc9/rack-7" || in.Metadata.Get(hdfs.MetaDataPort) != port {
		t.Errorf("registered %s %v", in.Status, in.Metadata)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("agent did not stop\n%s", stderr.String())
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer rcancel()
	if _, err := c.Instance(rctx, "hdfs-datanode.prod", id); heureka.ErrorCode(err) != heureka.ENOTFOUND {
		t.Errorf("after stop: %v", err)
	}
	for _, want := range []string{"heureka agent running", "draining: OUT_OF_SERVICE", "deregistered"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, stderr.String())
		}
	}
}

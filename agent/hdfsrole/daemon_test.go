package hdfsrole

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/sim"
)

func openSim(t *testing.T, cfg sim.Config) *sim.Sim {
	t.Helper()
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

func ctx1s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestJMXDaemonDataNode(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Capacity, cfg.Used, cfg.Blocks = 2000, 500, 42
	s := openSim(t, cfg)
	d, err := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleDataNode, JMXURL: "http://" + s.HTTPAddr(), PortAddr: s.PortAddr()})
	if err != nil {
		t.Fatal(err)
	}
	if d.JMXURL() != "http://"+s.HTTPAddr()+"/jmx" {
		t.Errorf("JMX URL %s", d.JMXURL())
	}
	if _, err := d.Probe(ctx1s(t)); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	info, err := d.Collect(ctx1s(t))
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(s.PortAddr())
	if info.DiskTotal != 2000 || info.DiskUsed != 500 || info.BlockCount != 42 || info.Version != "3.3.6" ||
		strconv.Itoa(info.DataPort) != port || info.RPCPort != 9867 {
		t.Errorf("collected %+v", info)
	}

	s.Stop()
	if _, err := d.Probe(ctx1s(t)); err == nil {
		t.Error("Probe of a stopped daemon succeeded")
	}
	if _, err := d.Collect(ctx1s(t)); err == nil {
		t.Error("Collect of a stopped daemon succeeded")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Probe(ctx1s(t)); err != nil {
		t.Errorf("Probe after start: %v", err)
	}
}

// TestJMXDaemonPortDown: the web server answers but the data port does
// not: the daemon is not serving.
func TestJMXDaemonPortDown(t *testing.T) {
	s := openSim(t, sim.DefaultConfig())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	d, err := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleDataNode, JMXURL: "http://" + s.HTTPAddr() + "/jmx", PortAddr: dead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Probe(ctx1s(t)); err == nil || !strings.Contains(err.Error(), dead) {
		t.Errorf("Probe: %v", err)
	}
}

func TestJMXDaemonNameNode(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Role, cfg.HAState = hdfs.RoleNameNode, hdfs.HAStandby
	s := openSim(t, cfg)
	d, err := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleNameNode, JMXURL: "http://" + s.HTTPAddr(), PortAddr: s.PortAddr()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.Probe(ctx1s(t))
	if err != nil || h.HAState != hdfs.HAStandby || h.HATransitionTime == 0 {
		t.Fatalf("Probe: %+v %v", h, err)
	}
	if err := s.SetHAState(hdfs.HAActive); err != nil {
		t.Fatal(err)
	}
	h2, err := d.Probe(ctx1s(t))
	if err != nil || h2.HAState != hdfs.HAActive || h2.HATransitionTime < h.HATransitionTime {
		t.Fatalf("Probe after failover: %+v %v", h2, err)
	}
	info, err := d.Collect(ctx1s(t))
	_, port, _ := net.SplitHostPort(s.PortAddr())
	if err != nil || info.HAState != hdfs.HAActive || info.Status != "Operational" || strconv.Itoa(info.RPCPort) != port || info.Version != "3.3.6" {
		t.Errorf("Collect: %+v %v", info, err)
	}
}

// TestJMXDaemonDiskFallback: a DataNode JMX without FSDatasetState takes
// its capacity from the data directories' filesystem.
func TestJMXDaemonDiskFallback(t *testing.T) {
	const body = `{"beans":[{"name":"Hadoop:service=DataNode,name=DataNodeInfo","modelerType":"org.apache.hadoop.hdfs.server.datanode.DataNode",
  "SoftwareVersion":"3.3.6","Version":"3.3.6, r1","DataPort":"9866","RpcPort":"9867",
  "VolumeInfo":"{\"/d\":{\"numBlocks\":7,\"usedSpace\":1,\"freeSpace\":2,\"reservedSpace\":0}}"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	dir := t.TempDir()
	d, err := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleDataNode, JMXURL: srv.URL, DataDirs: []string{dir, dir}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := d.Collect(ctx1s(t))
	if err != nil {
		t.Fatal(err)
	}
	total, used, err := DiskUsage([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if info.DiskTotal != total || info.DiskTotal <= 0 || info.DiskUsed <= 0 || info.DiskUsed > info.DiskTotal ||
		used <= 0 || info.BlockCount != 7 {
		t.Errorf("collected %+v; statfs %d/%d", info, used, total)
	}

	d2, _ := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleDataNode, JMXURL: srv.URL, DataDirs: []string{dir + "/missing"}})
	if _, err := d2.Collect(ctx1s(t)); err == nil {
		t.Error("a missing data directory gave no error")
	}
}

func TestJMXDaemonBadAnswers(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
		body string
	}{
		{"500", 500, `{}`},
		{"not json", 200, `<html>`},
		{"no datanode bean", 200, `{"beans":[{"name":"java.lang:type=Runtime"}]}`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.code)
			_, _ = w.Write([]byte(c.body))
		}))
		d, err := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleDataNode, JMXURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Probe(ctx1s(t)); err == nil {
			t.Errorf("%s: Probe succeeded", c.name)
		}
		srv.Close()
	}
	for _, cfg := range []DaemonConfig{
		{Role: "journalnode", JMXURL: "http://h:1"},
		{Role: hdfs.RoleDataNode, JMXURL: "h:1"},
		{Role: hdfs.RoleDataNode, JMXURL: "http://h:1", PortAddr: "h"},
	} {
		if _, err := NewJMXDaemon(cfg); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

func TestDiskUsage(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	t1, u1, err := DiskUsage([]string{a})
	if err != nil {
		t.Fatal(err)
	}
	t2, _, err := DiskUsage([]string{a, b})
	if err != nil || t2 != t1 || u1 < 0 || t1 <= 0 {
		t.Errorf("one filesystem counted twice: %d vs %d (%v)", t2, t1, err)
	}
	if _, _, err := DiskUsage(nil); err == nil {
		t.Error("no directories: no error")
	}
}

func TestParseDataDirs(t *testing.T) {
	got := ParseDataDirs("/data/1", "[DISK]/data/2,[SSD]file:///data/3", " , file:///data/4 ")
	want := []string{"/data/1", "/data/2", "/data/3", "/data/4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ParseDataDirs = %q, want %q", got, want)
	}
}

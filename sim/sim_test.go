package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/hdfs"
)

func mustOpen(t *testing.T, cfg Config) *Sim {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func post(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDataNodeJMXParsesAsHadoop(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hostname = "dn7.example.net"
	cfg.Capacity, cfg.Used, cfg.Blocks = 1000, 400, 11
	cfg.Volumes = []string{"/data/1", "/data/2"}
	s := mustOpen(t, cfg)

	code, body, h := get(t, "http://"+s.HTTPAddr()+"/jmx")
	if code != 200 || h.Get("Content-Type") != "application/json; charset=utf8" || h.Get("X-Heureka-Simulator") != "true" {
		t.Fatalf("GET /jmx: %d %v", code, h)
	}
	for _, want := range []string{"{\n  \"beans\" : [ {\n    \"name\" : ", "  }, {\n", "} ]\n}",
		`"Simulated" : true`, `"tag.Simulator" : "heureka sim (not Hadoop)"`, `"HttpPort" : null`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	d, err := hdfs.ParseDataNodeJMX(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(s.PortAddr())
	if !d.CapacityKnown || d.Capacity != 1000 || d.DfsUsed != 400 || d.Remaining != 600 ||
		!d.BlockCountKnown || d.BlockCount != 11 || d.Version != "3.3.6" || d.Hostname != "dn7.example.net" ||
		len(d.Volumes) != 2 || d.RPCPort != 9867 || port == "" || itoa(d.DataPort) != port {
		t.Errorf("parsed %+v (data port %s)", d, port)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestNameNodeJMXAndHA(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Role = hdfs.RoleNameNode
	cfg.Hostname = "nn1"
	cfg.HAState = hdfs.HAStandby
	s := mustOpen(t, cfg)
	base := "http://" + s.HTTPAddr()

	_, body, _ := get(t, base+"/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus")
	n, err := hdfs.ParseNameNodeJMX(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(s.PortAddr())
	if n.HAState != hdfs.HAStandby || n.HostAndPort != "nn1:"+port || n.LastHATransitionTime == 0 {
		t.Fatalf("status: %+v", n)
	}
	before := n.LastHATransitionTime
	if strings.Count(body, `"name" :`) != 1 {
		t.Errorf("qry matched more than one bean:\n%s", body)
	}

	if code, out := post(t, "http://"+s.ControlAddr()+"/sim/ha?state=active"); code != 200 || !strings.Contains(out, `"ha_state": "active"`) {
		t.Fatalf("switch: %d %s", code, out)
	}
	_, body, _ = get(t, base+"/jmx?qry=Hadoop:service=NameNode,*")
	n, err = hdfs.ParseNameNodeJMX(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if n.HAState != hdfs.HAActive || n.FSNamesystemHAState != hdfs.HAActive || n.LastHATransitionTime <= before ||
		n.Version != "3.3.6" || n.FSState != "Operational" || !n.CapacityKnown {
		t.Errorf("after switch: %+v", n)
	}
	if code, _ := post(t, "http://"+s.ControlAddr()+"/sim/ha?state=leader"); code != 400 {
		t.Errorf("bad state: %d", code)
	}

	// No capacity: PercentUsed is a bare NaN, as Hadoop writes it.
	if code, _ := post(t, "http://"+s.ControlAddr()+"/sim/set?capacity=0&used=0&safemode=on"); code != 200 {
		t.Fatalf("set: %d", code)
	}
	_, body, _ = get(t, base+"/jmx")
	if !strings.Contains(body, `"PercentUsed" : NaN`) {
		t.Errorf("no bare NaN:\n%s", body)
	}
	n, err = hdfs.ParseNameNodeJMX(strings.NewReader(body))
	if err != nil || n.FSState != "safeMode" || n.Safemode == "" {
		t.Errorf("safe mode: %+v %v", n, err)
	}
}

func TestQueries(t *testing.T) {
	s := mustOpen(t, DefaultConfig())
	base := "http://" + s.HTTPAddr() + "/jmx"
	for _, c := range []struct {
		query string
		code  int
		beans int
		want  string
	}{
		{"", 200, 6, ""},
		{"?qry=*:*", 200, 6, ""},
		{"?qry=Hadoop:*", 200, 5, ""},
		{"?qry=Hadoop:service=DataNode,name=FSDatasetState", 200, 1, `"Capacity"`},
		{"?qry=Hadoop:service=DataNode,name=FSDatasetState*", 200, 2, ""},
		{"?qry=Hadoop:service=DataNode,name=DataNodeActivity-*", 200, 1, ""},
		{"?qry=Hadoop:service=DataNode", 200, 0, `"beans" : [ ]`},
		{"?qry=nocolon", 400, 0, `"result" : "ERROR"`},
		{"?get=Hadoop:service=DataNode,name=DataNodeInfo::ClusterId", 200, 1, `"ClusterId" : "CID-`},
		{"?get=Hadoop:service=DataNode,name=DataNodeInfo::Nope", 404, 0, "No attribute with name Nope was found."},
		{"?get=Hadoop:service=DataNode,name=DataNodeInfo", 400, 0, ""},
	} {
		code, body, _ := get(t, base+c.query)
		if code != c.code || strings.Count(body, `"name" :`) != c.beans || !strings.Contains(body, c.want) {
			t.Errorf("%q: %d, %d beans, want %d, %d, %q:\n%s", c.query, code, strings.Count(body, `"name" :`), c.code, c.beans, c.want, body)
		}
	}
	if code, _, _ := get(t, "http://"+s.HTTPAddr()+"/other"); code != 404 {
		t.Errorf("/other: %d", code)
	}
}

func TestStopStart(t *testing.T) {
	s := mustOpen(t, DefaultConfig())
	httpAddr, portAddr, ctrl := s.HTTPAddr(), s.PortAddr(), "http://"+s.ControlAddr()

	held, err := net.Dial("tcp", portAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	if code, out := post(t, ctrl+"/sim/stop"); code != 200 || !strings.Contains(out, `"running": false`) {
		t.Fatalf("stop: %d %s", code, out)
	}
	if _, err := http.Get("http://" + httpAddr + "/jmx"); err == nil {
		t.Error("/jmx answers while stopped")
	}
	if c, err := net.DialTimeout("tcp", portAddr, time.Second); err == nil {
		c.Close()
		t.Error("data port accepts while stopped")
	}
	_ = held.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := held.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Errorf("held connection not cut: %v", err)
	}

	if code, out := post(t, ctrl+"/sim/start"); code != 200 || !strings.Contains(out, `"running": true`) {
		t.Fatalf("start: %d %s", code, out)
	}
	if s.HTTPAddr() != httpAddr || s.PortAddr() != portAddr {
		t.Errorf("moved: %s %s, was %s %s", s.HTTPAddr(), s.PortAddr(), httpAddr, portAddr)
	}
	if code, _, _ := get(t, "http://"+httpAddr+"/jmx"); code != 200 {
		t.Errorf("/jmx after start: %d", code)
	}
	c, err := net.DialTimeout("tcp", portAddr, time.Second)
	if err != nil {
		t.Fatalf("data port after start: %v", err)
	}
	c.Close()
	if err := s.Start(); err != nil {
		t.Errorf("second Start: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestStartStopped(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Stopped = true
	s := mustOpen(t, cfg)
	if s.Running() || s.HTTPAddr() != "127.0.0.1:0" {
		t.Fatalf("running=%v http=%s", s.Running(), s.HTTPAddr())
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(t, "http://"+s.HTTPAddr()+"/jmx"); code != 200 {
		t.Errorf("/jmx: %d", code)
	}
}

func TestConfigAndSizes(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Role = "journalnode" },
		func(c *Config) { c.Used = c.Capacity + 1 },
		func(c *Config) { c.Hostname = "a b" },
		func(c *Config) { c.Volumes = nil },
		func(c *Config) { c.Role, c.HAState = hdfs.RoleNameNode, "leader" },
		func(c *Config) { c.HTTPAddr = "" },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if _, err := New(c); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	dn := mustOpen(t, DefaultConfig())
	if err := dn.SetHAState(hdfs.HAActive); err == nil {
		t.Error("a DataNode took an HA state")
	}
	if err := dn.Update(10, 20, -1); err == nil {
		t.Error("used above capacity accepted")
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"a*c", "abbc", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"FSDatasetState*", "FSDatasetState-x", true}, {"x", "xy", false},
	} {
		if got := glob(c.pat, c.s); got != c.want {
			t.Errorf("glob(%q, %q) = %v", c.pat, c.s, got)
		}
	}
}

func TestWritePIDFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hadoop-hdfs-datanode.pid")
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	remove, err := WritePIDFile(path) // replaces a stale file
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("pid file holds %q", b)
	}
	remove()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("after remove: %v", err)
	}
	if _, err := WritePIDFile(filepath.Join(t.TempDir(), "no", "such", "dir.pid")); err == nil {
		t.Error("a pid file in a missing directory was written")
	}
}

// TestRunAnswersHAStatesAndCleansUp runs a NameNode as the sim command does:
// a state sent on the channel moves it, the PID file is there while it
// runs, and ending the context closes the daemon and removes the file.
func TestRunAnswersHAStatesAndCleansUp(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Role, cfg.HAState = hdfs.RoleNameNode, hdfs.HAStandby
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "nn.pid")
	ctx, cancel := context.WithCancel(context.Background())
	ha := make(chan hdfs.HAState)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, 4242, pidFile, ha) }()
	ha <- hdfs.HAActive // taken only once Run serves the channel, so after Open
	ha <- hdfs.HAActive // and handled once this second send is taken
	if got := s.State().HAState; got != hdfs.HAActive {
		t.Errorf("HA state after Run was sent active: %q", got)
	}
	if b, err := os.ReadFile(pidFile); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid file while running: %q, %v", b, err)
	}
	addr := s.HTTPAddr()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file after Run returned: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Run returned", addr)
	}
}

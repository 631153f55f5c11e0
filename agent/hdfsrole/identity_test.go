package hdfsrole

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/sim"
)

// TestNameNodeIdentityFromConf: a NameNode's collect carries the
// nameservice and NameNode ID its own /conf gives, read once; the role
// registers them as metadata. /conf is asked again after a failure to
// answer, and not after an answer without HA keys or a 403/404, which is
// logged at debug level once.
func TestNameNodeIdentityFromConf(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Role, cfg.Hostname, cfg.HAState = hdfs.RoleNameNode, "nn-b.example.net", hdfs.HAActive
	s := openSim(t, cfg)
	_, port, _ := net.SplitHostPort(s.PortAddr())
	if err := s.SetHA(sim.HA{Nameservice: "prod", NameNodes: []sim.HANameNode{
		{ID: "namenode7", RPCAddr: "nn-a.example.net:8020"}, {ID: "namenode9", RPCAddr: "nn-b.example.net:" + port}}}); err != nil {
		t.Fatal(err)
	}
	// A proxy in front of the simulator counts the /conf requests and
	// answers 503 to the first, as a NameNode that is starting might.
	target, _ := url.Parse("http://" + s.HTTPAddr())
	var confs atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/conf" && confs.Add(1) == 1 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	defer front.Close()
	d, err := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleNameNode, JMXURL: front.URL, PortAddr: s.PortAddr()})
	if err != nil {
		t.Fatal(err)
	}
	role, err := New(Config{Role: hdfs.RoleNameNode}, d)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", "namenode9", "namenode9"} {
		f, err := role.Collect(ctx1s(t))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := hdfs.ReadNodeInfo(f.Metadata)
		if info.NameNodeID != want || (want != "" && info.Nameservice != "prod") {
			t.Errorf("collect %d: nameservice %q, NameNode ID %q; want prod, %q", i+1, info.Nameservice, info.NameNodeID, want)
		}
	}
	if n := confs.Load(); n != 2 {
		t.Errorf("/conf asked %d times over three collects, want 2: again after the 503, then never", n)
	}

	// A change of HA identity is material: the registry hears of it at once.
	old := role.figures(hdfs.NodeInfo{Version: "3.3.6"})
	now := role.figures(hdfs.NodeInfo{Version: "3.3.6", Nameservice: "prod", NameNodeID: "namenode9"})
	if !role.Material(old, now) {
		t.Error("learning the NameNode ID is not material")
	}
}

// TestNameNodeWithoutHAIdentity: a /conf that is refused, or that has no
// HA keys naming this NameNode, leaves the ID empty, says so at debug
// level once, and is not asked again.
func TestNameNodeWithoutHAIdentity(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Role, cfg.HAState = hdfs.RoleNameNode, hdfs.HAActive
	plain := openSim(t, cfg) // /conf without HA keys
	target, _ := url.Parse("http://" + plain.HTTPAddr())
	for _, c := range []struct {
		name   string
		status int // of /conf; 0 passes it to the simulator
	}{{"forbidden", http.StatusForbidden}, {"not found", http.StatusNotFound}, {"no HA keys", 0}} {
		var confs atomic.Int32
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/conf" {
				confs.Add(1)
				if c.status != 0 {
					http.Error(w, "no", c.status)
					return
				}
			}
			httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
		}))
		var logs proctest.Buffer
		d, err := NewJMXDaemon(DaemonConfig{Role: hdfs.RoleNameNode, JMXURL: front.URL, PortAddr: plain.PortAddr(),
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			info, err := d.Collect(ctx1s(t))
			if err != nil || info.NameNodeID != "" || info.Nameservice != "" || info.Version != "3.3.6" {
				t.Errorf("%s: collected %+v, %v; want figures without HA identity", c.name, info, err)
			}
		}
		if n, lines := confs.Load(), strings.Count(logs.String(), "no HA identity"); n != 1 || lines != 1 ||
			!strings.Contains(logs.String(), "level=DEBUG") {
			t.Errorf("%s: /conf asked %d times, logged %d times; want once each, at debug:\n%s", c.name, n, lines, logs.String())
		}
		front.Close()
	}
}

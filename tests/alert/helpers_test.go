package alert

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server"
)

func TestMain(m *testing.M) { proctest.Main(m) }

// testServer is the real server wiring (package server) on a free
// loopback port.
type testServer struct {
	Addr string // 127.0.0.1:PORT
	API  *httpapi.Server
	c    *client.Client
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := server.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	srv := server.New(cfg, logger)
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr().String()
	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Rounds, ccfg.Logger = []string{"http://" + addr + "/eureka"}, 1, slog.New(slog.DiscardHandler)
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	return &testServer{Addr: addr, API: srv.API, c: c}
}

func (ts *testServer) register(t *testing.T, in *heureka.Instance) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.c.Register(ctx, in); err != nil {
		t.Fatal(err)
	}
}

// setStatus re-registers in with status st, as its agent would.
func (ts *testServer) setStatus(t *testing.T, in *heureka.Instance, st heureka.Status) {
	t.Helper()
	c := in.Clone()
	c.Status = st
	ts.register(t, c)
}

func dataNode(host, rack string, lease int) *heureka.Instance {
	const total = 4 << 40
	return &heureka.Instance{
		ID:       hdfs.InstanceID("prod", host, rack),
		App:      hdfs.AppName(hdfs.RoleDataNode, "prod"),
		HostName: host,
		IPAddr:   "10.0.0.1",
		Status:   heureka.StatusUp,
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 1, DurationSecs: lease},
		Metadata: hdfs.NodeInfo{Rack: rack, DiskUsed: total / 2, DiskTotal: total, BlockCount: 1000, Version: "3.3.6"}.WriteMetadata(heureka.Metadata{}),
	}
}

// startForwarder runs `heureka alert` with args and waits until it follows
// ts's event stream.
func startForwarder(t *testing.T, ts *testServer, args ...string) *proctest.Proc {
	t.Helper()
	before := ts.API.Watchers()
	p := proctest.Start(t, "heureka alert", append([]string{"alert", "--status-interval", "100ms", "--log-level", "debug"}, args...)...)
	proctest.Eventually(t, 15*time.Second, "heureka alert to follow the event stream", func() bool { return ts.API.Watchers() > before })
	return p
}

// hookAlert is an alert as `heureka alert --webhook` posts it.
type hookAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
}

// hookReceiver records what `heureka alert --webhook` posts.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	alerts []hookAlert
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var batch []hookAlert
		if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
			t.Errorf("webhook: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.alerts = append(h.alerts, batch...)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, a := range h.alerts {
		out = append(out, a.Status+" "+a.Labels["alertname"]+" "+a.Labels["instance"])
	}
	return out
}

// expect waits until the webhook has got exactly want, in order.
func (h *hookReceiver) expect(t *testing.T, want ...string) {
	t.Helper()
	proctest.Eventually(t, 15*time.Second, "webhook alerts:\n  "+strings.Join(want, "\n  "), func() bool { return len(h.lines()) >= len(want) })
	time.Sleep(300 * time.Millisecond) // a duplicate would arrive now
	if got := h.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("webhook got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// countLines counts the lines of s that contain every one of words.
func countLines(s string, words ...string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		all := true
		for _, w := range words {
			all = all && strings.Contains(sc.Text(), w)
		}
		if all {
			n++
		}
	}
	return n
}

// resourceManager is a YARN ResourceManager of cluster prod in HA state
// state, as its agent registers it.
func resourceManager(host, state string) *heureka.Instance {
	return &heureka.Instance{
		ID:       heureka.InstanceID("prod", host, "/r1"),
		App:      heureka.RoleApp("yarn-resourcemanager", "prod"),
		HostName: host,
		IPAddr:   "10.0.0.2",
		Status:   heureka.StatusUp,
		Port:     heureka.Port{Number: 8032, Enabled: true},
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 1, DurationSecs: 300},
		Metadata: heureka.NewMetadata(heureka.MetaRack, "/r1", heureka.MetaRoleState, state, heureka.MetaVersion, "3.3.6"),
	}
}

// withState is in registered again in role state state.
func withState(in *heureka.Instance, state string) *heureka.Instance {
	c := in.Clone()
	c.Metadata = c.Metadata.With(heureka.MetaRoleState, state)
	return c
}

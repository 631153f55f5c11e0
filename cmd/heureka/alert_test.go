package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/alert"
	"github.com/heureka-project/heureka/ctl"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/server/servertest"
)

// hookReceiver is a webhook endpoint that records what it gets.
type hookReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	alerts  []alert.WebhookAlert
	posts   int
	fail    bool // answer 503
	refused int  // posts answered 503
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.fail {
			h.refused++
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		var batch []alert.WebhookAlert
		if err := json.NewDecoder(r.Body).Decode(&batch); err != nil || r.Method != http.MethodPost ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook got %s %q: %v", r.Method, r.Header.Get("Content-Type"), err)
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		h.posts++
		h.alerts = append(h.alerts, batch...)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) got() []alert.WebhookAlert {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]alert.WebhookAlert(nil), h.alerts...)
}

func (h *hookReceiver) refusals() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refused
}

func (h *hookReceiver) setFail(fail bool) {
	h.mu.Lock()
	h.fail = fail
	h.mu.Unlock()
}

// summary renders alerts as "status alertname instance" lines.
func summary(as []alert.WebhookAlert) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Status+" "+a.Labels["alertname"]+" "+a.Labels["instance"])
	}
	return out
}

func (h *hookReceiver) waitFor(t *testing.T, want ...string) {
	t.Helper()
	h.waitForNamed(t, "", want...)
}

// waitForNamed is waitFor for the alerts named name ("" for all).
func (h *hookReceiver) waitForNamed(t *testing.T, name string, want ...string) {
	t.Helper()
	named := func() []alert.WebhookAlert {
		var out []alert.WebhookAlert
		for _, a := range h.got() {
			if name == "" || a.Labels["alertname"] == name {
				out = append(out, a)
			}
		}
		return out
	}
	proctest.Eventually(t, 10*time.Second, "webhook alerts "+strings.Join(want, "; "), func() bool {
		return len(named()) >= len(want)
	})
	time.Sleep(150 * time.Millisecond) // anything extra would show now
	if got := summary(named()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("webhook got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

type runningForwarder struct {
	f      *alert.Forwarder
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned, with err
	err    error
}

func (r *runningForwarder) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("forwarder: %v", r.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("forwarder did not stop")
	}
}

// startForwarder runs an alert forwarder against registry with edit
// applied to its config, and waits until it follows the event stream.
func startForwarder(t *testing.T, s *server.Server, registry string, edit func(*alert.Config)) *runningForwarder {
	t.Helper()
	rc := ctl.DefaultConfig()
	rc.URLs, rc.Timeout = []string{registry}, 5*time.Second
	cfg := alert.DefaultConfig()
	cfg.Registry, cfg.Timeout = rc.ClientConfig(), rc.Timeout
	cfg.StatusInterval = 50 * time.Millisecond
	edit(&cfg)
	f, err := alert.New(cfg, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	before := s.API.Watchers()
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningForwarder{f: f, cancel: cancel, done: make(chan struct{})}
	go func() { r.err = f.Run(ctx); close(r.done) }()
	t.Cleanup(func() { cancel(); <-r.done })
	proctest.Eventually(t, 10*time.Second, "the forwarder to follow the event stream", func() bool { return s.API.Watchers() > before })
	return r
}

func TestAlertWebhookLifecycle(t *testing.T) {
	s := servertest.Open(t, nil)
	hook := newHookReceiver(t)
	dn1 := testDataNode("dn1.example.com", "/dc1/rack-a", 40, 100, 300)
	dn2 := testDataNode("dn2.example.com", "/dc1/rack-b", 40, 100, 300)
	nn := testDataNode("nn1.example.com", "/dc1/rack-a", 10, 100, 300)
	nn.App, nn.ID = "HDFS-NAMENODE.PROD", "prod-nn1"
	// Already DOWN before the forwarder starts: found when it reads the registry.
	nn.Status = heureka.StatusDown
	for _, in := range []*heureka.Instance{dn1, dn2, nn} {
		servertest.Register(t, s, in)
	}
	startForwarder(t, s, servertest.URL(s), func(c *alert.Config) { c.Webhook = hook.URL })
	hook.waitFor(t, "firing HeurekaInstanceDown prod-nn1")
	if a := hook.got()[0]; a.Labels["severity"] != "critical" || a.Labels["app"] != "HDFS-NAMENODE.PROD" ||
		a.StartsAt.IsZero() || !a.EndsAt.IsZero() || a.Annotations["summary"] != "NameNode prod-nn1 is DOWN" {
		t.Errorf("NameNode alert: %+v", a)
	}

	// A DataNode reports DOWN, then UP again: one firing, one resolved.
	down := dn1.Clone()
	down.Status = heureka.StatusDown
	servertest.Register(t, s, down)
	servertest.Register(t, s, down) // the same status again changes nothing
	servertest.Register(t, s, dn1)
	hook.waitFor(t, "firing HeurekaInstanceDown prod-nn1",
		"firing HeurekaInstanceDown "+dn1.ID, "resolved HeurekaInstanceDown "+dn1.ID)
	got := hook.got()
	fired, resolved := got[1], got[2]
	if fired.Labels["severity"] != "warning" || fired.Labels["app"] != dn1.App || !strings.Contains(fired.Annotations["description"], "set by instance") {
		t.Errorf("DataNode alert: %+v", fired)
	}
	if !resolved.StartsAt.Equal(fired.StartsAt) || !resolved.EndsAt.After(resolved.StartsAt) {
		t.Errorf("resolved alert: startsAt %v endsAt %v, fired at %v", resolved.StartsAt, resolved.EndsAt, fired.StartsAt)
	}

	// An operator's OUT_OF_SERVICE resolves a DOWN; deregistering too.
	code, _, _ := runCLI(t, "status", "set", "prod-nn1", "OUT_OF_SERVICE", "--registry", servertest.URL(s))
	if code != 0 {
		t.Fatalf("status set: exit %d", code)
	}
	hook.waitFor(t, "firing HeurekaInstanceDown prod-nn1",
		"firing HeurekaInstanceDown "+dn1.ID, "resolved HeurekaInstanceDown "+dn1.ID,
		"resolved HeurekaInstanceDown prod-nn1")
	servertest.Register(t, s, down)
	if code, _, _ := runCLI(t, "deregister", dn1.ID, "--registry", servertest.URL(s)); code != 0 {
		t.Fatalf("deregister: exit %d", code)
	}
	hook.waitFor(t, "firing HeurekaInstanceDown prod-nn1",
		"firing HeurekaInstanceDown "+dn1.ID, "resolved HeurekaInstanceDown "+dn1.ID,
		"resolved HeurekaInstanceDown prod-nn1",
		"firing HeurekaInstanceDown "+dn1.ID, "resolved HeurekaInstanceDown "+dn1.ID)
}

func TestAlertExpiredAndBack(t *testing.T) {
	s := servertest.Open(t, nil)
	hook := newHookReceiver(t)
	for _, h := range []string{"dn1", "dn2", "dn3"} {
		servertest.Register(t, s, testDataNode(h+".example.com", "/dc1/rack-"+h, 40, 100, 300))
	}
	startForwarder(t, s, servertest.URL(s), func(c *alert.Config) { c.Webhook = hook.URL })
	// dn9 stops renewing: its one-second lease runs out.
	dn9 := testDataNode("dn9.example.com", "/dc1/rack-b", 40, 100, 1)
	servertest.Register(t, s, dn9)
	hook.waitFor(t, "firing HeurekaInstanceExpired "+dn9.ID)
	if d := hook.got()[0].Annotations["description"]; !strings.Contains(d, "Lease expired (no renewal") {
		t.Errorf("expired description: %q", d)
	}
	// Its agent comes back and registers again.
	dn9.Lease.DurationSecs = 300
	servertest.Register(t, s, dn9)
	hook.waitFor(t, "firing HeurekaInstanceExpired "+dn9.ID, "resolved HeurekaInstanceExpired "+dn9.ID)
}

func TestAlertSelfPreservation(t *testing.T) {
	s := servertest.Open(t, nil) // smart mode: a mass loss across racks and apps
	hook := newHookReceiver(t)
	var short []*heureka.Instance
	for i, rack := range []string{"/r1", "/r2", "/r3", "/r1", "/r2", "/r3"} {
		in := testDataNode("dn"+string(rune('a'+i))+".example.com", rack, 40, 100, 1)
		if i%2 == 1 {
			in.App = "HDFS-DATANODE.OTHER"
		}
		short = append(short, in)
		servertest.Register(t, s, in)
	}
	startForwarder(t, s, servertest.URL(s), func(c *alert.Config) { c.Webhook = hook.URL })
	host := s.Addr().String()
	// The first lease to run out may be evicted alone before the others
	// run out (a loss of one is not protected); only the mass loss counts.
	hook.waitForNamed(t, alert.SelfPreservation, "firing HeurekaSelfPreservation "+host)
	var a alert.WebhookAlert
	for _, x := range hook.got() {
		if x.Labels["alertname"] == alert.SelfPreservation {
			a = x
		}
	}
	if a.Labels["severity"] != "critical" || !strings.Contains(a.Annotations["description"], "stopped renewing at once") {
		t.Errorf("self-preservation alert: %+v", a)
	}
	for _, in := range short { // they all come back
		in.Lease.DurationSecs = 300
		servertest.Register(t, s, in)
	}
	hook.waitForNamed(t, alert.SelfPreservation, "firing HeurekaSelfPreservation "+host, "resolved HeurekaSelfPreservation "+host)
}

// TestAlertResumesAfterDisconnect cuts the event stream while changes
// happen; the forwarder resumes from its last event and sends each change
// once. Deliveries that fail are retried.
func TestAlertResumesAfterDisconnect(t *testing.T) {
	s := servertest.Open(t, nil)
	hook := newHookReceiver(t)
	proxy := proctest.NewCutProxy(t, s.Addr().String())
	dns := []*heureka.Instance{}
	for _, h := range []string{"dn1", "dn2", "dn3", "dn4"} {
		in := testDataNode(h+".example.com", "/dc1/rack-a", 40, 100, 300)
		dns = append(dns, in)
		servertest.Register(t, s, in)
	}
	setStatus := func(in *heureka.Instance, st heureka.Status) {
		c := in.Clone()
		c.Status = st
		servertest.Register(t, s, c)
	}
	r := startForwarder(t, s, "http://"+proxy.Addr()+"/eureka", func(c *alert.Config) { c.Webhook = hook.URL })
	setStatus(dns[0], heureka.StatusDown)
	hook.waitFor(t, "firing HeurekaInstanceDown "+dns[0].ID)

	// The connection drops; meanwhile dn1 recovers and dn2 fails.
	watchers := s.API.Watchers()
	if proxy.Cut() == 0 {
		t.Fatal("nothing to cut")
	}
	proctest.Eventually(t, 5*time.Second, "the server to notice", func() bool { return s.API.Watchers() < watchers })
	setStatus(dns[0], heureka.StatusUp)
	setStatus(dns[1], heureka.StatusDown)
	hook.waitFor(t, "firing HeurekaInstanceDown "+dns[0].ID,
		"resolved HeurekaInstanceDown "+dns[0].ID, "firing HeurekaInstanceDown "+dns[1].ID)

	// The webhook fails for a while: the change waits and goes out once.
	hook.setFail(true)
	setStatus(dns[2], heureka.StatusDown)
	proctest.Eventually(t, 10*time.Second, "the webhook to refuse a delivery and be retried", func() bool { return hook.refusals() >= 2 })
	proxy.Cut()
	hook.setFail(false)
	hook.waitFor(t, "firing HeurekaInstanceDown "+dns[0].ID,
		"resolved HeurekaInstanceDown "+dns[0].ID, "firing HeurekaInstanceDown "+dns[1].ID,
		"firing HeurekaInstanceDown "+dns[2].ID)
	r.stop(t)
}

// TestAlertStateFile stops the forwarder, changes things, and starts a new
// one on the same state file: it reports exactly what changed meanwhile.
func TestAlertStateFile(t *testing.T) {
	s := servertest.Open(t, nil)
	hook := newHookReceiver(t)
	state := filepath.Join(t.TempDir(), "alert-state.json")
	a := testDataNode("dn1.example.com", "/dc1/rack-a", 40, 100, 300)
	b := testDataNode("dn2.example.com", "/dc1/rack-a", 40, 100, 300)
	servertest.Register(t, s, a)
	servertest.Register(t, s, b)
	edit := func(c *alert.Config) { c.Webhook, c.StateFile = hook.URL, state }
	r := startForwarder(t, s, servertest.URL(s), edit)
	downA := a.Clone()
	downA.Status = heureka.StatusDown
	servertest.Register(t, s, downA)
	hook.waitFor(t, "firing HeurekaInstanceDown "+a.ID)
	r.stop(t)

	servertest.Register(t, s, a) // a is back
	downB := b.Clone()
	downB.Status = heureka.StatusDown
	servertest.Register(t, s, downB) // b fails
	startForwarder(t, s, servertest.URL(s), edit)
	hook.waitFor(t, "firing HeurekaInstanceDown "+a.ID,
		"resolved HeurekaInstanceDown "+a.ID, "firing HeurekaInstanceDown "+b.ID)
}

func TestAlertCommandLine(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"alert"}, 2, "--alertmanager"},
		{[]string{"alert", "--alertmanager", "ftp://x"}, 2, "not an http(s) URL"},
		{[]string{"alert", "--webhook", "http://127.0.0.1:1/", "--resend", "0s"}, 2, "--resend"},
		{[]string{"alert", "-h"}, 0, "HeurekaSelfPreservation"},
		{[]string{"alert", "--webhook", "http://127.0.0.1:1/", "--registry", "http://127.0.0.1:1/eureka"}, 1, "cannot reach the registry"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("heureka %q: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.stderr)
		}
	}
}

// TestAlertAlertmanagerPayload checks the JSON Alertmanager gets: its v2
// schema, no status field, endsAt only when resolved.
func TestAlertAlertmanagerPayload(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	am := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v2/alerts" || r.Method != http.MethodPost {
			t.Errorf("alertmanager got %s %s", r.Method, r.URL.Path)
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	defer am.Close()
	s := servertest.Open(t, nil)
	in := testDataNode("dn1.example.com", "/dc1/rack-a", 40, 100, 300)
	in.Status = heureka.StatusDown
	servertest.Register(t, s, in)
	startForwarder(t, s, servertest.URL(s), func(c *alert.Config) { c.Alertmanager = am.URL + "/" })
	in.Status = heureka.StatusUp
	servertest.Register(t, s, in)
	proctest.Eventually(t, 10*time.Second, "two posts", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Count(strings.Join(bodies, ""), `"labels"`) >= 2
	})
	mu.Lock()
	all := strings.Join(bodies, "\n")
	mu.Unlock()
	var first []map[string]any
	if err := json.Unmarshal([]byte(bodies[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"labels", "annotations", "startsAt", "generatorURL"} {
		if _, ok := first[0][k]; !ok {
			t.Errorf("firing alert lacks %s: %s", k, bodies[0])
		}
	}
	if _, ok := first[0]["endsAt"]; ok {
		t.Errorf("firing alert has endsAt: %s", bodies[0])
	}
	if strings.Contains(all, `"status"`) {
		t.Errorf("Alertmanager got a status field: %s", all)
	}
	if !strings.Contains(all, `"endsAt"`) {
		t.Errorf("no resolved alert with endsAt: %s", all)
	}
}

package alert

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/proctest"
)

const alertmanagerPath = "/usr/bin/prometheus-alertmanager"

// alertmanager is a real Alertmanager on loopback. Its one receiver is a
// webhook in the test that records its notifications.
type alertmanager struct {
	URL  string
	proc *proctest.Proc

	mu            sync.Mutex
	notifications []amNotification
}

// amNotification is what Alertmanager's webhook receiver sends.
type amNotification struct {
	Status string `json:"status"`
	Alerts []struct {
		Status string            `json:"status"`
		Labels map[string]string `json:"labels"`
	} `json:"alerts"`
}

// amAlert is an alert as GET /api/v2/alerts returns it.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

func startAlertmanager(t *testing.T) *alertmanager {
	t.Helper()
	if _, err := os.Stat(alertmanagerPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing and CI=true: the Alertmanager tests must run in CI (apt-get install -y prometheus-alertmanager): %v", alertmanagerPath, err)
		}
		t.Skipf("skipping: %s is not installed (apt-get install -y prometheus-alertmanager); CI=true makes this a failure", alertmanagerPath)
	}
	am := &alertmanager{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n amNotification
		if err := json.NewDecoder(r.Body).Decode(&n); err == nil {
			am.mu.Lock()
			am.notifications = append(am.notifications, n)
			am.mu.Unlock()
		}
	}))
	t.Cleanup(receiver.Close)

	dir := t.TempDir()
	config := fmt.Sprintf(`route:
  receiver: test
  group_by: ['alertname', 'instance']
  group_wait: 100ms
  group_interval: 500ms
  repeat_interval: 1h
receivers:
  - name: test
    webhook_configs:
      - url: %s
        send_resolved: true
`, receiver.URL)
	cfgFile := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfgFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := proctest.FreeAddr(t, "127.0.0.1")
	am.URL = "http://" + addr
	am.proc = proctest.StartCmd(t, "alertmanager", exec.Command(alertmanagerPath,
		"--config.file="+cfgFile,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=",
		"--log.level=warn"))
	proctest.Eventually(t, 30*time.Second, "Alertmanager to be ready", func() bool {
		select {
		case <-am.proc.Done():
			t.Fatalf("alertmanager exited:\n%s", am.proc.Output())
		default:
		}
		resp, err := http.Get(am.URL + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return am
}

// alerts returns Alertmanager's current (unresolved) alerts named name.
func (am *alertmanager) alerts(t *testing.T, name string) []amAlert {
	t.Helper()
	q := url.Values{"filter": {fmt.Sprintf("alertname=%q", name)}}
	resp, err := http.Get(am.URL + "/api/v2/alerts?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []amAlert
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("GET /api/v2/alerts: %v", err)
	}
	return out
}

// firing reports whether Alertmanager holds an active alert name for
// instance, and returns it.
func (am *alertmanager) firing(t *testing.T, name, instance string) (amAlert, bool) {
	for _, a := range am.alerts(t, name) {
		if a.Labels["instance"] == instance && (a.Status.State == "active" || a.Status.State == "unprocessed") {
			return a, true
		}
	}
	return amAlert{}, false
}

// notified reports whether Alertmanager notified its receiver of an alert
// name for instance with status ("firing" or "resolved").
func (am *alertmanager) notified(name, instance, status string) bool {
	am.mu.Lock()
	defer am.mu.Unlock()
	for _, n := range am.notifications {
		for _, a := range n.Alerts {
			if a.Status == status && a.Labels["alertname"] == name && a.Labels["instance"] == instance {
				return true
			}
		}
	}
	return false
}

// TestAlertmanagerFiringAndResolved drives a real Alertmanager through
// heureka alert: a DataNode goes DOWN (firing), comes back (resolved), the
// forwarder's connection drops while another node goes DOWN (firing, sent
// once), a node's lease expires (firing) and it registers again (resolved).
func TestAlertmanagerFiringAndResolved(t *testing.T) {
	am := startAlertmanager(t)
	ts := startServer(t)
	proxy := proctest.NewCutProxy(t, ts.Addr)
	hook := newHookReceiver(t)
	dn1 := dataNode("dn1.example.com", "/dc1/rack-a", 300)
	dn2 := dataNode("dn2.example.com", "/dc1/rack-b", 300)
	dn3 := dataNode("dn3.example.com", "/dc1/rack-c", 300)
	for _, in := range []*heureka.Instance{dn1, dn2, dn3} {
		ts.register(t, in)
	}
	fwd := startForwarder(t, ts, "--alertmanager", am.URL, "--webhook", hook.URL, "--registry", "http://"+proxy.Addr()+"/eureka")

	// DOWN: firing in Alertmanager, with the labels routing needs.
	ts.setStatus(t, dn1, heureka.StatusDown)
	var fired amAlert
	proctest.Eventually(t, 15*time.Second, "HeurekaInstanceDown for dn1 in Alertmanager", func() bool {
		var ok bool
		fired, ok = am.firing(t, "HeurekaInstanceDown", dn1.ID)
		return ok
	})
	if fired.Labels["app"] != "HDFS-DATANODE.PROD" || fired.Labels["severity"] != "warning" ||
		fired.Annotations["summary"] != "DataNode "+dn1.ID+" is DOWN" || fired.Annotations["description"] == "" {
		t.Errorf("alert in Alertmanager: %+v", fired)
	}
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify firing", func() bool { return am.notified("HeurekaInstanceDown", dn1.ID, "firing") })

	// Back UP: resolved.
	ts.setStatus(t, dn1, heureka.StatusUp)
	proctest.Eventually(t, 15*time.Second, "dn1's alert to resolve in Alertmanager", func() bool {
		_, ok := am.firing(t, "HeurekaInstanceDown", dn1.ID)
		return !ok
	})
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify resolved", func() bool { return am.notified("HeurekaInstanceDown", dn1.ID, "resolved") })

	// The stream drops; dn2 fails meanwhile; the forwarder resumes from
	// its last event and sends dn2 once, and dn1 not again.
	proxy.Cut()
	ts.setStatus(t, dn2, heureka.StatusDown)
	proctest.Eventually(t, 15*time.Second, "HeurekaInstanceDown for dn2 in Alertmanager", func() bool {
		_, ok := am.firing(t, "HeurekaInstanceDown", dn2.ID)
		return ok
	})
	hook.expect(t,
		"firing HeurekaInstanceDown "+dn1.ID,
		"resolved HeurekaInstanceDown "+dn1.ID,
		"firing HeurekaInstanceDown "+dn2.ID)
	if n := countLines(fwd.Output(), "alert firing", dn2.ID); n != 1 {
		t.Errorf("dn2 fired %d times in the forwarder's log, want 1", n)
	}
	if !strings.Contains(fwd.Output(), "reconnecting") {
		t.Errorf("the forwarder's log does not show the reconnection:\n%s", fwd.Output())
	}

	// dn4 stops renewing: its lease expires.
	dn4 := dataNode("dn4.example.com", "/dc1/rack-a", 1)
	ts.register(t, dn4)
	var expired amAlert
	proctest.Eventually(t, 15*time.Second, "HeurekaInstanceExpired for dn4 in Alertmanager", func() bool {
		var ok bool
		expired, ok = am.firing(t, "HeurekaInstanceExpired", dn4.ID)
		return ok
	})
	if !strings.Contains(expired.Annotations["description"], "Lease expired") {
		t.Errorf("expired alert: %+v", expired)
	}
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify dn4 firing", func() bool {
		return am.notified("HeurekaInstanceExpired", dn4.ID, "firing")
	})
	dn4.Lease.DurationSecs = 300
	ts.register(t, dn4)
	proctest.Eventually(t, 15*time.Second, "dn4's expiry alert to resolve", func() bool {
		_, ok := am.firing(t, "HeurekaInstanceExpired", dn4.ID)
		return !ok
	})
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify dn4 resolved", func() bool {
		return am.notified("HeurekaInstanceExpired", dn4.ID, "resolved")
	})
}

// TestAlertmanagerSelfPreservation: a mass loss across racks and apps makes
// the registry protect expired leases; the alert fires in Alertmanager and
// resolves when the nodes are back.
func TestAlertmanagerSelfPreservation(t *testing.T) {
	am := startAlertmanager(t)
	ts := startServer(t)
	startForwarder(t, ts, "--alertmanager", am.URL, "--registry", "http://"+ts.Addr+"/eureka")
	var nodes []*heureka.Instance
	for i, rack := range []string{"/r1", "/r2", "/r3", "/r1", "/r2", "/r3"} {
		in := dataNode(fmt.Sprintf("dn%d.example.com", i), rack, 1)
		if i%2 == 1 {
			in.App = "hdfs-datanode.other"
		}
		nodes = append(nodes, in)
		ts.register(t, in)
	}
	var sp amAlert
	proctest.Eventually(t, 20*time.Second, "HeurekaSelfPreservation in Alertmanager", func() bool {
		var ok bool
		sp, ok = am.firing(t, "HeurekaSelfPreservation", ts.Addr)
		return ok
	})
	if sp.Labels["severity"] != "critical" || !strings.Contains(sp.Annotations["description"], "stopped renewing") {
		t.Errorf("self-preservation alert: %+v", sp)
	}
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify firing", func() bool {
		return am.notified("HeurekaSelfPreservation", ts.Addr, "firing")
	})
	for _, in := range nodes {
		in.Lease.DurationSecs = 300
		ts.register(t, in)
	}
	proctest.Eventually(t, 20*time.Second, "the self-preservation alert to resolve", func() bool {
		_, ok := am.firing(t, "HeurekaSelfPreservation", ts.Addr)
		return !ok
	})
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify resolved", func() bool {
		return am.notified("HeurekaSelfPreservation", ts.Addr, "resolved")
	})
}

// TestAlertmanagerNoActiveResourceManager: a YARN cluster whose active
// ResourceManager goes DOWN while the standby stays standby fires
// HeurekaNoActiveResourceManager in a real Alertmanager once the
// condition has held for --for, labelled with the cluster, and resolves
// when the standby takes over; a quick failover (the old active steps
// down, the standby takes over within the hold) sends nothing.
func TestAlertmanagerNoActiveResourceManager(t *testing.T) {
	const name, hold = "HeurekaNoActiveResourceManager", 2 * time.Second
	am := startAlertmanager(t)
	ts := startServer(t)
	hook := newHookReceiver(t)
	rm1, rm2 := resourceManager("rm1.example.com", "active"), resourceManager("rm2.example.com", "standby")
	ts.register(t, rm1)
	ts.register(t, rm2)
	startForwarder(t, ts, "--alertmanager", am.URL, "--webhook", hook.URL, "--registry", "http://"+ts.Addr+"/eureka",
		"--for", name+"="+hold.String())

	// A failover: for a moment neither is active; nothing is sent.
	ts.register(t, withState(rm1, "standby"))
	ts.register(t, withState(rm2, "active"))
	// rm2, now active, dies; rm1 stays standby.
	down := withState(rm2, "active")
	down.Status = heureka.StatusDown
	sent := time.Now()
	ts.register(t, down)
	proctest.Eventually(t, 15*time.Second, name+" in Alertmanager", func() bool {
		_, ok := am.firing(t, name, "")
		return ok
	})
	if waited := time.Since(sent); waited < hold {
		t.Errorf("%s fired %v after the registry answered the DOWN; --for holds it %v", name, waited, hold)
	}
	a, _ := am.firing(t, name, "")
	if a.Labels["cluster"] != "prod" || a.Labels["app"] != "YARN-RESOURCEMANAGER.PROD" || a.Labels["severity"] != "critical" ||
		a.Annotations["summary"] != "YARN cluster prod has no active ResourceManager" || !strings.Contains(a.Annotations["description"], "(standby)") {
		t.Errorf("alert in Alertmanager: %+v", a)
	}
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify firing", func() bool { return am.notified(name, "", "firing") })

	// rm1 takes over: resolved.
	ts.register(t, withState(rm1, "active"))
	proctest.Eventually(t, 15*time.Second, name+" to resolve in Alertmanager", func() bool {
		_, ok := am.firing(t, name, "")
		return !ok
	})
	proctest.Eventually(t, 15*time.Second, "Alertmanager to notify resolved", func() bool { return am.notified(name, "", "resolved") })
	hook.expect(t,
		"firing HeurekaInstanceDown "+rm2.ID,
		"firing "+name+" ",
		"resolved "+name+" ")
}

package alert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// TestWebhook runs heureka alert with only a webhook (an httptest
// receiver): every change arrives once, as JSON with a status field, and a
// forwarder restarted on its --state file reports what changed while it
// was away, without repeating what it had sent.
func TestWebhook(t *testing.T) {
	ts := startServer(t)
	hook := newHookReceiver(t)
	state := filepath.Join(t.TempDir(), "state.json")
	dn1 := dataNode("dn1.example.com", "/dc1/rack-a", 300)
	dn2 := dataNode("dn2.example.com", "/dc1/rack-b", 300)
	nn := dataNode("nn1.example.com", "/dc1/rack-a", 300)
	nn.App, nn.ID = "hdfs-namenode.prod", "prod-nn1"
	for _, in := range []*heureka.Instance{dn1, dn2, nn} {
		ts.register(t, in)
	}
	args := []string{"--webhook", hook.URL, "--registry", "http://" + ts.Addr + "/eureka", "--state", state}
	fwd := startForwarder(t, ts, args...)

	ts.setStatus(t, nn, heureka.StatusDown)
	ts.setStatus(t, dn1, heureka.StatusDown)
	ts.setStatus(t, dn1, heureka.StatusUp)
	hook.expect(t,
		"firing HeurekaInstanceDown prod-nn1",
		"firing HeurekaInstanceDown "+dn1.ID,
		"resolved HeurekaInstanceDown "+dn1.ID)
	hook.mu.Lock()
	first, resolved := hook.alerts[0], hook.alerts[2]
	hook.mu.Unlock()
	if first.Labels["severity"] != "critical" || first.Labels["app"] != "HDFS-NAMENODE.PROD" || first.StartsAt.IsZero() || !first.EndsAt.IsZero() {
		t.Errorf("NameNode alert: %+v", first)
	}
	if resolved.EndsAt.IsZero() || !resolved.EndsAt.After(resolved.StartsAt) {
		t.Errorf("resolved alert: %+v", resolved)
	}

	// Stop the forwarder; the NameNode recovers and dn2 fails meanwhile.
	fwd.Stop(10 * time.Second)
	if b, err := os.ReadFile(state); err != nil || !strings.Contains(string(b), `"lastSeq"`) {
		t.Fatalf("state file: %v %s", err, b)
	}
	ts.setStatus(t, nn, heureka.StatusUp)
	ts.setStatus(t, dn2, heureka.StatusDown)
	startForwarder(t, ts, args...)
	hook.expect(t,
		"firing HeurekaInstanceDown prod-nn1",
		"firing HeurekaInstanceDown "+dn1.ID,
		"resolved HeurekaInstanceDown "+dn1.ID,
		"resolved HeurekaInstanceDown prod-nn1",
		"firing HeurekaInstanceDown "+dn2.ID)
}

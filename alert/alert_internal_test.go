package alert

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/testclock"
)

// newTestForwarder builds a Forwarder that is never Run: events are fed to
// handle and the webhook queue is read directly. Nothing is dialled.
func newTestForwarder(t *testing.T, edit func(*Config)) (*Forwarder, *testclock.Clock) {
	t.Helper()
	clk := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	cfg := DefaultConfig()
	cfg.Registry.URLs = []string{"http://127.0.0.1:9/eureka"}
	cfg.Webhook = "http://127.0.0.1:9/hook"
	cfg.Clock = clk.Now
	if edit != nil {
		edit(&cfg)
	}
	f, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f, clk
}

var seq uint64

// feed hands f one /v1/events event, as the stream would.
func feed(t *testing.T, f *Forwarder, e heureka.Event) {
	t.Helper()
	seq++
	e.Seq = seq
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.handle(client.Event{Type: string(e.Type), ID: strconv.FormatUint(seq, 10), Data: b}); err != nil {
		t.Fatal(err)
	}
}

func statusEvent(clk *testclock.Clock, id string, st heureka.Status) heureka.Event {
	return heureka.Event{Type: heureka.EventStatusChanged, Time: clk.Now().UnixMilli(), App: "HDFS-DATANODE.PROD",
		ID: id, HostName: id + ".example.com", Status: st, By: heureka.ByInstance}
}

// sent lists what the webhook sink holds, as "status alertname instance".
func sent(f *Forwarder) []string {
	s := f.sinks[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, q := range s.queue {
		out = append(out, q.Status+" "+q.Labels["alertname"]+" "+q.Labels["instance"])
	}
	return out
}

func wantSent(t *testing.T, f *Forwarder, want ...string) {
	t.Helper()
	if got := sent(f); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sent %q, want %q", got, want)
	}
}

func TestWithoutForAnAlertFiresAtOnce(t *testing.T) {
	f, clk := newTestForwarder(t, nil)
	feed(t, f, statusEvent(clk, "dn1", heureka.StatusDown))
	wantSent(t, f, "firing HeurekaInstanceDown dn1")
	feed(t, f, statusEvent(clk, "dn1", heureka.StatusUp))
	wantSent(t, f, "firing HeurekaInstanceDown dn1", "resolved HeurekaInstanceDown dn1")
}

func TestForHoldsAnAlertUntilItsConditionHasLasted(t *testing.T) {
	f, clk := newTestForwarder(t, func(c *Config) { c.For = map[string]time.Duration{InstanceDown: 30 * time.Second} })
	feed(t, f, statusEvent(clk, "dn1", heureka.StatusDown))
	f.promotePending()
	wantSent(t, f)
	clk.Advance(29 * time.Second)
	f.promotePending()
	wantSent(t, f)
	clk.Advance(time.Second)
	f.promotePending()
	wantSent(t, f, "firing HeurekaInstanceDown dn1")
	// It started when the condition began, not when it was sent.
	if got := f.sinks[0].queue[0].StartsAt; !got.Equal(clk.Now().Add(-30 * time.Second).Truncate(time.Millisecond)) {
		t.Errorf("startsAt %v, want the time of the DOWN event", got)
	}
	feed(t, f, statusEvent(clk, "dn1", heureka.StatusUp))
	wantSent(t, f, "firing HeurekaInstanceDown dn1", "resolved HeurekaInstanceDown dn1")
}

func TestForDropsAConditionThatEndsSooner(t *testing.T) {
	f, clk := newTestForwarder(t, func(c *Config) { c.For = map[string]time.Duration{InstanceDown: 30 * time.Second} })
	feed(t, f, statusEvent(clk, "dn1", heureka.StatusDown))
	clk.Advance(10 * time.Second)
	feed(t, f, statusEvent(clk, "dn1", heureka.StatusUp))
	clk.Advance(time.Minute)
	f.promotePending()
	wantSent(t, f)
	if len(f.state.Pending) != 0 || len(f.state.Firing) != 0 {
		t.Fatalf("pending %v, firing %v after a flap; want neither", f.state.Pending, f.state.Firing)
	}
}

func TestForAppliesOnlyToTheAlertsNamed(t *testing.T) {
	f, clk := newTestForwarder(t, func(c *Config) { c.For = map[string]time.Duration{InstanceDown: time.Hour} })
	feed(t, f, heureka.Event{Type: heureka.EventExpired, Time: clk.Now().UnixMilli(), App: "HDFS-DATANODE.PROD", ID: "dn2"})
	wantSent(t, f, "firing HeurekaInstanceExpired dn2")
}

func TestPendingAlertsSurviveARestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	edit := func(c *Config) {
		c.For = map[string]time.Duration{InstanceDown: 30 * time.Second}
		c.StateFile = state
	}
	f, clk := newTestForwarder(t, edit)
	feed(t, f, statusEvent(clk, "dn1", heureka.StatusDown))

	g, clk2 := newTestForwarder(t, edit)
	clk2.Advance(30 * time.Second) // both clocks start at the same time
	g.promotePending()
	wantSent(t, g, "firing HeurekaInstanceDown dn1")
}

func TestConfigValidateFor(t *testing.T) {
	for _, c := range []struct {
		for_ map[string]time.Duration
		want string // in the error; "" for none
	}{
		{map[string]time.Duration{InstanceDown: time.Minute, SelfPreservation: 0}, ""},
		{map[string]time.Duration{"HeurekaNodeDown": time.Minute}, "no such alert"},
		{map[string]time.Duration{InstanceExpired: -time.Second}, "must not be negative"},
	} {
		cfg := DefaultConfig()
		cfg.Registry.URLs = []string{"http://127.0.0.1:9/eureka"}
		cfg.Webhook = "http://127.0.0.1:9/hook"
		cfg.For = c.for_
		err := cfg.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("For %v: error %v, want %q", c.for_, err, c.want)
		}
	}
}

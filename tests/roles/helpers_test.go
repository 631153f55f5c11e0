// Package roles_test runs the agent's roles other than HDFS's end to end:
// `heureka server` and `heureka agent` as real processes on loopback,
// beside real ZooKeeper servers (zookeeper/zktest), kfake brokers and
// simulated ResourceManagers, HBase servers and Elasticsearch nodes (sim,
// in the test's process), read back through the Go client and a watching
// cache. The binary is built once by TestMain (or taken from $HEUREKA_BIN).
package roles_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }

// server is a running `heureka server`.
type server struct {
	*proctest.Proc
	addr string
}

// URL is the Eureka base URL.
func (s *server) URL() string { return "http://" + s.addr + "/eureka" }

func startServer(t *testing.T) *server {
	t.Helper()
	p := proctest.Start(t, "server", "server", "--listen", "127.0.0.1:0")
	return &server{Proc: p, addr: p.WaitAddr(20 * time.Second)}
}

// startAgent runs `heureka agent --role role` registering host in cluster
// prod, with args.
func startAgent(t *testing.T, reg *server, role, host string, args ...string) *proctest.Proc {
	t.Helper()
	base := []string{"agent", "--role", role, "--cluster", "prod", "--registry", reg.URL(), "--host", host, "--ip", "127.0.0.1"}
	return proctest.Start(t, "agent "+host, append(base, args...)...)
}

// id is the instance ID of host in cluster prod on rack.
func id(host, rack string) string { return heureka.InstanceID("prod", host, rack) }

func newClient(t *testing.T, reg *server) *client.Client {
	t.Helper()
	// Generous timeouts: the machine may be busy, and a slow answer is
	// not what these tests are about.
	cfg := client.DefaultConfig()
	cfg.URLs, cfg.Logger = []string{reg.URL()}, slog.New(slog.DiscardHandler)
	cfg.ConnectTimeout, cfg.ReadTimeout, cfg.Rounds = 5*time.Second, 10*time.Second, 2
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// instance reads app/id; nil when it is not registered.
func instance(t *testing.T, c *client.Client, app, id string) *heureka.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, err := c.Instance(ctx, app, id)
	switch {
	case err == nil:
		return in
	case heureka.ErrorCode(err) == heureka.ENOTFOUND:
		return nil
	}
	t.Fatalf("reading %s/%s: %v", app, id, err)
	return nil
}

// describe says how an instance stands, for conditions and messages:
// "STATUS role_state=... down_cause=..." or "gone".
func describe(in *heureka.Instance) string {
	if in == nil {
		return "gone"
	}
	s := string(in.Status)
	for _, k := range []string{heureka.MetaRoleState, heureka.MetaDownCause, heureka.MetaProbeState} {
		if v := in.Metadata.Get(k); v != "" {
			s += " " + k + "=" + v
		}
	}
	return s
}

// await polls app/id until describe matches re, and returns it; it fails
// after bound, a timeout for a busy machine, not a speed.
func await(t *testing.T, c *client.Client, app, id, re string, bound time.Duration) *heureka.Instance {
	t.Helper()
	rx := regexp.MustCompile(re)
	var in *heureka.Instance
	proctest.Retry(t, bound, fmt.Sprintf("%s/%s to be %s", app, id, re), func() error {
		in = instance(t, c, app, id)
		if d := describe(in); !rx.MatchString(d) {
			return fmt.Errorf("it is %s", d)
		}
		return nil
	})
	return in
}

// watcher is a client.Cache's view of the registry, with every change it
// saw and when.
type watcher struct {
	cache   *client.Cache
	mu      sync.Mutex
	seen    []seen
	changed chan struct{} // closed and replaced on every change
}

type seen struct {
	at     time.Time
	change client.Change
}

func newWatcher(t *testing.T, reg *server, apps ...string) *watcher {
	t.Helper()
	cfg := client.DefaultConfig()
	cfg.URLs, cfg.Logger = []string{reg.URL()}, slog.New(slog.DiscardHandler)
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ccfg := client.DefaultCacheConfig()
	ccfg.Apps = apps
	cache, err := client.NewCache(c, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{cache: cache, changed: make(chan struct{})}
	cache.OnChange(func(_, _ *client.Snapshot, changes []client.Change) {
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, ch := range changes {
			w.seen = append(w.seen, seen{at: now, change: ch})
		}
		close(w.changed)
		w.changed = make(chan struct{})
	})
	if err := cache.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = cache.Close(ctx)
		_ = c.Close()
	})
	select {
	case <-cache.Synced():
	case <-time.After(20 * time.Second):
		t.Fatal("the watching cache never synced")
	}
	return w
}

// mark is where the changes seen from now on begin.
func (w *watcher) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

// states lists, by describe, the states id was seen in from mark on.
func (w *watcher) states(from int, id string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, s := range w.seen[from:] {
		if s.change.ID == id {
			out = append(out, describe(s.change.New))
		}
	}
	return out
}

// await returns the time of the first change from mark on to id whose
// describe matches re; it fails after bound.
func (w *watcher) await(t *testing.T, from int, id, re string, bound time.Duration) time.Time {
	t.Helper()
	rx := regexp.MustCompile(re)
	timeout := time.After(bound)
	for {
		w.mu.Lock()
		for _, s := range w.seen[from:] {
			if s.change.ID == id && rx.MatchString(describe(s.change.New)) {
				w.mu.Unlock()
				return s.at
			}
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("%s to be %s: not seen within %v (seen: %s)", id, re, bound, strings.Join(w.states(from, id), "; "))
		}
	}
}

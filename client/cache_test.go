package client_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry"
)

// pollingCache is fastCache that never tries to watch.
func pollingCache() client.CacheConfig {
	cfg := fastCache()
	cfg.DisableWatch = true
	return cfg
}

func TestPollingFollowsDeltas(t *testing.T) { synctest.Test(t, testPollingFollowsDeltas) }

func testPollingFollowsDeltas(t *testing.T) {
	srv := startMemServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	cache := startCache(t, memClient(t, srv), pollingCache())
	waitSynced(t, cache)
	if got := ids(cache, "orders"); got != "o1" {
		t.Fatalf("after the full fetch: %q", got)
	}

	srv.register(t, "ORDERS", "o2", heureka.StatusStarting)
	srv.register(t, "BILLING", "b1", heureka.StatusUp)
	afterPolls(t, "o2 and b1 to appear", func() bool {
		return ids(cache, "ORDERS") == "o1,o2" && ids(cache, "BILLING") == "b1"
	})
	if err := srv.registry().SetStatus("ORDERS", "o2", heureka.StatusUp, 0, false); err != nil {
		t.Fatal(err)
	}
	afterPolls(t, "o2 to be UP", func() bool {
		in, ok := cache.Instance("ORDERS", "o2")
		return ok && in.Status == heureka.StatusUp
	})
	srv.cancel(t, "ORDERS", "o1")
	afterPolls(t, "o1 to go", func() bool { return ids(cache, "ORDERS") == "o2" })
	srv.cancel(t, "BILLING", "b1")
	afterPolls(t, "BILLING to go", func() bool { return cache.Snapshot().App("BILLING") == nil })

	if n := srv.deltas.Load(); n < 3 {
		t.Errorf("%d delta fetches", n)
	}
	// Deltas reconciled every time: no full fetch after the first.
	if n := srv.fulls.Load(); n != 1 {
		t.Errorf("%d full fetches; want 1 (hash codes should have matched)", n)
	}
	st := cache.Status()[0]
	if st.Mode != client.ModePolling || st.Server != srv.URL || st.LastError != "" {
		t.Errorf("status %+v", st)
	}
}

func TestPollingRefetchesOnHashMismatch(t *testing.T) {
	synctest.Test(t, testPollingRefetchesOnHashMismatch)
}

func testPollingRefetchesOnHashMismatch(t *testing.T) {
	srv := startMemServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	cache := startCache(t, memClient(t, srv), pollingCache())
	waitSynced(t, cache)

	drop := "o3"
	srv.dropFromDelta.Store(&drop)
	srv.register(t, "ORDERS", "o2", heureka.StatusUp)
	srv.register(t, "ORDERS", "o3", heureka.StatusUp)
	afterPolls(t, "the full fetch to repair the view", func() bool { return ids(cache, "ORDERS") == "o1,o2,o3" })
	if srv.dropFromDelta.Load() != nil {
		t.Fatal("no delta was tampered with")
	}
	if n := srv.fulls.Load(); n != 2 {
		t.Errorf("%d full fetches; want 2 (start, then one for the mismatch)", n)
	}
}

func TestEmptyRegistryDoesNotWipeTheView(t *testing.T) {
	synctest.Test(t, testEmptyRegistryDoesNotWipeTheView)
}

func testEmptyRegistryDoesNotWipeTheView(t *testing.T) {
	srv := startMemServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	cache := startCache(t, memClient(t, srv), pollingCache())
	waitSynced(t, cache)

	srv.restartEmpty(t)
	fulls := srv.fulls.Load()
	afterPolls(t, "several full fetches of the empty registry", func() bool { return srv.fulls.Load() >= fulls+3 })
	if got := ids(cache, "ORDERS"); got != "o1" {
		t.Fatalf("the empty registry replaced the view: %q", got)
	}
	// Once instances register again, the registry's view wins.
	srv.register(t, "ORDERS", "o9", heureka.StatusUp)
	afterPolls(t, "the new registration to replace the old view", func() bool { return ids(cache, "ORDERS") == "o9" })
}

func TestAllowEmpty(t *testing.T) { synctest.Test(t, testAllowEmpty) }

func testAllowEmpty(t *testing.T) {
	srv := startMemServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	cfg := pollingCache()
	cfg.AllowEmpty = true
	cache := startCache(t, memClient(t, srv), cfg)
	waitSynced(t, cache)
	srv.restartEmpty(t)
	afterPolls(t, "the view to empty", func() bool { return cache.Snapshot().Len() == 0 })
}

func TestOutageServesLastViewAndCatchesUp(t *testing.T) {
	synctest.Test(t, testOutageServesLastViewAndCatchesUp)
}

func testOutageServesLastViewAndCatchesUp(t *testing.T) {
	a, b := startMemServer(t), startMemServer(t)
	// Two peers of one cluster; give both the same data.
	for _, s := range []*testServer{a, b} {
		s.register(t, "ORDERS", "o1", heureka.StatusUp)
	}
	cache := startCache(t, memClient(t, a, b), pollingCache())
	waitSynced(t, cache)

	a.mode.Store(serveDrop)
	b.mode.Store(serve503)
	afterPolls(t, "the cache to notice", func() bool { return cache.Status()[0].Failures >= 2 })
	// Through more failed rounds, the view stays what it was.
	afterPolls(t, "two more failed rounds", func() bool {
		if got := ids(cache, "ORDERS"); got != "o1" {
			t.Fatalf("during the outage the view is %q", got)
		}
		return cache.Status()[0].Failures >= 4
	})
	st := cache.Status()[0]
	if st.LastError == "" || !strings.Contains(st.LastError, "no registry answered") {
		t.Errorf("status during the outage: %+v", st)
	}

	// Changes made while unreachable are picked up when b returns.
	b.register(t, "ORDERS", "o2", heureka.StatusUp)
	b.cancel(t, "ORDERS", "o1")
	b.mode.Store(serveNormally)
	afterPolls(t, "the cache to catch up", func() bool { return ids(cache, "ORDERS") == "o2" })
	afterPolls(t, "the status to clear", func() bool { return cache.Status()[0].LastError == "" })
}

func TestCacheFile(t *testing.T) {
	srv := startServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	srv.register(t, "BILLING", "b1", heureka.StatusDown)
	file := filepath.Join(t.TempDir(), "registry.json")
	cfg := pollingCache()
	cfg.CacheFile = file

	first, err := client.NewCache(newClient(t, srv.URL), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, first)
	proctest.Eventually(t, 10*time.Second, "the cache file", func() bool {
		b, err := os.ReadFile(file)
		return err == nil && strings.Contains(string(b), `"b1"`) && strings.Contains(string(b), `"o1"`)
	})
	srv.register(t, "ORDERS", "o2", heureka.StatusUp)
	proctest.Eventually(t, 10*time.Second, "o2", func() bool { return ids(first, "ORDERS") == "o1,o2" })
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Close wrote the last view; no temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries", len(entries))
	}

	// A new cache whose registry is unreachable serves the file at once.
	second := startCache(t, newClient(t, deadURL(t)), cfg)
	if got := ids(second, "ORDERS"); got != "o1,o2" {
		t.Fatalf("before any fetch the view is %q", got)
	}
	if in, ok := second.Instance("BILLING", "b1"); !ok || in.Status != heureka.StatusDown || in.Metadata.Get("rack") != "/r1" {
		t.Errorf("b1 from the file: %+v", in)
	}
	select {
	case <-second.Synced():
		t.Error("Synced with no registry reachable")
	default:
	}
}

func TestCacheFileCorruptIsIgnored(t *testing.T) {
	srv := startServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	file := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := pollingCache()
	cfg.CacheFile = file
	cache := startCache(t, newClient(t, srv.URL), cfg)
	waitSynced(t, cache)
	if ids(cache, "ORDERS") != "o1" {
		t.Error("cache did not recover from a corrupt file")
	}
}

func TestAppsFilter(t *testing.T) { synctest.Test(t, testAppsFilter) }

func testAppsFilter(t *testing.T) {
	srv := startMemServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	srv.register(t, "BILLING", "b1", heureka.StatusUp)
	cfg := pollingCache()
	cfg.Apps = []string{"orders"}
	cache := startCache(t, memClient(t, srv), cfg)
	waitSynced(t, cache)
	srv.register(t, "BILLING", "b2", heureka.StatusUp)
	srv.register(t, "ORDERS", "o2", heureka.StatusUp)
	afterPolls(t, "o2", func() bool { return ids(cache, "ORDERS") == "o1,o2" })
	if apps := cache.Apps(); len(apps) != 1 {
		t.Errorf("view holds %d apps; want only ORDERS", len(apps))
	}
	// Only ORDERS is ever read: no listing of the registry, no delta
	// (whose hash code would cover BILLING too), nothing of BILLING.
	reqs := srv.requests()
	if srv.fulls.Load() != 0 || srv.deltas.Load() != 0 || reqs["GET /eureka/apps/BILLING"] != 0 || reqs["GET /eureka/apps/ORDERS"] < 2 {
		t.Errorf("requests %v (full fetches %d, deltas %d): want GET /eureka/apps/ORDERS polled and nothing else read",
			reqs, srv.fulls.Load(), srv.deltas.Load())
	}
}

func TestFilters(t *testing.T) {
	a := testInstance("DN", "a", heureka.StatusUp)
	b := testInstance("DN", "b", heureka.StatusDown)
	c := testInstance("DN", "c", heureka.StatusUp)
	c.Metadata = c.Metadata.With("version", "3.4.0")
	c.Metadata = c.Metadata.With("rack", "/r2")
	all := []*heureka.Instance{a, b, c}
	names := func(ins []*heureka.Instance) string {
		var s []string
		for _, in := range ins {
			s = append(s, in.ID)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		name    string
		filters []client.Filter
		want    string
	}{
		{"none", nil, "a,b,c"},
		{"up", []client.Filter{client.Up()}, "a,c"},
		{"status", []client.Filter{client.HasStatus(heureka.StatusDown, heureka.StatusOutOfService)}, "b"},
		{"metadata", []client.Filter{client.HasMetadata("rack", "/r1")}, "a,b"},
		{"version", []client.Filter{client.HasVersion("3.4.0")}, "c"},
		{"combined", []client.Filter{client.Up(), client.HasVersion("3.3.6")}, "a"},
		{"nothing", []client.Filter{client.HasMetadata("zone", "z1")}, ""},
	} {
		if got := names(client.Select(all, tc.filters...)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestChangeListeners replays every notification onto a replica: however
// notifications are merged, the replica must end equal to the view, and
// snapshots must arrive in order.
func TestChangeListeners(t *testing.T) {
	srv := startServer(t)
	cfg := pollingCache()
	cfg.MaxPendingChanges = 2
	cfg.PollInterval = 2 * time.Millisecond
	cache, err := client.NewCache(newClient(t, srv.URL), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	replica := map[string]*heureka.Instance{}
	var lastSeq uint64
	var calls, slow atomic.Int64
	release := make(chan struct{})
	cache.OnChange(func(old, new *client.Snapshot, changes []client.Change) {
		if slow.Add(1) == 1 {
			<-release // hold the first notification so that others queue up
		}
		mu.Lock()
		defer mu.Unlock()
		calls.Add(1)
		if old.Seq() != lastSeq || new.Seq() <= old.Seq() {
			t.Errorf("out of order: old %d new %d after %d", old.Seq(), new.Seq(), lastSeq)
		}
		lastSeq = new.Seq()
		for _, ch := range changes {
			key := ch.App + "/" + ch.ID
			switch ch.Action {
			case heureka.ActionAdded:
				if replica[key] != nil {
					t.Errorf("ADDED %s twice", key)
				}
				replica[key] = ch.New
			case heureka.ActionModified:
				if replica[key] != ch.Old {
					t.Errorf("MODIFIED %s from a state the listener never saw", key)
				}
				replica[key] = ch.New
			case heureka.ActionDeleted:
				if replica[key] == nil {
					t.Errorf("DELETED %s, which was not there", key)
				}
				delete(replica, key)
			}
		}
	})
	remove := cache.OnChange(func(_, _ *client.Snapshot, _ []client.Change) { panic("removed listener called") })
	remove()
	cache.OnChange(func(_, _ *client.Snapshot, _ []client.Change) { panic("a listener that panics is survivable") })
	if err := cache.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close(context.Background()) })

	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	proctest.Eventually(t, 10*time.Second, "the first notification", func() bool { return slow.Load() >= 1 })
	for i := range 30 {
		id := "o" + string(rune('a'+i%5))
		switch i % 3 {
		case 0:
			srv.register(t, "ORDERS", id, heureka.StatusUp)
		case 1:
			_ = srv.registry().SetStatus("ORDERS", id, heureka.StatusDown, 0, false)
		case 2:
			_ = srv.registry().Cancel(registry.CancelRequest{App: "ORDERS", ID: id})
		}
		// Each write is its own notification, so that more queue up
		// behind the held listener than MaxPendingChanges.
		proctest.Eventually(t, 10*time.Second, "the cache to follow write "+strconv.Itoa(i), func() bool { return srv.followedBy(cache, "ORDERS") })
	}
	close(release)
	want := srv.registry().Snapshot().Len()
	proctest.Eventually(t, 10*time.Second, "the replica to converge", func() bool {
		snap := cache.Snapshot()
		mu.Lock()
		defer mu.Unlock()
		if snap.Len() != want || len(replica) != want || lastSeq != snap.Seq() {
			return false
		}
		for _, in := range snap.Instances("ORDERS") {
			if replica["ORDERS/"+in.ID] != in {
				return false
			}
		}
		return true
	})
	if calls.Load() == 0 {
		t.Fatal("no notification delivered")
	}
}

// TestReadersDuringChanges runs readers against the cache while a writer
// churns the registry; -race checks that readers and the updater share
// nothing mutable, and every snapshot a reader sees is whole.
func TestReadersDuringChanges(t *testing.T) {
	srv := startServer(t)
	for i := range 10 {
		srv.register(t, "ORDERS", "base-"+string(rune('a'+i)), heureka.StatusUp)
	}
	cfg := pollingCache()
	cfg.PollInterval = time.Millisecond
	cache := startCache(t, newClient(t, srv.URL), cfg)
	waitSynced(t, cache)

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := cache.Snapshot()
				n := 0
				for _, a := range s.Apps() {
					for i, in := range a.Instances {
						if i > 0 && a.Instances[i-1].ID >= in.ID {
							t.Error("instances out of order")
						}
						_ = in.Metadata.Get("version")
						n++
					}
				}
				if n != s.Len() {
					t.Errorf("snapshot counts %d instances, holds %d", s.Len(), n)
				}
				if len(s.Instances("ORDERS")) < 10 {
					t.Error("a base instance vanished")
				}
				_ = client.Select(cache.Instances("ORDERS"), client.Up())
				reads.Add(1)
				runtime.Gosched() // leave the writer a CPU on small machines
			}
		}()
	}
	t0 := time.Now()
	for i := range 100 {
		id := "churn-" + string(rune('a'+i%7))
		if i%2 == 0 {
			srv.register(t, "ORDERS", id, heureka.StatusUp)
		} else {
			_ = srv.registry().Cancel(registry.CancelRequest{App: "ORDERS", ID: id})
		}
		// Readers see the cache change under them once per write.
		proctest.Eventually(t, 10*time.Second, "the cache to follow write "+strconv.Itoa(i), func() bool { return srv.followedBy(cache, "ORDERS") })
	}
	want := srv.registry().Snapshot().Len()
	proctest.Eventually(t, 10*time.Second, "the cache to converge", func() bool { return cache.Snapshot().Len() == want })
	t.Logf("%d reads while 100 writes were followed in %v", reads.Load(), time.Since(t0))
	close(stop)
	readers.Wait()
	if reads.Load() == 0 {
		t.Fatal("no reads")
	}
}

func TestCloseIsIdempotentAndKeepsTheView(t *testing.T) {
	srv := startServer(t)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	cache, err := client.NewCache(newClient(t, srv.URL), pollingCache())
	if err != nil {
		t.Fatal(err)
	}
	// Close before Start is fine, and Start after Close is refused.
	if err := cache.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(context.Background()); err == nil {
		t.Error("Start after Close succeeded")
	}

	cache = startCache(t, newClient(t, srv.URL), pollingCache())
	waitSynced(t, cache)
	if err := cache.Start(context.Background()); err == nil {
		t.Error("second Start succeeded")
	}
	for range 2 {
		if err := cache.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if ids(cache, "ORDERS") != "o1" {
		t.Error("the view is gone after Close")
	}
}

func TestRunStopsWithContext(t *testing.T) {
	srv := startServer(t)
	cache, err := client.NewCache(newClient(t, srv.URL), pollingCache())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cache.Run(ctx) }()
	waitSynced(t, cache)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

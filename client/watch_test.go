package client_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/proctest"
)

// fakeWatch is a stand-in heureka server that speaks the watch protocol:
// GET /eureka/apps/ with X-Heureka-Version, and GET /v1/watch as
// Server-Sent Events. Tests change its state and make it misbehave: drop
// streams, hold reconnections, skip a sequence number, ask for a resync.
type fakeWatch struct {
	t   *testing.T
	URL string // base URL, .../eureka

	mu      sync.Mutex
	state   map[string]*heureka.Instance // by APP/ID
	seq     uint64
	log     []fakeEvent
	changed chan struct{} // closed and replaced at every change
	kill    chan struct{} // closed to drop every open stream
	resync  chan struct{} // closed to send resync on every open stream
	hold    chan struct{} // when not nil, new watch requests wait for it
	down    bool          // every connection is closed without an answer
	fulls   int
	watches []watchReq
}

type fakeEvent struct {
	seq    uint64
	action heureka.ActionType
	inst   *heureka.Instance
	hidden bool // recorded, never sent: a gap
}

type watchReq struct {
	since, lastEventID string
	apps               []string
}

func startFakeWatch(t *testing.T) *fakeWatch {
	f := &fakeWatch{
		t:       t,
		state:   map[string]*heureka.Instance{},
		changed: make(chan struct{}),
		kill:    make(chan struct{}),
		resync:  make(chan struct{}),
	}
	hs := httptest.NewServer(f)
	t.Cleanup(func() {
		f.dropStreams()
		hs.Close()
	})
	f.URL = hs.URL + "/eureka"
	return f
}

func (f *fakeWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	switch path := strings.TrimRight(r.URL.Path, "/"); {
	case path == "/eureka/apps":
		f.serveApps(w)
	case path == "/v1/watch":
		f.serveWatch(w, r)
	case path == "/v1/status":
		// A cache limited to some applications starts its full fetch here
		// (for the version), then reads each application: count it as one.
		f.mu.Lock()
		f.fulls++
		v := f.seq
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"version":%d}`, v)
	case strings.HasPrefix(path, "/eureka/apps/"):
		f.serveApp(w, r, strings.ToUpper(strings.TrimPrefix(path, "/eureka/apps/")))
	default:
		http.NotFound(w, r)
	}
}

// serveApp is GET /eureka/apps/{APP}; 404 when it has no instances.
func (f *fakeWatch) serveApp(w http.ResponseWriter, r *http.Request, name string) {
	f.mu.Lock()
	a := &heureka.Application{Name: name}
	for _, key := range slices.Sorted(maps.Keys(f.state)) {
		if in := f.state[key]; in.App == name {
			a.Instances = append(a.Instances, in)
		}
	}
	f.mu.Unlock()
	if len(a.Instances) == 0 {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(eureka.EncodeApplication(eureka.JSON, a))
}

func (f *fakeWatch) serveApps(w http.ResponseWriter) {
	f.mu.Lock()
	f.fulls++
	byApp := map[string]*heureka.Application{}
	for _, key := range slices.Sorted(maps.Keys(f.state)) {
		in := f.state[key]
		a := byApp[in.App]
		if a == nil {
			a = &heureka.Application{Name: in.App}
			byApp[in.App] = a
		}
		a.Instances = append(a.Instances, in)
	}
	apps := &heureka.Applications{VersionDelta: 1}
	for _, name := range slices.Sorted(maps.Keys(byApp)) {
		apps.Apps = append(apps.Apps, byApp[name])
	}
	apps.HashCode = heureka.ReconcileHashCode(apps.Apps)
	version := f.seq
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Heureka-Version", strconv.FormatUint(version, 10))
	_, _ = w.Write(eureka.EncodeApplications(eureka.JSON, apps))
}

func (f *fakeWatch) serveWatch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	f.watches = append(f.watches, watchReq{since: q.Get("since"), lastEventID: r.Header.Get("Last-Event-ID"), apps: q["app"]})
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	since, err := strconv.ParseUint(q.Get("since"), 10, 64)
	if err != nil {
		http.Error(w, "bad since", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fmt.Fprint(w, ": connected\n\n")
	fl.Flush()
	cursor := since
	for {
		f.mu.Lock()
		var out []fakeEvent
		for _, ev := range f.log {
			if ev.seq > cursor {
				out = append(out, ev)
				cursor = ev.seq
			}
		}
		changed, kill, resync := f.changed, f.kill, f.resync
		version := f.seq
		f.mu.Unlock()
		for _, ev := range out {
			if !ev.hidden {
				writeChange(w, ev)
			}
		}
		fl.Flush()
		select {
		case <-changed:
		case <-kill:
			return
		case <-resync:
			fmt.Fprintf(w, "event: resync\ndata: {\"reason\":\"test\",\"version\":%d}\n\n", version)
			fl.Flush()
			<-r.Context().Done() // the client hangs up
			return
		case <-r.Context().Done():
			return
		}
	}
}

func writeChange(w http.ResponseWriter, ev fakeEvent) {
	data := map[string]any{
		"seq": ev.seq, "action": ev.action, "cause": "test", "time": time.Now().UnixMilli(),
		"app": ev.inst.App, "id": ev.inst.ID,
	}
	if ev.action != heureka.ActionDeleted {
		data["instance"] = json.RawMessage(eureka.AppendInstance(nil, eureka.JSON, ev.inst))
	}
	b, _ := json.Marshal(data)
	// Split framing across lines the way SSE allows: id, event, data.
	fmt.Fprintf(w, "id: %d\nevent: change\ndata: %s\n\n", ev.seq, b)
}

// put records an ADDED or MODIFIED change.
func (f *fakeWatch) put(in *heureka.Instance) uint64 { return f.record(in, false, false) }

// del records a DELETED change.
func (f *fakeWatch) del(app, id string) uint64 {
	return f.record(&heureka.Instance{App: app, ID: id}, true, false)
}

// putHidden changes the state and the sequence without sending the event:
// watchers see a gap.
func (f *fakeWatch) putHidden(in *heureka.Instance) uint64 { return f.record(in, false, true) }

func (f *fakeWatch) record(in *heureka.Instance, deleted, hidden bool) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := in.App + "/" + in.ID
	action := heureka.ActionModified
	switch {
	case deleted:
		action = heureka.ActionDeleted
		delete(f.state, key)
	case f.state[key] == nil:
		action = heureka.ActionAdded
		f.state[key] = in
	default:
		f.state[key] = in
	}
	f.seq++
	f.log = append(f.log, fakeEvent{seq: f.seq, action: action, inst: in, hidden: hidden})
	close(f.changed)
	f.changed = make(chan struct{})
	return f.seq
}

func (f *fakeWatch) dropStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.kill)
	f.kill = make(chan struct{})
}

func (f *fakeWatch) sendResync() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.resync)
	f.resync = make(chan struct{})
}

func (f *fakeWatch) counts() (fulls int, watches []watchReq) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fulls, slices.Clone(f.watches)
}

// watchingCache is fastCache with watching on.
func watchingCache() client.CacheConfig {
	cfg := fastCache()
	cfg.PollInterval = time.Hour // a watching cache must not need polls
	cfg.RetryMax = time.Hour
	return cfg
}

func startWatching(t *testing.T, f *fakeWatch, cfg client.CacheConfig) *client.Cache {
	t.Helper()
	cache := startCache(t, newClient(t, f.URL), cfg)
	waitSynced(t, cache)
	proctest.Eventually(t, 10*time.Second, "the watch to open", func() bool {
		_, ws := f.counts()
		return len(ws) > 0 && cache.Status()[0].Mode == client.ModeWatching
	})
	return cache
}

func TestWatchFollowsChanges(t *testing.T) {
	f := startFakeWatch(t)
	f.put(testInstance("ORDERS", "o1", heureka.StatusUp))
	cache := startWatching(t, f, watchingCache())
	if got := ids(cache, "ORDERS"); got != "o1" {
		t.Fatalf("after the full fetch: %q", got)
	}

	f.put(testInstance("ORDERS", "o2", heureka.StatusStarting))
	proctest.Eventually(t, 10*time.Second, "o2", func() bool { return ids(cache, "ORDERS") == "o1,o2" })
	f.put(testInstance("ORDERS", "o2", heureka.StatusUp))
	proctest.Eventually(t, 10*time.Second, "o2 UP", func() bool {
		in, ok := cache.Instance("ORDERS", "o2")
		return ok && in.Status == heureka.StatusUp
	})
	last := f.del("ORDERS", "o1")
	proctest.Eventually(t, 10*time.Second, "o1 to go", func() bool { return ids(cache, "ORDERS") == "o2" })

	fulls, ws := f.counts()
	if fulls != 1 || len(ws) != 1 {
		t.Errorf("%d full fetches and %d watch requests; want 1 and 1", fulls, len(ws))
	}
	if ws[0].since != "1" || ws[0].lastEventID != "1" {
		t.Errorf("watch request %+v; want since=1 and Last-Event-ID 1", ws[0])
	}
	proctest.Eventually(t, 10*time.Second, "the status version", func() bool { return cache.Status()[0].Version == last })
}

func TestWatchResumesAfterDrop(t *testing.T) {
	f := startFakeWatch(t)
	f.put(testInstance("ORDERS", "o1", heureka.StatusUp))
	cache := startWatching(t, f, watchingCache())
	seen := f.put(testInstance("ORDERS", "o2", heureka.StatusUp))
	proctest.Eventually(t, 10*time.Second, "o2", func() bool { return ids(cache, "ORDERS") == "o1,o2" })

	// Drop the stream and hold the reconnection while changes happen.
	hold := make(chan struct{})
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	f.dropStreams()
	proctest.Eventually(t, 10*time.Second, "the reconnection", func() bool { _, ws := f.counts(); return len(ws) == 2 })
	f.put(testInstance("ORDERS", "o3", heureka.StatusUp))
	f.del("ORDERS", "o1")
	f.mu.Lock()
	f.hold = nil
	f.mu.Unlock()
	close(hold)
	proctest.Eventually(t, 10*time.Second, "the missed changes", func() bool { return ids(cache, "ORDERS") == "o2,o3" })

	fulls, ws := f.counts()
	if fulls != 1 {
		t.Errorf("%d full fetches; a resumed stream needs none", fulls)
	}
	want := strconv.FormatUint(seen, 10)
	if ws[1].lastEventID != want || ws[1].since != want {
		t.Errorf("reconnected with %+v; want Last-Event-ID and since %s", ws[1], want)
	}
}

func TestWatchGapRefetches(t *testing.T) {
	f := startFakeWatch(t)
	f.put(testInstance("ORDERS", "o1", heureka.StatusUp))
	cache := startWatching(t, f, watchingCache())

	f.putHidden(testInstance("ORDERS", "lost", heureka.StatusUp))
	after := f.put(testInstance("ORDERS", "o2", heureka.StatusUp))
	proctest.Eventually(t, 10*time.Second, "the full fetch to bring the lost change", func() bool { return ids(cache, "ORDERS") == "lost,o1,o2" })
	proctest.Eventually(t, 10*time.Second, "a new watch from the fetched version", func() bool {
		fulls, ws := f.counts()
		return fulls == 2 && len(ws) == 2 && ws[1].since == strconv.FormatUint(after, 10)
	})
	// And the new watch carries on.
	f.put(testInstance("ORDERS", "o3", heureka.StatusUp))
	proctest.Eventually(t, 10*time.Second, "o3", func() bool { return ids(cache, "ORDERS") == "lost,o1,o2,o3" })
}

func TestWatchResync(t *testing.T) {
	f := startFakeWatch(t)
	f.put(testInstance("ORDERS", "o1", heureka.StatusUp))
	cfg := watchingCache()
	cfg.Apps = []string{"orders", "billing"}
	cache := startWatching(t, f, cfg)
	if _, ws := f.counts(); !slices.Equal(ws[0].apps, []string{"BILLING", "ORDERS"}) {
		t.Errorf("watch asked for apps %v", ws[0].apps)
	}

	f.sendResync()
	v := f.put(testInstance("BILLING", "b1", heureka.StatusUp))
	proctest.Eventually(t, 10*time.Second, "a full fetch and a new watch", func() bool {
		fulls, ws := f.counts()
		return fulls == 2 && len(ws) == 2
	})
	proctest.Eventually(t, 10*time.Second, "b1", func() bool { return ids(cache, "BILLING") == "b1" })
	_, ws := f.counts()
	if since, _ := strconv.ParseUint(ws[1].since, 10, 64); since > v {
		t.Errorf("re-watched from %d, beyond the server's %d", since, v)
	}
	f.put(testInstance("ORDERS", "o2", heureka.StatusUp))
	f.put(testInstance("INVENTORY", "i1", heureka.StatusUp)) // not wanted
	proctest.Eventually(t, 10*time.Second, "o2", func() bool { return ids(cache, "ORDERS") == "o1,o2" })
	if cache.Snapshot().App("INVENTORY") != nil {
		t.Error("an unwanted application entered the view")
	}
}

func TestWatchServerGoneFailsOver(t *testing.T) {
	f := startFakeWatch(t)
	f.put(testInstance("ORDERS", "o1", heureka.StatusUp))
	cfg := watchingCache()
	cfg.PollInterval = 20 * time.Millisecond
	cfg.RetryMax = 50 * time.Millisecond
	cache := startWatching(t, f, cfg)

	// The server goes down: the stream drops, reconnections and full
	// fetches get no answer until it returns.
	f.mu.Lock()
	f.down = true
	f.mu.Unlock()
	f.dropStreams()
	proctest.Eventually(t, 10*time.Second, "the cache to give the stream up", func() bool {
		st := cache.Status()[0]
		return st.Mode == client.ModeStarting && st.Failures >= 1
	})
	f.put(testInstance("ORDERS", "o2", heureka.StatusUp))
	if got := ids(cache, "ORDERS"); got != "o1" {
		t.Fatalf("during the outage the view is %q", got)
	}
	f.mu.Lock()
	f.down = false
	f.mu.Unlock()
	proctest.Eventually(t, 10*time.Second, "o2", func() bool { return ids(cache, "ORDERS") == "o1,o2" })
	proctest.Eventually(t, 10*time.Second, "watching again", func() bool { return cache.Status()[0].Mode == client.ModeWatching })
	f.put(testInstance("ORDERS", "o3", heureka.StatusUp))
	proctest.Eventually(t, 10*time.Second, "o3", func() bool { return ids(cache, "ORDERS") == "o1,o2,o3" })
}

// TestWatchDisabledFallsBackToPolling runs against the real server with a
// version header but no watch endpoint (404): the cache polls deltas and
// looks for the watch again every WatchRetryInterval.
func TestWatchDisabledFallsBackToPolling(t *testing.T) {
	srv := startServer(t)
	srv.versionHeader.Store(true)
	srv.register(t, "ORDERS", "o1", heureka.StatusUp)
	cfg := fastCache()
	cfg.WatchRetryInterval = 200 * time.Millisecond
	cache := startCache(t, newClient(t, srv.URL), cfg)
	waitSynced(t, cache)
	proctest.Eventually(t, 10*time.Second, "a watch attempt", func() bool { return srv.watches.Load() >= 1 })

	srv.register(t, "ORDERS", "o2", heureka.StatusUp)
	proctest.Eventually(t, 10*time.Second, "o2 through deltas", func() bool { return ids(cache, "ORDERS") == "o1,o2" })
	if srv.deltas.Load() == 0 {
		t.Error("no delta polled")
	}
	proctest.Eventually(t, 10*time.Second, "the watch to be tried again", func() bool { return srv.watches.Load() >= 2 })
	proctest.Eventually(t, 10*time.Second, "polling mode", func() bool { return cache.Status()[0].Mode == client.ModePolling })
}

// TestWatchAgainstHeurekaServer follows the real server's /v1/watch: no
// delta is ever polled, a dropped connection resumes without a full fetch,
// and a stream filtered by application (whose sequence skips the other
// applications' changes) is not mistaken for one with gaps.
func TestWatchAgainstHeurekaServer(t *testing.T) {
	for _, filtered := range []bool{false, true} {
		t.Run(map[bool]string{false: "all", true: "filtered"}[filtered], func(t *testing.T) {
			srv := startServer(t)
			srv.versionHeader.Store(true)
			srv.realWatch.Store(true)
			srv.register(t, "ORDERS", "o1", heureka.StatusUp)
			cfg := watchingCache()
			if filtered {
				cfg.Apps = []string{"ORDERS"}
			}
			cache := startCache(t, newClient(t, srv.URL), cfg)
			waitSynced(t, cache)
			proctest.Eventually(t, 10*time.Second, "watching", func() bool { return cache.Status()[0].Mode == client.ModeWatching })

			srv.register(t, "BILLING", "b1", heureka.StatusUp)
			srv.register(t, "ORDERS", "o2", heureka.StatusStarting)
			srv.register(t, "BILLING", "b2", heureka.StatusUp)
			if err := srv.registry().SetStatus("ORDERS", "o2", heureka.StatusUp, 0, false); err != nil {
				t.Fatal(err)
			}
			proctest.Eventually(t, 10*time.Second, "o2 UP", func() bool {
				in, ok := cache.Instance("ORDERS", "o2")
				return ok && in.Status == heureka.StatusUp
			})
			if filtered != (cache.Snapshot().App("BILLING") == nil) {
				t.Errorf("filtered=%v but BILLING is %v", filtered, cache.Snapshot().App("BILLING"))
			}

			srv.hs.CloseClientConnections() // drop the stream
			srv.cancel(t, "ORDERS", "o1")
			srv.register(t, "BILLING", "b3", heureka.StatusUp)
			srv.register(t, "ORDERS", "o3", heureka.StatusUp)
			proctest.Eventually(t, 10*time.Second, "the changes made while reconnecting", func() bool { return ids(cache, "ORDERS") == "o2,o3" })

			// A cache of all applications reads the registry once; one of
			// ORDERS only reads ORDERS, once, and never the registry.
			reqs := srv.requests()
			if wantFulls := map[bool]int64{false: 1, true: 0}[filtered]; srv.fulls.Load() != wantFulls {
				t.Errorf("%d full fetches; want %d", srv.fulls.Load(), wantFulls)
			}
			if filtered && (reqs["GET /eureka/apps/ORDERS"] != 1 || reqs["GET /eureka/apps/BILLING"] != 0) {
				t.Errorf("requests %v: want GET /eureka/apps/ORDERS once, and nothing of BILLING", reqs)
			}
			if n := srv.deltas.Load(); n != 0 {
				t.Errorf("%d delta polls while watching", n)
			}
			if n := srv.watches.Load(); n < 2 {
				t.Errorf("%d watch requests; want a reconnection", n)
			}
			proctest.Eventually(t, 10*time.Second, "the status version", func() bool {
				return cache.Status()[0].Version == srv.registry().Snapshot().Version || filtered
			})
		})
	}
}

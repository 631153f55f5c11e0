package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
)

// Fault modes of a testServer.
const (
	serveNormally int32 = iota
	serve503            // every request gets 503
	serveDrop           // every connection is closed without an answer
)

// testServer is a real registry behind the real HTTP API on loopback,
// wrapped in a handler that can fail on demand, count requests, restart the
// registry empty, and tamper with deltas.
type testServer struct {
	t    *testing.T
	URL  string // base URL, .../eureka
	hs   *httptest.Server
	log  *slog.Logger
	reg  atomic.Pointer[registry.Registry]
	api  atomic.Pointer[httpapi.Server]
	mode atomic.Int32

	// Counters of Eureka reads and writes that reached the wrapper.
	fulls, deltas, writes, watches atomic.Int64
	// toldMu guards told: heureka.ToldPeersHeader of every request that
	// reached the wrapper, in order, "" where there was none.
	toldMu sync.Mutex
	told   []string
	// dropFromDelta makes the next delta answer that holds this instance
	// ID leave it out (keeping apps__hashcode), once.
	dropFromDelta atomic.Pointer[string]
	// versionHeader keeps X-Heureka-Version on full fetches; without it
	// the server looks like plain Eureka.
	versionHeader atomic.Bool
	// realWatch serves /v1/watch; without it /v1/watch answers 404, as a
	// heureka server with the watch disabled.
	realWatch atomic.Bool

	pathsMu sync.Mutex
	paths   map[string]int // requests by "METHOD path?query-keys"
}

// requests returns how many requests were made for each "METHOD path",
// the path without a trailing slash and with the query's app= value when
// it has one.
func (s *testServer) requests() map[string]int {
	s.pathsMu.Lock()
	defer s.pathsMu.Unlock()
	return maps.Clone(s.paths)
}

func (s *testServer) countRequest(r *http.Request) {
	s.toldMu.Lock()
	s.told = append(s.told, r.Header.Get(heureka.ToldPeersHeader))
	s.toldMu.Unlock()
	k := r.Method + " " + strings.TrimRight(r.URL.Path, "/")
	if app := r.URL.Query().Get("app"); app != "" {
		k += "?app=" + app
	}
	s.pathsMu.Lock()
	defer s.pathsMu.Unlock()
	if s.paths == nil {
		s.paths = map[string]int{}
	}
	s.paths[k]++
}

// takeTold returns the heureka.ToldPeersHeader of each request since the
// last call, in order, "" where there was none.
func (s *testServer) takeTold() []string {
	s.toldMu.Lock()
	defer s.toldMu.Unlock()
	out := s.told
	s.told = nil
	return out
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func startServer(t testing.TB) *testServer {
	t.Helper()
	s := &testServer{log: testLogger(t)}
	if tt, ok := t.(*testing.T); ok {
		s.t = tt
	}
	s.restartEmpty(t)
	s.hs = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.hs.Close)
	s.URL = s.hs.URL + "/eureka"
	return s
}

// restartEmpty replaces the registry with a new, empty one, as a restarted
// server would have.
func (s *testServer) restartEmpty(t testing.TB) {
	t.Helper()
	cfg := registry.DefaultConfig()
	cfg.Logger = s.log
	reg, err := registry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.reg.Store(reg)
	api, err := httpapi.New(httpapi.DefaultConfig(), reg, s.log)
	if err != nil {
		t.Fatal(err)
	}
	if old := s.api.Swap(api); old != nil {
		old.CloseStreams() // stops its background encoder, as a restart would
	}
	t.Cleanup(api.CloseStreams)
}

func (s *testServer) registry() *registry.Registry { return s.reg.Load() }

func (s *testServer) serve(w http.ResponseWriter, r *http.Request) {
	s.countRequest(r)
	switch s.mode.Load() {
	case serve503:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"down for the test"}`))
		return
	case serveDrop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	path := strings.TrimRight(r.URL.Path, "/")
	api := s.api.Load()
	switch {
	case strings.HasPrefix(path, "/v1/watch"):
		s.watches.Add(1)
		if !s.realWatch.Load() {
			http.Error(w, `{"error":"watch is disabled"}`, http.StatusNotFound)
			return
		}
	case r.Method == http.MethodGet && path == "/eureka/apps":
		s.fulls.Add(1)
		if !s.versionHeader.Load() {
			w = stripHeader{w, "X-Heureka-Version"}
		}
	case r.Method == http.MethodGet && path == "/eureka/apps/delta":
		s.deltas.Add(1)
		if s.dropFromDelta.Load() != nil {
			s.serveTamperedDelta(w, r, api)
			return
		}
	case r.Method != http.MethodGet:
		s.writes.Add(1)
	}
	api.ServeHTTP(w, r)
}

// stripHeader removes one header from a response, to make a heureka
// server look like plain Eureka.
type stripHeader struct {
	http.ResponseWriter
	key string
}

func (s stripHeader) WriteHeader(code int) {
	s.Header().Del(s.key)
	s.ResponseWriter.WriteHeader(code)
}

func (s stripHeader) Write(b []byte) (int, error) {
	s.Header().Del(s.key)
	return s.ResponseWriter.Write(b)
}

// serveTamperedDelta answers with the real delta, minus the instance
// named by dropFromDelta if it is there.
func (s *testServer) serveTamperedDelta(w http.ResponseWriter, r *http.Request, api http.Handler) {
	r = r.Clone(r.Context())
	r.Header.Del("Accept-Encoding")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, r)
	apps, err := eureka.DecodeApplications(rec.Body.Bytes(), eureka.JSON)
	drop := s.dropFromDelta.Load()
	if err != nil || drop == nil {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	for _, a := range apps.Apps {
		for i, in := range a.Instances {
			if in.ID == *drop && s.dropFromDelta.CompareAndSwap(drop, nil) {
				a.Instances = slices.Delete(a.Instances, i, i+1)
				break
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(eureka.EncodeApplications(eureka.JSON, apps))
}

// register puts an instance straight into the registry.
// followedBy reports whether the cache's view of app holds the same
// instances, with the same statuses, as the registry holds now.
func (s *testServer) followedBy(cache *client.Cache, app string) bool {
	want := map[string]heureka.Status{}
	if a, ok := s.registry().Snapshot().App(app); ok {
		for _, in := range a.Instances {
			want[in.ID] = in.Status
		}
	}
	got := cache.Instances(app)
	if len(got) != len(want) {
		return false
	}
	for _, in := range got {
		if st, ok := want[in.ID]; !ok || st != in.Status {
			return false
		}
	}
	return true
}

func (s *testServer) register(t testing.TB, app, id string, st heureka.Status) *heureka.Instance {
	t.Helper()
	in := testInstance(app, id, st)
	if err := s.registry().Register(in, false); err != nil {
		t.Fatalf("register %s/%s: %v", app, id, err)
	}
	return in
}

func (s *testServer) cancel(t testing.TB, app, id string) {
	t.Helper()
	if err := s.registry().Cancel(registry.CancelRequest{App: strings.ToUpper(app), ID: id}); err != nil {
		t.Fatalf("cancel %s/%s: %v", app, id, err)
	}
}

func testInstance(app, id string, st heureka.Status) *heureka.Instance {
	in := &heureka.Instance{
		ID:         id,
		App:        app,
		HostName:   id + ".example",
		IPAddr:     "10.0.0.1",
		Status:     st,
		Port:       heureka.Port{Number: 9866, Enabled: true},
		VIPAddress: strings.ToLower(app),
		Metadata:   heureka.MetadataOf(map[string]string{"version": "3.3.6", "rack": "/r1"}),
	}
	in.Normalize()
	return in
}

// deadURL is a base URL on a port nobody listens on.
func deadURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/eureka"
}

// newClient returns a Client with short pauses, closed at cleanup.
func newClient(t testing.TB, urls ...string) *client.Client {
	t.Helper()
	return newClientConfig(t, func(c *client.Config) { c.URLs = urls })
}

// newClientConfig builds a client from the defaults, test timeouts and
// edit, closed at cleanup.
func newClientConfig(t testing.TB, edit func(*client.Config)) *client.Client {
	t.Helper()
	cfg := client.DefaultConfig()
	cfg.ConnectTimeout = 2 * time.Second
	cfg.ReadTimeout = 5 * time.Second
	cfg.Backoff = 5 * time.Millisecond
	cfg.MaxBackoff = 20 * time.Millisecond
	cfg.Logger = testLogger(t)
	edit(&cfg)
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fastCache is a CacheConfig that polls and retries in milliseconds.
func fastCache() client.CacheConfig {
	cfg := client.DefaultCacheConfig()
	cfg.PollInterval = 20 * time.Millisecond
	cfg.RetryMax = 100 * time.Millisecond
	cfg.WatchRetryInterval = time.Minute
	cfg.WatchIdleTimeout = 5 * time.Second
	cfg.CacheFileInterval = 10 * time.Millisecond
	return cfg
}

// startCache builds and starts a cache, closed at cleanup.
func startCache(t testing.TB, c *client.Client, cfg client.CacheConfig) *client.Cache {
	t.Helper()
	cache, err := client.NewCache(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cache.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return cache
}

// waitSynced waits for the cache's first full read of every cluster.
func waitSynced(t testing.TB, cache *client.Cache) {
	t.Helper()
	select {
	case <-cache.Synced():
	case <-time.After(10 * time.Second):
		t.Fatalf("cache did not sync; status %+v", cache.Status())
	}
}

// ids lists the instance IDs of app in the cache's view.
func ids(cache *client.Cache, app string) string {
	var b bytes.Buffer
	for i, in := range cache.Instances(app) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(in.ID)
	}
	return b.String()
}

// startMemServer is startServer with no socket, for a test in a
// testing/synctest bubble: a client reaches it through memClient, so
// that the bubble's clock, not the wall clock, drives the cache's polls
// and retries. It has no connections to drop: serveDrop fails each
// request as a dropped connection would.
func startMemServer(t *testing.T) *testServer {
	t.Helper()
	s := &testServer{log: testLogger(t), t: t}
	s.restartEmpty(t)
	s.URL = fmt.Sprintf("http://registry-%d.test/eureka", memHosts.Add(1))
	return s
}

// memHosts numbers the mem servers' host names.
var memHosts atomic.Int64

// memClient is newClient for servers, its requests served in memory.
func memClient(t *testing.T, servers ...*testServer) *client.Client {
	t.Helper()
	hosts := memTransport{}
	var urls []string
	for _, s := range servers {
		u, err := url.Parse(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		hosts[u.Host] = http.HandlerFunc(s.serve)
		urls = append(urls, s.URL)
	}
	return newClientConfig(t, func(c *client.Config) { c.URLs, c.Transport = urls, hosts })
}

// memTransport serves each request, in the caller's goroutine, with the
// handler of its host.
type memTransport map[string]http.Handler

func (m memTransport) RoundTrip(r *http.Request) (resp *http.Response, err error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	h, ok := m[r.URL.Host]
	if !ok {
		return nil, errors.New(r.URL.String() + ": connection refused: no such host")
	}
	defer func() {
		if v := recover(); v == http.ErrAbortHandler {
			resp, err = nil, errors.New(r.URL.String()+": the connection closed without an answer")
		} else if v != nil {
			panic(v)
		}
	}()
	in := r.Clone(r.Context())
	in.RequestURI = r.URL.RequestURI()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, in)
	return rec.Result(), nil
}

// afterPolls lets a second of the bubble's time pass (fifty of
// fastCache's polls), waits for every goroutine in it to block, and fails
// t unless cond then holds.
func afterPolls(t *testing.T, what string, cond func() bool) {
	t.Helper()
	time.Sleep(time.Second)
	synctest.Wait()
	if !cond() {
		t.Fatalf("a second of polls later: not %s", what)
	}
}

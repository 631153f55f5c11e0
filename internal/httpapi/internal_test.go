package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{heureka.Errorf(heureka.EINVALID, "x"), 400},
		{heureka.Errorf(heureka.ENOTFOUND, "x"), 404},
		{heureka.Errorf(heureka.ECONFLICT, "x"), 409},
		{heureka.Errorf(heureka.ETOOLARGE, "x"), 413},
		{heureka.Errorf(heureka.EUNAVAILABLE, "x"), 503},
		{heureka.Errorf(heureka.EINTERNAL, "x"), 500},
		{errors.New("plain"), 500},
		{fmt.Errorf("wrapped: %w", heureka.Errorf(heureka.ENOTFOUND, "x")), 404},
		{&methodError{method: "PATCH", allow: []string{"GET"}}, 405},
	} {
		if got := statusOf(c.err); got != c.want {
			t.Errorf("statusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestPathSegmentsAndPrefix(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string
	}{
		{"/eureka/v2/apps/", []string{"apps"}},
		{"//eureka//apps//X//", []string{"apps", "X"}},
		{"/eureka/v1/apps/X/a:b.c", []string{"apps", "X", "a:b.c"}},
		{"/v2/apps", []string{"apps"}},
		{"/apps/EUREKA", []string{"apps", "EUREKA"}},
		{"/eureka/apps/v2", []string{"apps", "v2"}},
		{"/apps/X/a%2Fb", []string{"apps", "X", "a/b"}}, // an encoded slash stays in its segment
		{"/apps/X/a%3Ab", []string{"apps", "X", "a:b"}},
	} {
		u, err := url.Parse(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		segs, err := appendSegments(nil, u)
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		if got := stripPrefix(segs); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestRouteTable(t *testing.T) {
	s := mustNew(t, DefaultConfig(), nil, nil)
	for _, c := range []struct {
		method, path, pattern string
		p                     params
		code                  int // 0: matched
	}{
		{"GET", "/eureka/apps/delta", "/apps/delta", params{}, 0},
		{"GET", "/eureka/apps/orders", "/apps/{app}", params{app: "ORDERS"}, 0},
		{"PUT", "/eureka/apps/orders/i:d.1", "/apps/{app}/{id}", params{app: "ORDERS", id: "i:d.1"}, 0},
		{"PUT", "/eureka/apps/o/i/status", "/apps/{app}/{id}/status", params{app: "O", id: "i"}, 0},
		{"GET", "/eureka/svips/Sec.Vip", "/svips/{vip}", params{vip: "Sec.Vip"}, 0},
		{"GET", "/metrics", "/metrics", params{}, 0},
		{"POST", "/eureka/apps/delta", "/apps/delta", params{}, 405},
		{"GET", "/eureka/apps/o/i/x/y", "", params{}, 404},
	} {
		r, _ := http.NewRequest(c.method, "http://h"+c.path, nil)
		rt, h, p, err := s.match(r)
		if c.code != 0 {
			if err == nil || statusOf(err) != c.code {
				t.Errorf("%s %s: err %v, want status %d", c.method, c.path, err, c.code)
			}
		} else if err != nil || h == nil {
			t.Errorf("%s %s: %v", c.method, c.path, err)
			continue
		}
		if c.pattern != "" && (rt == nil || rt.pattern != c.pattern) {
			t.Errorf("%s %s: route %v, want %s", c.method, c.path, rt, c.pattern)
		}
		if p != c.p {
			t.Errorf("%s %s: params %+v, want %+v", c.method, c.path, p, c.p)
		}
	}
}

func TestPayloadCache(t *testing.T) {
	c := newPayloadCache(3)
	builds := 0
	build := func(s string) func() *payload {
		return func() *payload { builds++; return &payload{body: []byte(s)} }
	}
	k := cacheKey{res: resApps, format: eureka.JSON}
	v1, v2 := stamp{version: 1, built: 10}, stamp{version: 2, built: 20}

	if got := c.get(v1, k, build("v1")); string(got.body) != "v1" || builds != 1 {
		t.Fatalf("first get: %q after %d builds", got.body, builds)
	}
	if got := c.get(v1, k, build("other")); string(got.body) != "v1" || builds != 1 {
		t.Fatalf("same version: %q after %d builds, want the cached v1", got.body, builds)
	}
	if got := c.get(v2, k, build("v2")); string(got.body) != "v2" || c.len() != 1 {
		t.Fatalf("new version: %q with %d entries", got.body, c.len())
	}
	// A reader still holding version 1 is not served version 2, and does not
	// reset the cache.
	if got := c.get(v1, k, build("old")); string(got.body) != "old" || c.len() != 1 {
		t.Fatalf("old version: %q with %d entries", got.body, c.len())
	}
	// Formats and names are separate entries; past max, nothing is stored.
	for i, name := range []string{"A", "B", "C", "D"} {
		got := c.get(v2, cacheKey{res: resApp, name: name, format: eureka.XML}, build(name))
		if string(got.body) != name {
			t.Fatalf("app %s: %q", name, got.body)
		}
		if want := min(2+i, 3); c.len() != want {
			t.Fatalf("after app %s: %d entries, want %d", name, c.len(), want)
		}
	}
	// The same version rebuilt later (the delta window moved) is a new
	// snapshot: its delta is built again; the earlier one bypasses.
	dk := cacheKey{res: resDelta, format: eureka.JSON}
	c.get(v2, dk, build("d1"))
	later := stamp{version: 2, built: 30}
	if got := c.get(later, dk, build("d2")); string(got.body) != "d2" {
		t.Fatalf("moved delta: %q, want d2", got.body)
	}
	if got := c.get(v2, dk, build("d3")); string(got.body) != "d3" {
		t.Fatalf("earlier snapshot of the same version: %q, want its own d3", got.body)
	}
	if got := c.get(later, dk, build("d4")); string(got.body) != "d2" {
		t.Fatalf("moved delta after an earlier reader: %q, want the cached d2", got.body)
	}
}

func TestPayloadCacheBuildsOnceConcurrently(t *testing.T) {
	c := newPayloadCache(10)
	var builds atomic.Int32
	var wg sync.WaitGroup
	ps := make([]*payload, 16)
	// The build does not finish before every reader has come to get, so
	// the others find it under way.
	var arrived sync.WaitGroup
	arrived.Add(len(ps))
	for i := range ps {
		wg.Go(func() {
			arrived.Done()
			ps[i] = c.get(stamp{version: 7}, cacheKey{res: resApps}, func() *payload {
				builds.Add(1)
				arrived.Wait()
				return &payload{body: []byte("x")}
			})
			ps[i].gzipped()
		})
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Fatalf("%d builds, want 1", builds.Load())
	}
	for _, p := range ps {
		if p != ps[0] {
			t.Fatal("readers got different payloads")
		}
	}
	if g1, g2 := ps[0].gzipped(), ps[1].gzipped(); &g1[0] != &g2[0] {
		t.Fatal("payload gzipped twice")
	}
}

func TestWriteErrorHidesInternalErrors(t *testing.T) {
	var logs strings.Builder
	s := mustNew(t, DefaultConfig(), nil, slog.New(slog.NewTextHandler(&logs, nil)))
	for _, accept := range []string{"application/json", ""} {
		logs.Reset()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/eureka/apps", nil)
		req.Header.Set("Accept", accept)
		s.writeError(rec, req, fmt.Errorf("encoding: %w", errors.New("disk secret 42")))
		if rec.Code != 500 || strings.Contains(rec.Body.String(), "secret") || !strings.Contains(rec.Body.String(), "internal server error") {
			t.Errorf("Accept %q: %d %q", accept, rec.Code, rec.Body.String())
		}
		if n := strings.Count(logs.String(), "disk secret 42"); n != 1 {
			t.Errorf("Accept %q: internal error logged %d times:\n%s", accept, n, logs.String())
		}
		// 4xx are the client's business: shown, not logged.
		logs.Reset()
		rec = httptest.NewRecorder()
		s.writeError(rec, req, heureka.Errorf(heureka.EINVALID, "Missing hostname"))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "Missing hostname") || logs.Len() != 0 {
			t.Errorf("Accept %q: %d %q, logs %q", accept, rec.Code, rec.Body.String(), logs.String())
		}
	}
}

// mustNew is New for tests: an invalid config fails the test.
func mustNew(tb testing.TB, cfg Config, reg *registry.Registry, logger *slog.Logger) *Server {
	tb.Helper()
	s, err := New(cfg, reg, logger)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.CloseStreams) // stops the background encoder, which holds reg
	return s
}

// TestFullListingOutlivesTheDeltaWindow: when only the delta window moves
// (no write), the registry builds a new snapshot for the delta, but the
// full listing, which depends on the version alone, is not assembled again.
func TestFullListingOutlivesTheDeltaWindow(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	rcfg := registry.DefaultConfig()
	rcfg.Clock = func() time.Time { return now }
	reg, err := registry.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []time.Duration{0, time.Minute} {
		now = time.Unix(1_700_000_000, 0).Add(at)
		in := &heureka.Instance{ID: fmt.Sprintf("i%d", i), App: "A", HostName: "h", IPAddr: "10.0.0.1"}
		in.Normalize()
		if err := reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	s := mustNew(t, DefaultConfig(), reg, nil)
	get := func(path string) (string, *payload) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept", "application/json")
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		e := s.cache.entries[cacheKey{res: resApps, format: eureka.JSON}]
		if e == nil {
			return rec.Body.String(), nil
		}
		return rec.Body.String(), e.p
	}
	full1, p1 := get("/eureka/apps/")
	delta1, _ := get("/eureka/apps/delta")
	// The first registration leaves the delta window; nothing was written.
	now = now.Add(rcfg.DeltaRetention - time.Minute + time.Second)
	delta2, _ := get("/eureka/apps/delta")
	full2, p2 := get("/eureka/apps/")
	if delta2 == delta1 || strings.Contains(delta2, `"i0"`) || !strings.Contains(delta2, `"i1"`) {
		t.Errorf("the delta did not move with its window:\nbefore %s\nafter %s", delta1, delta2)
	}
	if full1 != full2 {
		t.Errorf("the full listing changed without a write:\nbefore %s\nafter %s", full1, full2)
	}
	if p1 == nil || p1 != p2 {
		t.Errorf("the full listing was assembled again when only the delta window moved (%p, then %p)", p1, p2)
	}
}

// TestHotQueryAgreesWithParseQuery compares the renewal's query reader with
// url.ParseQuery on random queries over an alphabet of the characters that
// matter to either (separators, escapes, a semicolon) and a few keys.
func TestHotQueryAgreesWithParseQuery(t *testing.T) {
	parts := []string{"status", "lastDirtyTimestamp", "overriddenstatus", "=", "&", "UP", "12", "%20", "%zz", "+", ";", "a", ""}
	keys := []string{"status", "lastDirtyTimestamp", "overriddenstatus", "a", "status ", "UP"}
	seed := uint64(1)
	next := func(n int) int { // a small LCG: the cases must be the same on every run
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for range 20000 {
		var b strings.Builder
		for range next(9) {
			b.WriteString(parts[next(len(parts))])
		}
		raw := b.String()
		want, _ := url.ParseQuery(raw)
		for _, k := range keys {
			if got := parseHotQuery(raw).Get(k); got != want.Get(k) {
				t.Fatalf("query %q: Get(%q) = %q, url.ParseQuery says %q", raw, k, got, want.Get(k))
			}
		}
	}
	if got := parseHotQuery("status=UP&lastDirtyTimestamp=1717171717000&status=DOWN").Get("status"); got != "UP" {
		t.Errorf("first value wins: got %q", got)
	}
}

// TestSegmentsAgreeWithEscapedPath: appendSegments splits the decoded
// path when net/url kept no raw form, and must find exactly the segments
// of the escaped path, unescaped one by one, for any request URI.
func TestSegmentsAgreeWithEscapedPath(t *testing.T) {
	parts := []string{"/", "/", "apps", "a", "%2F", "%2f", "%20", "%25", "%41", "%C3%A9", "é", "+", ";", ":", "@", "..", "%zz", "!", "*", "~"}
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	checked := 0
	for range 20000 {
		var b strings.Builder
		b.WriteString("/")
		for range next(8) {
			b.WriteString(parts[next(len(parts))])
		}
		u, err := url.ParseRequestURI(b.String())
		if err != nil {
			continue // net/http answers 400 before any handler
		}
		checked++
		got, gotErr := appendSegments(nil, u)
		want, wantErr := appendUnescaped(nil, u.EscapedPath())
		if (gotErr != nil) != (wantErr != nil) || !slices.Equal(got, want) {
			t.Fatalf("path %q (Path %q, RawPath %q): segments %q (err %v), escaped path gives %q (err %v)",
				b.String(), u.Path, u.RawPath, got, gotErr, want, wantErr)
		}
	}
	if checked < 10000 {
		t.Fatalf("only %d of 20000 generated paths parsed; the generator is off", checked)
	}
}

// header reads the map directly, so every key it is given must already be
// in canonical form, or its lookup would never match.
func TestHeaderKeysAreCanonical(t *testing.T) {
	for _, k := range []string{replicationKey, heureka.ToldPeersHeader, replication.NodeHeader} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("header key %q is not canonical (%q); header(r, %q) would miss it", k, c, k)
		}
	}
}

package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
)

// sseEvent is one Server-Sent Event as a client parses it.
type sseEvent struct {
	id, event, data string
	comment         bool
}

// sseStream reads events from a watch or event stream.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

func openStream(t *testing.T, url string, hdr ...string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &sseStream{t: t, resp: resp, events: make(chan sseEvent, 1000), cancel: cancel}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		return s
	}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				s.events <- sseEvent{comment: true}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return s
}

// next returns the next event that is not a comment, within 5 s.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatal("stream ended")
			}
			if !ev.comment {
				return ev
			}
		case <-time.After(5 * time.Second):
			s.t.Fatal("no event within 5 s")
		}
	}
}

// ended reports whether the stream closes within 5 s.
func (s *sseStream) ended() bool {
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return true
			}
		case <-time.After(5 * time.Second):
			return false
		}
	}
}

type watchServer struct {
	url string
	reg *registry.Registry
	api *httpapi.Server
}

func newWatchServer(t *testing.T, rmod func(*registry.Config), hmod func(*httpapi.Config)) *watchServer {
	t.Helper()
	rcfg := registry.DefaultConfig()
	if rmod != nil {
		rmod(&rcfg)
	}
	reg, err := registry.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.DefaultConfig()
	if hmod != nil {
		hmod(&cfg)
	}
	api := newAPI(t, cfg, reg, nil)
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() { api.CloseStreams(); hs.Close() })
	return &watchServer{url: hs.URL, reg: reg, api: api}
}

func (w *watchServer) register(t *testing.T, app, id string, mods ...func(*heureka.Instance)) {
	t.Helper()
	in := &heureka.Instance{ID: id, App: app, HostName: id + ".example", IPAddr: "127.0.0.1",
		Metadata: heureka.MetadataOf(map[string]string{"rack": "/r1"})}
	for _, m := range mods {
		m(in)
	}
	in.Normalize()
	if err := w.reg.Register(in, false); err != nil {
		t.Fatal(err)
	}
}

type changeData struct {
	Seq      uint64          `json:"seq"`
	Action   string          `json:"action"`
	Cause    string          `json:"cause"`
	App      string          `json:"app"`
	ID       string          `json:"id"`
	Instance json.RawMessage `json:"instance"`
}

func decodeChange(t *testing.T, ev sseEvent) changeData {
	t.Helper()
	if ev.event != "change" {
		t.Fatalf("event %q (%s), want change", ev.event, ev.data)
	}
	var c changeData
	if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
		t.Fatalf("change data %q: %v", ev.data, err)
	}
	if strconv.FormatUint(c.Seq, 10) != ev.id {
		t.Fatalf("event id %q but seq %d", ev.id, c.Seq)
	}
	return c
}

func TestWatchStreamsChangesAsTheyHappen(t *testing.T) {
	ws := newWatchServer(t, nil, nil)
	ws.register(t, "DN", "a")
	s := openStream(t, ws.url+"/v1/watch")
	if ct := s.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	hello := s.next()
	if hello.event != "hello" || hello.data != `{"version":1}` {
		t.Fatalf("first event %+v, want hello at version 1", hello)
	}
	ws.register(t, "DN", "b")
	if err := ws.reg.SetStatus("DN", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	c1, c2 := decodeChange(t, s.next()), decodeChange(t, s.next())
	if c1.Seq != 2 || c1.ID != "b" || c1.Action != "ADDED" || c1.Cause != "register" {
		t.Errorf("first change %+v", c1)
	}
	if c2.Seq != 3 || c2.ID != "a" || c2.Action != "MODIFIED" || c2.Cause != "status" {
		t.Errorf("second change %+v", c2)
	}
	if !strings.Contains(string(c2.Instance), `"status":"OUT_OF_SERVICE"`) || !strings.Contains(string(c2.Instance), `"app":"DN"`) {
		t.Errorf("instance %s: want Eureka JSON with the new status", c2.Instance)
	}
}

func TestWatchResumesFromLastEventID(t *testing.T) {
	ws := newWatchServer(t, nil, nil)
	for i := range 5 {
		ws.register(t, "DN", fmt.Sprint(i))
	}
	for _, hdr := range [][]string{{"Last-Event-ID", "2"}, nil} {
		url := ws.url + "/v1/watch"
		if hdr == nil {
			url += "?since=2"
		}
		s := openStream(t, url, hdr...)
		s.next() // hello
		for want := uint64(3); want <= 5; want++ {
			if c := decodeChange(t, s.next()); c.Seq != want {
				t.Fatalf("resumed change %d, want %d", c.Seq, want)
			}
		}
	}
}

func TestWatchFiltersByApp(t *testing.T) {
	ws := newWatchServer(t, nil, nil)
	s := openStream(t, ws.url+"/v1/watch?app=nn&app=JN")
	s.next()
	ws.register(t, "DN", "a")
	ws.register(t, "NN", "b")
	ws.register(t, "DN", "c")
	ws.register(t, "DN", "d")
	ws.register(t, "JN", "e")
	// The other apps' changes are left out, and progress events cover them,
	// so the ids a watcher sees stay contiguous. Whether changes 3 and 4
	// come as one progress event or two depends on when the stream wakes.
	var got []string
	var changes []string
	last := uint64(0)
	for last < 5 {
		ev := s.next()
		id, err := strconv.ParseUint(ev.id, 10, 64)
		if err != nil || id <= last {
			t.Fatalf("event id %q after %d (events so far %v)", ev.id, last, got)
		}
		last = id
		switch ev.event {
		case "progress":
			got = append(got, "progress:"+ev.id)
		case "change":
			c := decodeChange(t, ev)
			got = append(got, c.App+":"+ev.id)
			changes = append(changes, c.App+":"+ev.id)
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
	if want := "[NN:2 JN:5]"; fmt.Sprint(changes) != want {
		t.Fatalf("changes %v (events %v), want %v", changes, got, want)
	}
	if got[0] != "progress:1" || (got[2] != "progress:4" && (len(got) < 4 || got[2] != "progress:3" || got[3] != "progress:4")) {
		t.Fatalf("events %v: want progress events covering 1 and 3-4", got)
	}
}

func TestNoticesReachTheEventStreamAndKeepWatchIdsContiguous(t *testing.T) {
	ws := newWatchServer(t, nil, nil)
	w := openStream(t, ws.url+"/v1/watch")
	e := openStream(t, ws.url+"/v1/events")
	w.next()
	e.next()
	ws.reg.NotePeer(heureka.EventPeerLost, "http://127.0.0.9:8761/eureka", "connection refused")
	ws.register(t, "DN", "a")
	if ev := w.next(); ev.event != "progress" || ev.id != "1" {
		t.Fatalf("watch: %+v, want progress 1 for the notice", ev)
	}
	if ev := w.next(); ev.event != "change" || ev.id != "2" {
		t.Fatalf("watch: %+v, want change 2", ev)
	}
	ev := e.next()
	var got struct{ Type, Peer, Cause string }
	if err := json.Unmarshal([]byte(ev.data), &got); err != nil {
		t.Fatal(err)
	}
	if ev.event != "peer_lost" || got.Peer != "http://127.0.0.9:8761/eureka" || got.Cause != "connection refused" {
		t.Fatalf("event %s %+v", ev.event, got)
	}
}

func TestWatchTellsToResyncWhenTheVersionIsGone(t *testing.T) {
	ws := newWatchServer(t, func(c *registry.Config) { c.ChangeLogSize = 4 }, nil)
	for i := range 20 {
		ws.register(t, "DN", fmt.Sprint(i))
	}
	for _, since := range []string{"1", "999"} { // trimmed away; from the future
		s := openStream(t, ws.url+"/v1/watch?since="+since)
		s.next()
		ev := s.next()
		if ev.event != "resync" || !strings.Contains(ev.data, `"version":20`) {
			t.Fatalf("since %s: event %+v, want resync at version 20", since, ev)
		}
		if !s.ended() {
			t.Fatalf("since %s: the stream did not end after resync", since)
		}
	}
}

func TestWatchTellsALaggingWatcherToResync(t *testing.T) {
	ws := newWatchServer(t, nil, func(c *httpapi.Config) { c.MaxWatchLag = 3 })
	for i := range 10 {
		ws.register(t, "DN", fmt.Sprint(i))
	}
	s := openStream(t, ws.url+"/v1/watch?since=0")
	s.next()
	if ev := s.next(); ev.event != "resync" || !strings.Contains(ev.data, "behind") {
		t.Fatalf("event %+v, want resync for lag", ev)
	}
}

func TestWatchBadInput(t *testing.T) {
	ws := newWatchServer(t, nil, func(c *httpapi.Config) { c.MaxWatchers = 1 })
	for _, q := range []string{"?since=-1", "?since=abc", "?app=a%2Fb", "?app=" + strings.Repeat("x", 300)} {
		resp, err := http.Get(ws.url + "/v1/watch" + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || len(body) == 0 {
			t.Errorf("%s: %d %s, want 400 with a message", q, resp.StatusCode, body)
		}
	}
	s := openStream(t, ws.url+"/v1/watch")
	s.next()
	resp, err := http.Get(ws.url + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second watcher over the limit of one: %d, want 503", resp.StatusCode)
	}
}

func TestWatchKeepAliveAndClose(t *testing.T) {
	ws := newWatchServer(t, nil, func(c *httpapi.Config) { c.KeepAlive = 20 * time.Millisecond })
	s := openStream(t, ws.url+"/v1/watch")
	s.next()
	select {
	case ev := <-s.events:
		if !ev.comment {
			t.Fatalf("got %+v on an idle stream, want a keep-alive comment", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no keep-alive on an idle stream")
	}
	if ws.api.Watchers() != 1 {
		t.Fatalf("%d watchers, want 1", ws.api.Watchers())
	}
	ws.api.CloseStreams()
	if !s.ended() {
		t.Fatal("CloseStreams did not end the stream")
	}
}

func TestEventsAreTyped(t *testing.T) {
	clk := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex // the server's encoder reads the clock too
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clk }
	ws := newWatchServer(t, func(c *registry.Config) { c.Clock = now; c.PauseThreshold = 0 }, nil)
	s := openStream(t, ws.url+"/v1/events")
	s.next()

	ws.register(t, "DN", "a", func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 10, 30 })
	if err := ws.reg.SetStatus("DN", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.reg.UpdateMetadata("DN", "a", map[string]string{"disk_used": "5", "rack": "/r2"}); err != nil {
		t.Fatal(err)
	}
	ws.register(t, "DN", "b", func(in *heureka.Instance) { in.Lease.DurationSecs = 30 })
	if err := ws.reg.Cancel(registry.CancelRequest{App: "DN", ID: "b"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clk = clk.Add(31 * time.Second)
	mu.Unlock()
	ws.reg.Tick()

	type event struct {
		Type, App, ID, Status, OldStatus, By, Cause string
		Keys                                        []string
	}
	want := []string{
		"registered DN/a UP by instance",
		"status_changed DN/a UP→OUT_OF_SERVICE by operator",
		"metadata_changed DN/a [disk_used rack] by operator",
		"registered DN/b UP by instance",
		"cancelled DN/b by instance",
		"expired DN/a by registry",
	}
	for _, w := range want {
		ev := s.next()
		var e event
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatal(err)
		}
		if ev.event != e.Type {
			t.Errorf("SSE event name %q, data type %q", ev.event, e.Type)
		}
		got := fmt.Sprintf("%s %s/%s", e.Type, e.App, e.ID)
		switch e.Type {
		case "registered":
			got += " " + e.Status
		case "status_changed":
			got += " " + e.OldStatus + "→" + e.Status
		case "metadata_changed":
			got += fmt.Sprint(" ", e.Keys)
		}
		got += " by " + e.By
		if got != w {
			t.Errorf("event %q, want %q (%s)", got, w, ev.data)
		}
		if e.Type == "expired" && !strings.Contains(e.Cause, "lease 30 s") {
			t.Errorf("expiry cause %q, want the lease named", e.Cause)
		}
	}
}

func TestAppsListingCarriesTheVersion(t *testing.T) {
	ws := newWatchServer(t, nil, nil)
	ws.register(t, "DN", "a")
	ws.register(t, "DN", "b")
	resp, err := http.Get(ws.url + "/eureka/apps/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("X-Heureka-Version"); v != "2" {
		t.Fatalf("X-Heureka-Version %q, want 2", v)
	}
}

func TestSingleInstanceReadShowsTheLastRenewal(t *testing.T) {
	clk := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clk }
	ws := newWatchServer(t, func(c *registry.Config) { c.Clock = now; c.PauseThreshold = 0 }, nil)
	ws.register(t, "DN", "a")
	mu.Lock()
	clk = clk.Add(7 * time.Second)
	mu.Unlock()
	if _, err := ws.reg.Renew(registry.RenewRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`"lastRenewalTimestamp":%d`, now().UnixMilli())
	for _, path := range []string{"/eureka/apps/DN/a", "/eureka/v2/instances/a"} {
		req, _ := http.NewRequest(http.MethodGet, ws.url+path, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("%s: %s, want %s", path, body, want)
		}
	}
}

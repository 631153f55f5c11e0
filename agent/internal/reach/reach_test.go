package reach

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/fetch"
)

// get reads url through fetch, as the knowledge packages do.
func get(c *http.Client, url string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		return fetch.Get(ctx, c, url, "", 1<<10)
	}
}

// TestRead tells the four outcomes apart on real connections: an answer, a
// refused port, a server that accepts and never answers, and one that
// answers with an error.
func TestRead(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("ok"))
		case "/hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			http.Error(w, "no such thing", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	defer close(release)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	c := Client()

	if _, err := Read(context.Background(), get(c, srv.URL+"/ok")); err != nil {
		t.Errorf("an answer: %v", err)
	}
	_, err = Read(context.Background(), get(c, dead+"/ok"))
	if !errors.Is(err, agent.ErrRefused) || errors.Is(err, agent.ErrNoAnswer) || !strings.Contains(err.Error(), dead) {
		t.Errorf("a refused port: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = Read(ctx, get(c, srv.URL+"/hang"))
	cancel()
	if !errors.Is(err, agent.ErrNoAnswer) || errors.Is(err, agent.ErrRefused) {
		t.Errorf("accepted, never answered: %v", err)
	}
	_, err = Read(context.Background(), get(c, srv.URL+"/missing"))
	if errors.Is(err, agent.ErrNoAnswer) || errors.Is(err, agent.ErrRefused) || heureka.ErrorCode(err) != heureka.EUNAVAILABLE {
		t.Errorf("an error answer: %v", err)
	}
	// The idle connection the first answer left is reused by a read that
	// then goes unanswered: still a pause, not a refusal.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = Read(ctx, func(ctx context.Context) ([]byte, error) {
		if _, err := get(c, srv.URL+"/ok")(ctx); err != nil {
			return nil, err
		}
		return get(c, srv.URL+"/hang")(ctx)
	})
	cancel()
	if !errors.Is(err, agent.ErrNoAnswer) {
		t.Errorf("answered, then unanswered: %v", err)
	}
	// A daemon that answered, then died: its idle connection is reused,
	// found closed, and the new one refused.
	died := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	u := died.URL
	if _, err := Read(context.Background(), get(c, u+"/")); err != nil {
		t.Fatal(err)
	}
	died.Close()
	if _, err := Read(context.Background(), get(c, u+"/")); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("answered, then died: %v", err)
	}
}

// TestHealth: an answer gives its state and health; a daemon of another
// cluster is unhealthy, naming both, without a state; another error is the
// probe's, and health is then not asked.
func TestHealth(t *testing.T) {
	state := func() string { return "leader" }
	well := func() (bool, string) { return true, "" }
	ill := func() (bool, string) { return false, "no quorum" }
	if h, err := Health(nil, state, well); err != nil || h != (agent.Health{State: "leader"}) {
		t.Errorf("an answer: %+v, %v", h, err)
	}
	if h, err := Health(nil, state, ill); err != nil || h != (agent.Health{State: "leader", Unhealthy: "no quorum"}) {
		t.Errorf("an unwell answer: %+v, %v", h, err)
	}
	h, err := Health(heureka.Errorf(heureka.ECONFLICT, "http://rm1:8088: the resourcemanager belongs to cluster %q, not %q", "b", "a"), state, ill)
	if err != nil || h.State != "" || !strings.Contains(h.Unhealthy, `cluster "b", not "a"`) || !strings.HasPrefix(h.Unhealthy, "another cluster's daemon: ") {
		t.Errorf("another cluster's: %+v, %v", h, err)
	}
	asked := false
	for _, e := range []error{heureka.Errorf(heureka.EINVALID, "garbage"), errors.New("plain")} {
		if h, err := Health(e, state, func() (bool, string) { asked = true; return true, "" }); err != e || h != (agent.Health{}) || asked {
			t.Errorf("Health(%v) = %+v, %v (health asked: %v)", e, h, err, asked)
		}
	}
}

func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8088":         "http://127.0.0.1:8088 8088",
		"https://u:p@rm1:8090/x/?a=b#c": "https://u:p@rm1:8090/x 8090",
		"http://rm1/":                   "http://rm1 0",
	} {
		base, port, err := Base(in)
		if got := fmt.Sprint(base, " ", port); err != nil || got != want {
			t.Errorf("Base(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "rm1:8088", "ftp://rm1"} {
		if _, _, err := Base(bad); err == nil {
			t.Errorf("Base(%q) accepted", bad)
		}
	}
}

// state is a Report read from the test server's body: "STATE" or
// "STATE unhealthy".
type state string

func (s state) RoleState() string { st, _, _ := strings.Cut(string(s), " "); return st }
func (s state) Health() (bool, string) {
	if strings.HasSuffix(string(s), " unhealthy") {
		return false, "it says so"
	}
	return true, ""
}

// TestWeb reads a real server through Web: the base URL handed to the
// read, a probe's role state and health, a refusal in the agent's terms
// once the server is gone, and the URL's port among the figures.
func TestWeb(t *testing.T) {
	body := "leader"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(body))
	}))
	defer srv.Close()
	var bases []string
	web, err := NewWeb(srv.URL+"/?x=1", func(ctx context.Context, c *http.Client, base string) (state, error) {
		bases = append(bases, base)
		b, err := fetch.Get(ctx, c, base+"/state", "", 1<<10)
		return state(b), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := web.Probe(context.Background()); err != nil || h.State != "leader" || h.Unhealthy != "" {
		t.Errorf("Probe of a healthy leader = %+v, %v", h, err)
	}
	body = "follower unhealthy"
	if h, err := web.Probe(context.Background()); err != nil || h.State != "follower" || h.Unhealthy != "it says so" {
		t.Errorf("Probe of an unhealthy follower = %+v, %v", h, err)
	}
	if len(bases) != 2 || bases[0] != srv.URL || web.URL() != srv.URL {
		t.Errorf("reads were given %q (URL %q); want %q, without the query", bases, web.URL(), srv.URL)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	f := web.Figures(2181, heureka.MetaVersion, "3.9.3")
	if f.Port != 2181 || f.Metadata.Get(heureka.MetaHTTPPort) != port || f.Metadata.Get(heureka.MetaVersion) != "3.9.3" {
		t.Errorf("Figures = %+v; want port 2181, http_port %s and the version", f, port)
	}
	srv.Close()
	if _, err := web.Probe(context.Background()); !errors.Is(err, agent.ErrRefused) {
		t.Errorf("Probe of a closed server: %v, want agent.ErrRefused", err)
	}
	if _, err := NewWeb("ftp://x", func(context.Context, *http.Client, string) (state, error) { return "", nil }); err == nil {
		t.Error("NewWeb took an ftp URL")
	}
}

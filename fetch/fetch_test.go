package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

func TestGet(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(r.Header.Get("Accept")))
		case "/big":
			w.Write([]byte(strings.Repeat("x", 101)))
		case "/exact":
			w.Write([]byte(strings.Repeat("x", 100)))
		case "/503":
			http.Error(w, "standby\nsecond line", http.StatusServiceUnavailable)
		case "/slow":
			<-release
		}
	}))
	defer srv.Close()
	defer close(release)
	c := srv.Client()
	ctx := context.Background()

	if b, err := Get(ctx, c, srv.URL+"/ok", "application/json", 100); err != nil || string(b) != "application/json" {
		t.Errorf("ok: %q, %v", b, err)
	}
	if b, err := Get(ctx, c, srv.URL+"/exact", "", 100); err != nil || len(b) != 100 {
		t.Errorf("exactly the limit: %d bytes, %v", len(b), err)
	}
	for _, tc := range []struct {
		path, code, want string
	}{
		{"/big", heureka.ETOOLARGE, "larger than 100 bytes"},
		{"/503", heureka.EUNAVAILABLE, `HTTP 503 Service Unavailable: "standby"`},
	} {
		_, err := Get(ctx, c, srv.URL+tc.path, "", 100)
		if heureka.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), srv.URL+tc.path) {
			t.Errorf("%s: %v (code %q), want %s with %q and the URL", tc.path, err, heureka.ErrorCode(err), tc.code, tc.want)
		}
	}

	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := Get(tctx, c, srv.URL+"/slow", "", 100)
	if heureka.ErrorCode(err) != heureka.EUNAVAILABLE || !strings.Contains(err.Error(), "no answer before the deadline") {
		t.Errorf("slow: %v", err)
	}

	// A refused connection names the URL without its password.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := strings.Replace(dead.URL, "http://", "http://u:secret@", 1)
	dead.Close()
	_, err = Get(ctx, c, url+"/x", "", 100)
	if heureka.ErrorCode(err) != heureka.EUNAVAILABLE || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "/x") {
		t.Errorf("refused: %v", err)
	}
}

func TestExcerpt(t *testing.T) {
	for in, want := range map[string]string{
		"":                      `""`,
		"one\ntwo":              `"one"`,
		"\xff\xfe":              `"?"`, // a run of bad bytes is one "?"
		strings.Repeat("é", 70): `"` + strings.Repeat("é", 60) + `"…`,
	} {
		if got := Excerpt([]byte(in)); got != want {
			t.Errorf("Excerpt(%q) = %s, want %s", in, got, want)
		}
	}
}

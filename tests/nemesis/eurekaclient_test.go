package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestEurekaClientFailsOverAsNetflixDoes drives eurekaClient against five
// real servers on loopback: two that answer 503, one that never answers,
// and two that answer what they are told. It checks the order of attempts,
// stickiness, the quarantine (which, with five servers, holds up to two)
// and its reset, the statuses that end a call (404 on a heartbeat), the
// three-attempt limit, and the session's end.
func TestEurekaClientFailsOverAsNetflixDoes(t *testing.T) {
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer unavailable.Close()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer silent.Close()
	told := func() (*httptest.Server, *atomic.Int32) {
		var answer atomic.Int32
		answer.Store(http.StatusOK)
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(int(answer.Load()))
		})), &answer
	}
	good3, answer3 := told()
	defer good3.Close()
	good4, answer4 := told()
	defer good4.Close()

	h, err := newHistory(filepath.Join(t.TempDir(), "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	w := &world{h: h, http: &http.Client{}, rng: &lockedRand{r: rand.New(rand.NewPCG(1, 2))}}
	p1 := &peer{i: 1, base: unavailable.URL + "/eureka"}
	p2 := &peer{i: 2, base: silent.URL + "/eureka"}
	p3 := &peer{i: 3, base: good3.URL + "/eureka"}
	p4 := &peer{i: 4, base: good4.URL + "/eureka"}
	p5 := &peer{i: 5, base: unavailable.URL + "/eureka"}
	c := newEurekaClient(w, "plain-00", []*peer{p1, p2, p3, p4, p5})
	c.attempt = 200 * time.Millisecond
	ctx := context.Background()

	// calls returns the peers the history shows for the calls since mark.
	mark := 0
	calls := func() []string {
		ops := h.snapshot()
		var out []string
		for _, o := range ops[mark:] {
			out = append(out, o.Peer)
		}
		mark = len(ops)
		return out
	}
	renew := func() (int, *peer, error) {
		return c.do(ctx, "renew", "plain-00-000", http.MethodPut, "/apps/X/plain-00-000", nil)
	}
	expect := func(what string, code int, via *peer, err error, wantCode int, wantVia *peer, wantErr bool, wantCalls ...string) {
		t.Helper()
		got := calls()
		if code != wantCode || via != wantVia || (err != nil) != wantErr || len(got) != len(wantCalls) {
			t.Fatalf("%s: status %d via %v, error %v, calls %v; want %d via %v, error %v, calls %v", what, code, via, err, got, wantCode, wantVia, wantErr, wantCalls)
		}
		for i := range got {
			if got[i] != wantCalls[i] {
				t.Fatalf("%s: calls %v, want %v", what, got, wantCalls)
			}
		}
	}

	code, via, err := renew()
	expect("first call", code, via, err, 200, p3, false, "p1", "p2", "p3")
	code, via, err = renew()
	expect("sticky", code, via, err, 200, p3, false, "p3")

	answer3.Store(http.StatusNotFound)
	code, via, err = renew()
	expect("a heartbeat's 404 ends the call", code, via, err, 404, p3, false, "p3")

	answer3.Store(http.StatusInternalServerError)
	code, via, err = renew()
	// The sticky server fails and is not quarantined; p1 and p2 are, so the
	// candidates are p3, p4, p5, and p3 fails again, now quarantined.
	expect("the quarantine is skipped", code, via, err, 200, p4, false, "p3", "p3", "p4")
	code, via, err = renew()
	expect("sticky again", code, via, err, 200, p4, false, "p4")

	answer4.Store(http.StatusInternalServerError)
	code, via, err = renew()
	// Three of five quarantined is past 66%: the quarantine is cleared, the
	// list is tried from its head, and the third attempt is the last.
	expect("three attempts, then give up", code, via, err, 0, nil, true, "p4", "p1", "p2")

	answer3.Store(http.StatusOK)
	c.sessionEnd = time.Now().Add(-time.Second)
	code, via, err = renew()
	expect("a new session starts from the head of the list", code, via, err, 200, p3, false, "p1", "p2", "p3")
}

package debugclock

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// within reports whether got is want give or take slack: the test reads
// the real clock between the clock's reads.
func within(got, want, slack time.Duration) bool { return got >= want-slack && got <= want+slack }

func TestJumpAndSkew(t *testing.T) {
	c := New()
	if off, rate := c.Offset(); off != 0 || rate != 1 {
		t.Fatalf("new clock: offset %s rate %v", off, rate)
	}
	if err := c.Change(-90*time.Second, 1); err != nil {
		t.Fatal(err)
	}
	if off, _ := c.Offset(); !within(off, -90*time.Second, time.Second) {
		t.Fatalf("after a jump back of 90s the offset is %s", off)
	}
	// A rate of 10 from a known anchor: the reading advances ten times the
	// real elapsed time, computed on a fixed real time.
	s := &setting{anchor: time.Unix(1000, 0), at: time.Unix(5000, 0), rate: 10}
	if got := s.read(time.Unix(1002, 0)); !got.Equal(time.Unix(5020, 0)) {
		t.Fatalf("rate 10 after 2 s real: %v, want %v", got, time.Unix(5020, 0))
	}
	// A change of rate does not step the clock.
	before := c.Now()
	if err := c.Change(0, 2); err != nil {
		t.Fatal(err)
	}
	if after := c.Now(); after.Before(before) || !within(after.Sub(before), 0, time.Second) {
		t.Fatalf("a rate change stepped the clock from %v to %v", before, after)
	}
	c.Reset()
	if off, rate := c.Offset(); off != 0 || rate != 1 {
		t.Fatalf("after reset: offset %s rate %v", off, rate)
	}
	for _, bad := range []struct {
		jump time.Duration
		rate float64
	}{{25 * time.Hour, 1}, {-25 * time.Hour, 1}, {0, 0}, {0, 11}} {
		if err := c.Change(bad.jump, bad.rate); err == nil {
			t.Errorf("Change(%s, %v) accepted", bad.jump, bad.rate)
		}
	}
}

func TestHandler(t *testing.T) {
	c := New()
	srv := httptest.NewServer(c)
	defer srv.Close()
	state := func(method, query string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/debug/clock"+query, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := state("POST", "?jump=30s&rate=1.5"); code != 200 || m["rate"] != 1.5 || !within(time.Duration(m["offsetMillis"].(float64))*time.Millisecond, 30*time.Second, time.Second) {
		t.Fatalf("jump 30s rate 1.5: %d %v", code, m)
	}
	if code, m := state("GET", ""); code != 200 || m["rate"] != 1.5 {
		t.Fatalf("GET: %d %v", code, m)
	}
	for _, q := range []string{"?jump=soon", "?rate=fast", "?rate=100", "?jump=48h", "?reset=maybe"} {
		if code, _ := state("POST", q); code != 400 {
			t.Errorf("POST %s: %d, want 400", q, code)
		}
	}
	if code, _ := state("PUT", ""); code != 405 {
		t.Errorf("PUT: %d, want 405", code)
	}
	if code, m := state("POST", "?reset=true"); code != 200 || m["offsetMillis"] != float64(0) || m["rate"] != float64(1) {
		t.Fatalf("reset: %d %v", code, m)
	}
}

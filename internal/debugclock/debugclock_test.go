package debugclock

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestJumpAndSkew(t *testing.T) {
	c := New()
	if off, rate := c.Offset(); off != 0 || rate != 1 {
		t.Fatalf("new clock: offset %s rate %v", off, rate)
	}
	if err := c.Change(-90*time.Second, 1); err != nil {
		t.Fatal(err)
	}
	if off, _ := c.Offset(); off != -90*time.Second {
		t.Fatalf("after a jump back of 90s the offset is %s", off)
	}
	// On fixed real times: a step, then a rate of 10, then a rate of 1
	// again. A change of rate does not step the clock.
	real := func(s int64) time.Time { return time.Unix(1000+s, 0) }
	s := (&setting{real: true, rate: 1}).change(real(0), 30*time.Second, 1)
	if got := s.read(real(2)); !got.Equal(real(32)) {
		t.Fatalf("2 s after a step of 30 s: %v, want %v", got, real(32))
	}
	s = s.change(real(2), 0, 10)
	if got := s.read(real(2)); !got.Equal(real(32)) {
		t.Fatalf("a rate change stepped the clock: %v, want %v", got, real(32))
	}
	if got := s.read(real(4)); !got.Equal(real(52)) {
		t.Fatalf("2 s at 10x: %v, want %v", got, real(52))
	}
	s = s.change(real(4), -time.Minute, 1)
	if got := s.read(real(5)); !got.Equal(real(-7)) {
		t.Fatalf("1 s after a step back of a minute: %v, want %v", got, real(-7))
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
	if code, m := state("POST", "?jump=30s"); code != 200 || m["rate"] != float64(1) || m["offsetMillis"] != float64(30000) {
		t.Fatalf("jump 30s: %d %v", code, m)
	}
	if code, m := state("POST", "?rate=1.5"); code != 200 || m["rate"] != 1.5 {
		t.Fatalf("rate 1.5: %d %v", code, m)
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

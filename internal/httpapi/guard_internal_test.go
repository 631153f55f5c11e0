package httpapi

import (
	"testing"
	"time"
)

// TestRateLimiter checks the token bucket on a fake clock: the burst, the
// refill, the wait it reports, and that idle clients are forgotten.
func TestRateLimiter(t *testing.T) {
	l := newRateLimiter(20, 100)
	now := time.Unix(1000, 0)
	for i := range 100 {
		if ok, _ := l.allow("a", now); !ok {
			t.Fatalf("write %d of the burst refused", i)
		}
	}
	ok, wait := l.allow("a", now)
	if ok || wait != 50*time.Millisecond {
		t.Fatalf("past the burst: %v, wait %v; want refused, 50ms", ok, wait)
	}
	if ok, _ := l.allow("b", now); !ok {
		t.Fatal("another client refused")
	}
	if l.size() != 2 {
		t.Fatalf("%d buckets, want 2", l.size())
	}
	now = now.Add(50 * time.Millisecond)
	if ok, _ := l.allow("a", now); !ok {
		t.Fatal("refused after the wait it asked for")
	}
	// An agent renewing every 10 s, with a status change now and then,
	// never comes near the limit.
	for i := range 1000 {
		now = now.Add(100 * time.Millisecond)
		if ok, _ := l.allow("agent", now); !ok {
			t.Fatalf("a client at 10 writes a second refused at write %d", i)
		}
	}
	if l.size() != 1 {
		t.Fatalf("%d buckets, want only the busy client's: the others filled up and were forgotten", l.size())
	}
	now = now.Add(time.Minute)
	l.allow("c", now)
	if l.size() != 1 {
		t.Fatalf("%d buckets after a quiet minute, want only the new one", l.size())
	}
}

func TestLimitErrorRetryAfter(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "1", 50 * time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2", 30 * time.Second: "30"} {
		if got := (&limitError{retryAfter: d}).retryAfterSeconds(); got != want {
			t.Errorf("Retry-After for %v = %s, want %s", d, got, want)
		}
	}
}

package debugclock

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Bounds of a change: enough for any fault worth injecting, and no
// arithmetic overflow.
const (
	MaxJump = 24 * time.Hour
	MinRate = 0.1
	MaxRate = 10.0
)

// Clock is the wall clock, stepped and skewed on request. The zero value
// is not usable; call New.
type Clock struct {
	cur atomic.Pointer[setting]
}

// setting is one state of the clock: from real time anchor on, the clock
// reads at + (real elapsed) × rate.
type setting struct {
	anchor time.Time // real time of the change
	at     time.Time // what the clock read then
	rate   float64
	real   bool // the wall clock as it is: no step, no skew
}

// New returns a clock that reads the wall clock until changed.
func New() *Clock {
	c := &Clock{}
	c.cur.Store(&setting{real: true, rate: 1})
	return c
}

// Now returns the clock's time, without a monotonic reading, as a stepped
// wall clock would read.
func (c *Clock) Now() time.Time {
	s := c.cur.Load()
	now := time.Now().Round(0)
	if s.real {
		return now
	}
	return s.read(now)
}

func (s *setting) read(real time.Time) time.Time {
	return s.at.Add(time.Duration(float64(real.Sub(s.anchor)) * s.rate))
}

// After waits d in real time (see the package comment).
func (c *Clock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Offset returns how far the clock is from the wall clock now, and its
// rate.
func (c *Clock) Offset() (time.Duration, float64) {
	s := c.cur.Load()
	if s.real {
		return 0, 1
	}
	now := time.Now().Round(0)
	return s.read(now).Sub(now), s.rate
}

// Change steps the clock by jump and from now on runs it at rate (1 is
// real speed, 1.1 ten per cent fast). It refuses a jump beyond MaxJump
// either way and a rate outside [MinRate, MaxRate].
func (c *Clock) Change(jump time.Duration, rate float64) error {
	if jump > MaxJump || jump < -MaxJump {
		return fmt.Errorf("jump %s: want at most %s either way", jump, MaxJump)
	}
	if math.IsNaN(rate) || rate < MinRate || rate > MaxRate {
		return fmt.Errorf("rate %v: want %v to %v (1 is real speed)", rate, MinRate, MaxRate)
	}
	for {
		old := c.cur.Load()
		if c.cur.CompareAndSwap(old, old.change(time.Now().Round(0), jump, rate)) {
			return nil
		}
	}
}

// change returns the setting that follows s at real time now: the
// reading then, stepped by jump, running at rate.
func (s *setting) change(now time.Time, jump time.Duration, rate float64) *setting {
	at := now
	if !s.real {
		at = s.read(now)
	}
	return &setting{anchor: now, at: at.Add(jump), rate: rate}
}

// Reset makes the clock the wall clock again: a step back to real time.
func (c *Clock) Reset() { c.cur.Store(&setting{real: true, rate: 1}) }

// ServeHTTP is the control endpoint. GET answers the clock's state as
// JSON. POST changes it: ?jump=D steps it by the Go duration D (negative
// for back), ?rate=R sets its rate from now on (the rate stays as it was
// when not given), ?reset=true makes it the wall clock again; the answer
// is the new state.
func (c *Clock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		if err := c.apply(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "use GET to read the clock, POST to change it", http.StatusMethodNotAllowed)
		return
	}
	off, rate := c.Offset()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"now": c.Now().UTC().Format(time.RFC3339Nano), "offset": off.String(), "offsetMillis": off.Milliseconds(), "rate": rate})
}

func (c *Clock) apply(r *http.Request) error {
	q := r.URL.Query()
	if v := q.Get("reset"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("reset %q: want true or false", v)
		}
		if on {
			c.Reset()
		}
	}
	var jump time.Duration
	if v := q.Get("jump"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("jump %q: want a Go duration such as 30s or -2m", v)
		}
		jump = d
	}
	_, rate := c.Offset()
	if v := q.Get("rate"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("rate %q: want a number such as 1.5", v)
		}
		rate = f
	}
	if jump == 0 && q.Get("rate") == "" {
		return nil
	}
	return c.Change(jump, rate)
}

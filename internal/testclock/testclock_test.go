package testclock

import (
	"testing"
	"time"
)

func TestClockMovesOnlyWhenAdvanced(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := New(t0)
	if !c.Now().Equal(t0) {
		t.Fatalf("Now %v, want %v", c.Now(), t0)
	}
	c.Advance(90 * time.Second)
	c.Advance(-30 * time.Second)
	if want := t0.Add(time.Minute); !c.Now().Equal(want) {
		t.Fatalf("after +90 s and -30 s: %v, want %v", c.Now(), want)
	}
}

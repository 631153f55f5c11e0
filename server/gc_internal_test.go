package server

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCollectLessInStorms plays a storm check by check: the target is
// raised at the first storm check, kept through a dip shorter than the
// calm, put back after the calm, raised again by a second storm and put
// back when the context ends in the middle of it.
func TestCollectLessInStorms(t *testing.T) {
	script := []bool{false, true, true, false, true, false, false, false, false, true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	checks := 0
	storming := func() bool {
		s := script[checks]
		if checks++; checks == len(script) {
			cancel() // the last check is still acted on
		}
		return s
	}
	current := 50
	var sets []int
	set := func(p int) int {
		sets = append(sets, p)
		prev := current
		current = p
		return prev
	}
	collectLessInStorms(ctx, storming, 100, time.Millisecond, 3, set, slog.New(slog.DiscardHandler))
	// check 2 raises; check 4's dip is one calm check, not three; checks
	// 6, 7, 8 are three in a row, so check 8 puts 50 back; check 10
	// raises again, and the end of ctx puts 50 back.
	if want := []int{100, 50, 100, 50}; !slices.Equal(sets, want) {
		t.Fatalf("targets set %v, want %v", sets, want)
	}
	if current != 50 {
		t.Fatalf("target left at %d, want the 50 it found", current)
	}
}

func TestStormGCPercentMustNotBeNegative(t *testing.T) {
	c := DefaultConfig()
	c.StormGCPercent = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "StormGCPercent -1") {
		t.Fatalf("Validate with StormGCPercent -1: %v, want an error naming it", err)
	}
	c.StormGCPercent = 100
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate with StormGCPercent 100: %v", err)
	}
}

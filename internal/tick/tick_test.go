package tick

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestEveryRunsOnThePeriodAndOnAKick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		kick := make(chan struct{})
		var at []time.Duration
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			Every(ctx, time.Second, kick, func() { at = append(at, time.Since(start)) })
		}()
		time.Sleep(2500 * time.Millisecond)
		kick <- struct{}{}
		synctest.Wait()
		time.Sleep(time.Second)
		cancel()
		<-done
		want := []time.Duration{time.Second, 2 * time.Second, 2500 * time.Millisecond, 3 * time.Second}
		if len(at) != len(want) {
			t.Fatalf("rounds at %v, want %v", at, want)
		}
		for i := range want {
			if at[i] != want[i] {
				t.Fatalf("rounds at %v, want %v", at, want)
			}
		}
	})
}

func TestWaitReportsWhatWokeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.NewTimer(time.Minute)
		kick := make(chan struct{}, 1)
		kick <- struct{}{}
		if !Wait(ctx, timer, kick) {
			t.Fatal("a kick did not wake Wait")
		}
		start := time.Now()
		if !Wait(ctx, timer, nil) || time.Since(start) != time.Minute {
			t.Fatalf("the timer woke Wait after %v, want 1m", time.Since(start))
		}
		timer.Reset(time.Minute)
		cancel()
		if Wait(ctx, timer, kick) {
			t.Fatal("Wait reported true after ctx was done")
		}
	})
}

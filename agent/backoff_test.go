package agent

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	a := &Agent{cfg: DefaultConfig()}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 30 * time.Second, 50: 30 * time.Second} {
		for range 50 {
			if got := a.backoff(n); got < want/2 || got > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, got, want/2, want)
			}
		}
	}
}

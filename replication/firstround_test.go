package replication_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka/replication"
)

// TestEveryPeerReachedAtStart: with nothing written, every peer is called,
// and so reachable or not, right after the start-up sync, not one
// anti-entropy interval later. The start-up sync alone reaches only the
// peer it copies from; the dashboard showed the others as "no contact yet"
// for the first 30 s of a demo.
func TestEveryPeerReachedAtStart(t *testing.T) { synctest.Test(t, testEveryPeerReachedAtStart) }

func testEveryPeerReachedAtStart(t *testing.T) {
	nodes := startCluster(t, 3, options{repl: func(c *replication.Config) {
		c.AntiEntropyInterval = time.Hour
	}})
	mustBeReady(t, 0, nodes...)
	for _, nd := range nodes {
		after(t, 0, nd.name+" to have reached both other peers", func() bool {
			reached := 0
			for _, p := range nd.rep.Status() {
				if !p.Self && p.Reachable {
					reached++
				}
			}
			return reached == 2
		})
	}
}

package replication

import (
	"testing"

	"github.com/heureka-project/heureka"
)

// Between copies with the same lastDirtyTimestamp, the later change wins,
// unless it is dated beyond the limit (a peer's clock far ahead).
func TestNewerIgnoresChangesFromTheFuture(t *testing.T) {
	local := &heureka.Instance{ID: "a", Status: heureka.StatusUp, LastDirtyTimestamp: 100, LastUpdatedTimestamp: 1000}
	remote := func(updated int64) *heureka.Instance {
		return &heureka.Instance{ID: "a", Status: heureka.StatusOutOfService, OverriddenStatus: heureka.StatusOutOfService,
			LastDirtyTimestamp: 100, LastUpdatedTimestamp: updated}
	}
	const limit = 5000
	for _, c := range []struct {
		updated int64
		want    bool
	}{{999, false}, {2000, true}, {limit, true}, {limit + 1, false}} {
		if got := newer(remote(c.updated), local, limit); got != c.want {
			t.Errorf("remote changed at %d (local at 1000, limit %d): newer %v, want %v", c.updated, limit, got, c.want)
		}
	}
	// A later lastDirtyTimestamp wins whatever the change times say.
	r := remote(1)
	r.LastDirtyTimestamp = 101
	if !newer(r, local, limit) {
		t.Error("a copy with a later lastDirtyTimestamp is not newer")
	}
}

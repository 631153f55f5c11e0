package client

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
)

func watchInstance(app, id string, st heureka.Status, md ...string) *heureka.Instance {
	return &heureka.Instance{App: app, ID: id, HostName: id + ".example.net", IPAddr: "10.0.0.1", Status: st,
		DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn}, Metadata: heureka.NewMetadata(md...)}
}

func watchData(t *testing.T, seq uint64, action heureka.ActionType, in *heureka.Instance) []byte {
	t.Helper()
	b, err := json.Marshal(heureka.WatchChange{Seq: seq, Action: action, Cause: heureka.CauseRegister, App: in.App, ID: in.ID,
		Instance: eureka.EncodeInstance(eureka.JSON, in)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func changesOf(cs []Change) string {
	s := ""
	for _, c := range cs {
		s += fmt.Sprintf("%s %s/%s;", c.Action, c.App, c.ID)
	}
	return s
}

// TestWatchView: a view follows the stream's changes, and a resync
// reports exactly what was missed, deletions first, of the applications
// it follows.
func TestWatchView(t *testing.T) {
	a1 := watchInstance("A", "a1", heureka.StatusUp, "rack", "/r1")
	a2 := watchInstance("A", "a2", heureka.StatusUp)
	b1 := watchInstance("B", "b1", heureka.StatusUp)
	v := NewWatchView("A")
	if n := v.Reset(&heureka.Applications{Apps: []*heureka.Application{
		{Name: "A", Instances: []*heureka.Instance{a1, a2}}, {Name: "B", Instances: []*heureka.Instance{b1}}}}); n != 2 {
		t.Fatalf("Reset holds %d instances, want A's 2", n)
	}

	// a1's agent registers it again, DOWN: the server says ADDED, as
	// Eureka does for every registration; to the view it is a change.
	down := watchInstance("A", "a1", heureka.StatusDown, "rack", "/r1")
	c, in, old, err := v.Apply(watchData(t, 7, heureka.ActionAdded, down))
	if err != nil || c.Seq != 7 || c.Action != heureka.ActionModified || in.Status != heureka.StatusDown || old != a1 {
		t.Fatalf("Apply of a known instance registered again: %+v %v %v %v; want MODIFIED", c, in, old, err)
	}
	a3 := watchInstance("A", "a3", heureka.StatusUp)
	if c, _, old, err := v.Apply(watchData(t, 8, heureka.ActionModified, a3)); err != nil || old != nil || c.Action != heureka.ActionAdded {
		t.Fatalf("Apply of an instance the view did not hold: %s %v %v; want ADDED", c.Action, old, err)
	}
	gone := watchInstance("A", "gone", heureka.StatusUp)
	if c, _, old, err := v.Apply(watchData(t, 9, heureka.ActionDeleted, gone)); err != nil || old != nil || c.Action != heureka.ActionDeleted {
		t.Fatalf("Apply of a deletion: %s %v %v; want DELETED as sent", c.Action, old, err)
	}
	if _, _, _, err := v.Apply([]byte(`{"seq":`)); err == nil {
		t.Error("a change that is not JSON gave no error")
	}

	// Missed: a2 gone, a3's metadata changed, a4 new, a1 only renewed
	// (its lease times moved), and B, which the view does not follow.
	renewed := watchInstance("A", "a1", heureka.StatusDown, "rack", "/r1")
	renewed.Lease.LastRenewalTimestamp = 99
	a3b := watchInstance("A", "a3", heureka.StatusUp, "disk_used", "5")
	a4 := watchInstance("A", "a4", heureka.StatusStarting)
	got := v.Resync(&heureka.Applications{Apps: []*heureka.Application{
		{Name: "A", Instances: []*heureka.Instance{renewed, a3b, a4}}, {Name: "B"}}})
	if want := "DELETED A/a2;MODIFIED A/a3;ADDED A/a4;"; changesOf(got) != want {
		t.Errorf("Resync = %s, want %s", changesOf(got), want)
	}
	if got[0].Old != a2 || got[1].Old.Metadata.Len() != 0 || got[1].New != a3b || got[2].New != a4 {
		t.Errorf("Resync's instances: %+v", got)
	}
	if again := v.Resync(&heureka.Applications{Apps: []*heureka.Application{{Name: "A", Instances: []*heureka.Instance{renewed, a3b, a4}}}}); len(again) != 0 {
		t.Errorf("a second resync of the same listing: %s", changesOf(again))
	}
}

package client

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
)

// WatchView is what a follower of GET /v1/watch has seen: every instance
// of the applications it follows, as the last change left it. It keeps
// them so that, when the server cannot resume the stream (a resync), a
// fresh listing can be told apart from what was seen, and the changes
// missed meanwhile reported. `heureka watch` prints from one.
//
// A WatchView is not safe for concurrent use; Follow calls Sync and Handle
// from one goroutine.
type WatchView struct {
	apps  []string                     // upper case; empty means every application
	known map[string]*heureka.Instance // by watchKey
}

// NewWatchView returns an empty view of apps (every application when
// none are given), named as Eureka names them (upper case).
func NewWatchView(apps ...string) *WatchView {
	return &WatchView{apps: apps, known: map[string]*heureka.Instance{}}
}

func watchKey(app, id string) string { return app + "\x00" + id }

// Reset replaces what the view holds with listing, and returns how many
// instances it now holds.
func (v *WatchView) Reset(listing *heureka.Applications) int {
	v.known = v.of(listing)
	return len(v.known)
}

// Resync replaces what the view holds with listing, and returns the
// changes that were missed: every instance gone (DELETED), then every
// instance new (ADDED) or whose status, host name or metadata differ
// (MODIFIED, what a watch line shows), each group sorted by application
// and ID.
func (v *WatchView) Resync(listing *heureka.Applications) []Change {
	now := v.of(listing)
	var out []Change
	for _, k := range slices.Sorted(maps.Keys(v.known)) {
		if _, ok := now[k]; !ok {
			old := v.known[k]
			out = append(out, Change{Action: heureka.ActionDeleted, App: old.App, ID: old.ID, Old: old})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(now)) {
		in, old := now[k], v.known[k]
		switch {
		case old == nil:
			out = append(out, Change{Action: heureka.ActionAdded, App: in.App, ID: in.ID, New: in})
		case old.Status != in.Status || !old.Metadata.Equal(in.Metadata) || old.HostName != in.HostName:
			out = append(out, Change{Action: heureka.ActionModified, App: in.App, ID: in.ID, Old: old, New: in})
		}
	}
	v.known = now
	return out
}

// Apply takes one change event's data from the stream (a
// heureka.WatchChange) into the view. It returns the change, its instance
// as the change left it (for a deletion, as it was deleted), and the
// instance it replaced (nil when there was none).
//
// The change's Action is the view's, as Resync's are: ADDED for an
// instance the view did not hold, MODIFIED for one it did, DELETED as
// sent. The server marks every registration ADDED, as Eureka's deltas do,
// also an agent's registration again with a new status, which to a
// follower that already holds the instance is a change of it.
func (v *WatchView) Apply(data []byte) (c heureka.WatchChange, in, old *heureka.Instance, err error) {
	if err := json.Unmarshal(data, &c); err != nil {
		return c, nil, nil, fmt.Errorf("the watch stream sent a change that is not JSON: %w", err)
	}
	in, err = eureka.DecodeServerInstance(c.Instance, eureka.JSON)
	if err != nil {
		return c, nil, nil, fmt.Errorf("the watch stream sent change %d with an unreadable instance: %w", c.Seq, err)
	}
	k := watchKey(c.App, c.ID)
	old = v.known[k]
	switch {
	case c.Action == heureka.ActionDeleted:
		delete(v.known, k)
		return c, in, old, nil
	case old != nil:
		c.Action = heureka.ActionModified
	default:
		c.Action = heureka.ActionAdded
	}
	v.known[k] = in
	return c, in, old, nil
}

// of indexes listing's instances of the view's applications.
func (v *WatchView) of(listing *heureka.Applications) map[string]*heureka.Instance {
	now := map[string]*heureka.Instance{}
	for _, a := range listing.Apps {
		if len(v.apps) > 0 && !slices.Contains(v.apps, a.Name) {
			continue
		}
		for _, in := range a.Instances {
			now[watchKey(in.App, in.ID)] = in
		}
	}
	return now
}

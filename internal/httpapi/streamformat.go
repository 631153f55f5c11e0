package httpapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// What the watch and event streams send, as SSE frames of the root
// package's vocabulary (heureka.WatchChange, heureka.Event): the encoding
// only; watch.go serves the streams.

// appendProgress tells a watcher that nothing up to seq concerns it, so
// that the ids it sees stay contiguous and a real gap stays detectable.
func appendProgress(buf []byte, seq uint64) []byte {
	buf = append(buf, "id: "...)
	buf = strconv.AppendUint(buf, seq, 10)
	buf = append(buf, "\nevent: progress\ndata: {\"seq\":"...)
	buf = strconv.AppendUint(buf, seq, 10)
	return append(buf, "}\n\n"...)
}

// changeFrame is the SSE frame of one change on the watch stream.
func changeFrame(c registry.Change) []byte {
	b := append([]byte("id: "), strconv.FormatUint(c.Seq, 10)...)
	b = append(b, "\nevent: change\ndata: "...)
	b = append(b, encodeChange(c)...)
	return append(b, '\n', '\n')
}

// encodeChange renders a change as the watch stream's data line: the
// instance is Eureka's JSON, as in /eureka/apps.
func encodeChange(c registry.Change) []byte {
	in := c.Instance()
	b, err := json.Marshal(heureka.WatchChange{
		Seq: c.Seq, Action: in.ActionType, Cause: c.Cause, Time: c.Time.UnixMilli(),
		App: in.App, ID: in.ID, Instance: eureka.AppendInstance(nil, eureka.JSON, in),
	})
	if err != nil { // the codec wrote invalid JSON: a bug, not an input
		panic(fmt.Sprintf("httpapi: encoding change %d: %v", c.Seq, err))
	}
	return b
}

// causedBy says who is behind each cause.
var causedBy = map[heureka.Cause]string{
	heureka.CauseRegister:        heureka.ByInstance,
	heureka.CauseStatus:          heureka.ByOperator,
	heureka.CauseOverrideDeleted: heureka.ByOperator,
	heureka.CauseMetadata:        heureka.ByOperator,
	heureka.CauseRenewStatus:     heureka.ByRegistry,
}

// eventsOf turns one change into the typed events a monitor cares about.
func eventsOf(c registry.Change) []heureka.Event {
	if n := c.Notice; n != nil {
		return []heureka.Event{{Seq: c.Seq, Type: n.Kind, Time: c.Time.UnixMilli(), By: heureka.ByRegistry,
			Peer: n.Peer, Cause: n.Detail}}
	}
	in := c.Instance()
	base := heureka.Event{Seq: c.Seq, Time: c.Time.UnixMilli(), App: in.App, ID: in.ID, HostName: in.HostName, Status: in.Status}
	by := causedBy[c.Cause]
	switch c.Cause {
	case heureka.CauseCancel:
		e := base
		e.Type, e.By = heureka.EventCancelled, heureka.ByInstance
		return []heureka.Event{e}
	case heureka.CauseExpired:
		e := base
		e.Type, e.By = heureka.EventExpired, heureka.ByRegistry
		e.Cause = fmt.Sprintf("no renewal for %d s (lease %d s, last renewal at %s)",
			(in.Lease.EvictionTimestamp-in.Lease.LastRenewalTimestamp)/1000, in.Lease.DurationSecs,
			time.UnixMilli(in.Lease.LastRenewalTimestamp).UTC().Format(time.RFC3339))
		return []heureka.Event{e}
	}
	if c.PrevStatus == "" {
		e := base
		e.Type, e.By, e.Metadata = heureka.EventRegistered, by, in.Metadata
		return []heureka.Event{e}
	}
	var out []heureka.Event
	if c.PrevStatus != in.Status {
		e := base
		e.Type, e.Old, e.By = heureka.EventStatusChanged, c.PrevStatus, by
		out = append(out, e)
	}
	if len(c.Changed) > 0 {
		e := base
		e.Type, e.By, e.Keys, e.Metadata = heureka.EventMetadataChanged, by, c.Changed, in.Metadata
		out = append(out, e)
	}
	return out
}

func encodeEvents(c registry.Change) []byte {
	var b []byte
	for _, e := range eventsOf(c) {
		data, _ := json.Marshal(e)
		b = fmt.Appendf(b, "id: %d\nevent: %s\ndata: %s\n\n", c.Seq, e.Type, data)
	}
	return b
}

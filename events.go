package heureka

import "encoding/json"

// This file is the vocabulary of heureka's own streams: why an instance
// changed (Cause), what a monitor is told about it (EventType, Event), and
// the data of a change on the watch stream (WatchChange). The server encodes
// these types and the client decodes them; neither declares its own.

// Cause says why an instance changed in the registry's change log.
type Cause string

const (
	CauseRegister        Cause = "register"         // the instance registered (or registered again)
	CauseStatus          Cause = "status"           // an operator set a status override
	CauseOverrideDeleted Cause = "override-deleted" // an operator cleared the override
	CauseMetadata        Cause = "metadata"         // the metadata was updated
	CauseRenewStatus     Cause = "renew-status"     // a renewal carried a new status
	CauseCancel          Cause = "cancel"           // the instance deregistered
	CauseExpired         Cause = "expired"          // its lease ran out and it was evicted
	CauseSync            Cause = "sync"             // copied from a peer by a registry sync
	// CauseResync is not in the change log: a follower that re-read the
	// whole registry reports the differences it found with it.
	CauseResync Cause = "resync"
)

// EventType names one event of GET /v1/events, and the SSE event it is
// sent as.
type EventType string

const (
	EventRegistered              EventType = "registered"
	EventStatusChanged           EventType = "status_changed"
	EventMetadataChanged         EventType = "metadata_changed"
	EventCancelled               EventType = "cancelled"
	EventExpired                 EventType = "expired"
	EventSelfPreservationEntered EventType = "self_preservation_entered"
	EventSelfPreservationLeft    EventType = "self_preservation_left"
	EventPeerLost                EventType = "peer_lost"
	EventPeerFound               EventType = "peer_found"
)

// IsPeer reports whether t is about a peer rather than an instance.
func (t EventType) IsPeer() bool { return t == EventPeerLost || t == EventPeerFound }

// Who caused an event (Event.By).
const (
	ByInstance = "instance"
	ByOperator = "operator"
	ByRegistry = "registry"
)

// Event is one typed event of GET /v1/events, for monitors and alerting.
// Its JSON is the data line of the SSE event; the event's SSE type is Type
// and its id is Seq.
type Event struct {
	Seq      uint64    `json:"seq"`
	Type     EventType `json:"type"`
	Time     int64     `json:"time"` // ms since the epoch
	App      string    `json:"app,omitempty"`
	ID       string    `json:"id,omitempty"`
	Peer     string    `json:"peer,omitempty"` // the peer's URL: peer_lost, peer_found
	HostName string    `json:"hostName,omitempty"`
	Status   Status    `json:"status,omitempty"`
	Old      Status    `json:"oldStatus,omitempty"`
	By       string    `json:"by,omitempty"`   // ByInstance, ByOperator or ByRegistry
	Keys     []string  `json:"keys,omitempty"` // metadata keys added, changed or removed
	// Cause says why, in words: the lease that ran out, the reason
	// self-preservation engaged, or the error that lost a peer.
	Cause    string   `json:"cause,omitempty"`
	Metadata Metadata `json:"metadata,omitzero"`
}

// WatchChange is the data of one "change" event of GET /v1/watch: an
// instance after a change, in Eureka's JSON (as in /eureka/apps).
type WatchChange struct {
	Seq      uint64          `json:"seq"`
	Action   ActionType      `json:"action"` // ADDED, MODIFIED, DELETED
	Cause    Cause           `json:"cause"`
	Time     int64           `json:"time"` // ms since the epoch
	App      string          `json:"app"`
	ID       string          `json:"id"`
	Instance json.RawMessage `json:"instance"`
}

// Resync is the data of a "resync" event on either stream: the server
// cannot resume from the version asked for; fetch the registry (at Version
// or later) and follow again from there.
type Resync struct {
	Reason  string `json:"reason"`
	Version uint64 `json:"version"`
}

// Stream event names, besides the EventTypes of /v1/events.
const (
	StreamHello    = "hello"    // the first event: {"version": N}, the server's latest version
	StreamChange   = "change"   // a WatchChange
	StreamProgress = "progress" // {"seq": N}: nothing up to N concerns this stream
	StreamResync   = "resync"   // a Resync; the stream then ends
)

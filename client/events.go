package client

import "io"

// Event is one Server-Sent Event of a heureka stream (GET /v1/watch,
// GET /v1/events): its type ("message" when the stream names none), its id
// (the registry version) and its data.
type Event struct {
	Type string
	ID   string
	Data []byte
}

// EventReader reads Server-Sent Events from a stream, for programs that
// follow /v1/watch or /v1/events themselves (the CLI, the alert forwarder).
// The Cache does this for discovery clients.
type EventReader struct{ r *sseReader }

// NewEventReader reads events from r; one line, and one event's data, may
// hold at most maxBytes.
func NewEventReader(r io.Reader, maxBytes int) *EventReader {
	return &EventReader{r: newSSEReader(r, maxBytes, nil)}
}

// Next returns the next event, or the error that ended the stream (io.EOF
// for a clean end; io.ErrUnexpectedEOF for a stream cut mid-event).
func (r *EventReader) Next() (Event, error) {
	ev, err := r.r.next()
	if err != nil {
		return Event{}, err
	}
	return Event{Type: ev.typ, ID: ev.id, Data: ev.data}, nil
}

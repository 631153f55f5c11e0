package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	typ  string // "message" when the stream names none
	id   string
	data []byte // data lines joined by "\n"
}

// sseReader reads Server-Sent Events (the text/event-stream format of the
// HTML standard): "field: value" lines, a blank line ending each event,
// lines starting with ':' as comments. Lines end in LF or CRLF. An event
// without a data line is not dispatched; an event cut off by the end of the
// stream is dropped. retry fields are ignored.
type sseReader struct {
	r      *bufio.Reader
	max    int    // bound on one line and on one event's data
	onLine func() // called for every line read, comments included
	line   []byte
}

var errEventTooLarge = errors.New("watch event is larger than the limit")

func newSSEReader(r io.Reader, max int, onLine func()) *sseReader {
	if onLine == nil {
		onLine = func() {}
	}
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), max: max, onLine: onLine}
}

// buffered reports whether more input is already in memory: while it is,
// the caller may hold back work that is cheaper done once per burst.
func (s *sseReader) buffered() bool { return s.r.Buffered() > 0 }

// next returns the next event, or the error that ended the stream (io.EOF
// for a clean end).
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		s.onLine()
		if len(line) == 0 {
			if !hasData {
				ev = sseEvent{id: ev.id}
				continue
			}
			if ev.typ == "" {
				ev.typ = "message"
			}
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.typ = string(value)
		case "data":
			if hasData {
				ev.data = append(ev.data, '\n')
			}
			ev.data = append(ev.data, value...)
			hasData = true
			if len(ev.data) > s.max {
				return sseEvent{}, errEventTooLarge
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id = string(value)
			}
		}
	}
}

// readLine returns the next line without its end of line; the slice is
// valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if len(s.line) > s.max+2 {
			return nil, errEventTooLarge
		}
		switch {
		case err == nil:
			l := s.line[:len(s.line)-1]
			if n := len(l); n > 0 && l[n-1] == '\r' {
				l = l[:n-1]
			}
			return l, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(s.line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

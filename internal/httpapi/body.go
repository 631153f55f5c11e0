package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/accept"
)

// readBody reads r's body, inflating it when Content-Encoding is gzip. Both
// the body as sent and the inflated body are bounded by MaxBodyBytes; over
// that the error is ETOOLARGE.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.cfg.MaxBodyBytes
	tooLarge := func() error {
		return heureka.Errorf(heureka.ETOOLARGE, "request body is larger than the limit of %s", formatBytes(limit))
	}
	if r.ContentLength > limit {
		return nil, tooLarge()
	}
	raw := http.MaxBytesReader(w, r.Body, limit)
	defer raw.Close()

	var src io.Reader = raw
	inflating := false
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			if isMaxBytes(err) {
				return nil, tooLarge()
			}
			return nil, heureka.Errorf(heureka.EINVALID, "request body is not valid gzip: %v", err)
		}
		defer zr.Close()
		src, inflating = zr, true
	default:
		return nil, heureka.Errorf(heureka.EINVALID, "unsupported Content-Encoding %q: send identity or gzip", enc)
	}

	// Read one byte past the limit so that an inflated body that is too
	// large is told apart from one that is exactly at the limit. A body
	// whose length is declared is read into a buffer of that size (plus
	// the byte that tells a longer body apart), not grown by doubling.
	var b []byte
	var err error
	if n := r.ContentLength; n > 0 && !inflating {
		b = make([]byte, 0, n+1)
		b, err = readAllInto(b, io.LimitReader(src, limit+1))
	} else {
		b, err = io.ReadAll(io.LimitReader(src, limit+1))
	}
	switch {
	case isMaxBytes(err):
		return nil, tooLarge()
	case err != nil && inflating:
		return nil, heureka.Errorf(heureka.EINVALID, "request body is not valid gzip: %v", err)
	case err != nil:
		return nil, heureka.Errorf(heureka.EINVALID, "reading request body: %v", err)
	case int64(len(b)) > limit:
		return nil, heureka.Errorf(heureka.ETOOLARGE, "request body inflates to more than the limit of %s", formatBytes(limit))
	}
	return b, nil
}

// readAllInto is io.ReadAll into b's spare capacity, growing it only if
// the reader holds more.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// checkUTF8 refuses a JSON body that is not UTF-8 (RFC 8259 §8.1).
// encoding/json would replace the bad bytes with U+FFFD and accept it, so
// that a registration would be stored with names nobody sent. XML bodies
// may declare another encoding and are left to the XML decoder.
func checkUTF8(body []byte) error {
	if !utf8.Valid(body) {
		return heureka.Errorf(heureka.EINVALID, "request body is not valid UTF-8, as JSON must be")
	}
	return nil
}

func isMaxBytes(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// payload is an encoded response body, in one of two forms. A listing is
// members: gzip members that, written one after another, are the gzipped
// body (RFC 1952 §2.2); a client that does not take gzip gets them inflated
// as they are written, so no plain copy is kept. A small answer made per
// request (one instance) is body, gzipped on demand.
type payload struct {
	format eureka.Format

	members         [][]byte
	gzLen, plainLen int

	body   []byte
	gzOnce sync.Once
	gz     []byte
}

func (p *payload) gzipped() []byte {
	p.gzOnce.Do(func() { p.gz = newPart(p.body).gz })
	return p.gz
}

// writePayload answers r with p: Content-Type exactly application/json or
// application/xml, gzipped when Accept-Encoding mentions gzip, and always a
// Content-Length.
func writePayload(w http.ResponseWriter, r *http.Request, code int, p *payload) {
	h := w.Header()
	h.Set("Content-Type", p.format.ContentType())
	h.Add("Vary", "Accept-Encoding")
	gz := accept.Gzip(r)
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	if p.members == nil {
		body := p.body
		if gz {
			body = p.gzipped()
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(code)
		_, _ = w.Write(body)
		return
	}
	if gz {
		h.Set("Content-Length", strconv.Itoa(p.gzLen))
	} else {
		h.Set("Content-Length", strconv.Itoa(p.plainLen))
	}
	w.WriteHeader(code)
	if r.Method == http.MethodHead {
		return
	}
	if gz {
		writeMembers(w, p.members)
		return
	}
	readers := make([]io.Reader, len(p.members))
	for i, m := range p.members {
		readers[i] = bytes.NewReader(m)
	}
	// The members were written by newPart, so the only error left is a
	// client that went away.
	if zr, err := gzip.NewReader(io.MultiReader(readers...)); err == nil {
		_, _ = io.Copy(w, zr)
	}
}

// writeBuffers holds the buffers writeMembers gathers members in.
var writeBuffers = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// writeMembers writes members gathered into writes of 64 KiB: a listing has
// two members per block, and a write each would be a system call each.
func writeMembers(w io.Writer, members [][]byte) {
	buf := writeBuffers.Get().(*[64 << 10]byte)
	defer writeBuffers.Put(buf)
	n := 0
	for _, m := range members {
		for len(m) > 0 {
			c := copy(buf[n:], m)
			n += c
			m = m[c:]
			if n == len(buf) {
				if _, err := w.Write(buf[:n]); err != nil {
					return // the client went away
				}
				n = 0
			}
		}
	}
	_, _ = w.Write(buf[:n])
}

// writeEmpty answers with code and no body, Content-Length 0 (Eureka's
// heartbeat and cancel answers; the Java client parses any body it gets).
func writeEmpty(w http.ResponseWriter, code int) {
	// net/http sends "Content-Length: 0" itself for an answer that ends
	// without a body (none for 204, whose answers have no length); setting
	// it here would cost a header map for every renewal.
	w.WriteHeader(code)
}

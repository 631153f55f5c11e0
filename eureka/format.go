package eureka

import (
	"bytes"

	"github.com/heureka-project/heureka"
)

// Format is a Eureka wire format.
type Format int

// The two formats Eureka servers speak. XML is the default: it is what a
// client gets when it does not ask for JSON.
const (
	JSON Format = iota
	XML
)

// FormatFor picks the response format from an Accept header the way Eureka
// servers do: JSON if and only if the header contains "json" (in any case),
// XML otherwise, including when the header is empty or "*/*".
func FormatFor(accept string) Format {
	if containsFold(accept, "json") {
		return JSON
	}
	return XML
}

// ContentType is the exact media type to send with a body in f, without a
// charset: Java clients accept no other spelling.
func (f Format) ContentType() string {
	if f == JSON {
		return "application/json"
	}
	return "application/xml"
}

// String returns "json" or "xml".
func (f Format) String() string {
	if f == JSON {
		return "json"
	}
	return "xml"
}

// SniffFormat tells the format of a request body: a first non-space byte of
// '{' means JSON and '<' means XML, whatever the Content-Type says; otherwise
// a contentType containing "xml" or "json" decides. A body that is empty or
// fits neither rule is an EINVALID error.
func SniffFormat(body []byte, contentType string) (Format, error) {
	body = trimLeadingSpace(body)
	if len(body) > 0 {
		switch body[0] {
		case '{':
			return JSON, nil
		case '<':
			return XML, nil
		}
	}
	switch {
	case containsFold(contentType, "json"):
		return JSON, nil
	case containsFold(contentType, "xml"):
		return XML, nil
	case len(body) == 0:
		return 0, heureka.Errorf(heureka.EINVALID, "empty body")
	}
	return 0, heureka.Errorf(heureka.EINVALID,
		"cannot tell the body's format: it starts with %q, not '{' or '<', and Content-Type %q names neither JSON nor XML",
		prefix(body, 16), contentType)
}

// utf8BOM is skipped before a body, as some editors and Windows tools write it.
var utf8BOM = []byte("\xef\xbb\xbf")

// trimLeadingSpace drops a UTF-8 byte-order mark and JSON/XML white space
// from the start of b.
func trimLeadingSpace(b []byte) []byte {
	b = bytes.TrimPrefix(b, utf8BOM)
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// containsFold reports whether s contains the lower-case ASCII word sub,
// ignoring ASCII case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && lowerASCII(s[i+j]) == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// prefix returns at most n bytes of b as a string, for error messages.
func prefix(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

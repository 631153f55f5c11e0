package eureka

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/heureka-project/heureka"
)

// maxXMLDepth bounds element nesting. Eureka documents are six levels deep
// (applications/application/instance/dataCenterInfo/metadata/key); the
// bound keeps a hostile body from building a deep tree.
const maxXMLDepth = 64

// xmlElem is an element being read.
type xmlElem struct {
	name     xml.Name // as written: Space is the prefix, not a namespace URL
	metadata bool     // a <metadata> element: its children are map entries
	attrs    []xml.Attr
	kids     map[string]any
	text     []byte
}

// parseXML reads body, whose root element must be <root>, into the generic
// tree described in decode.go. Element names are unescaped as XStream
// escapes them ("__" is '_', "_-" is '$'). A <metadata> element always
// becomes an object of its children's text, its attributes ignored (the
// empty-map marker is one). Document type declarations are refused, so no
// entity is ever expanded.
func parseXML(body []byte, root string) (any, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = charsetReader
	var (
		stack  []*xmlElem
		result any
		done   bool
	)
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, xmlError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if done {
				return nil, heureka.Errorf(heureka.EINVALID, "malformed XML: element <%s> after the root element <%s> ended", rawName(t.Name), root)
			}
			if len(stack) == 0 && (t.Name.Space != "" || t.Name.Local != root) {
				return nil, heureka.Errorf(heureka.EINVALID, "XML root element is <%s>, want <%s>", rawName(t.Name), root)
			}
			if len(stack) >= maxXMLDepth {
				return nil, heureka.Errorf(heureka.EINVALID, "XML is nested more than %d elements deep", maxXMLDepth)
			}
			if n := len(stack); n > 0 && stack[n-1].metadata {
				if t.Name.Space != "" || !ValidXMLMetadataKey(unescapeName(t.Name.Local)) {
					return nil, heureka.Errorf(heureka.EINVALID,
						"metadata element <%s> is not a usable key: keys in XML are ASCII letters, digits, '.', '-', '_' and '$', not starting with a digit, '.' or '-'",
						rawName(t.Name))
				}
			}
			stack = append(stack, &xmlElem{
				name:     t.Name,
				metadata: t.Name.Space == "" && t.Name.Local == "metadata",
				attrs:    t.Attr,
			})
		case xml.EndElement:
			n := len(stack)
			if n == 0 {
				return nil, heureka.Errorf(heureka.EINVALID, "malformed XML at line %d: unexpected </%s>", lineOf(body, d.InputOffset()), rawName(t.Name))
			}
			if stack[n-1].name != t.Name {
				return nil, heureka.Errorf(heureka.EINVALID, "malformed XML at line %d: </%s> closes <%s>",
					lineOf(body, d.InputOffset()), rawName(t.Name), rawName(stack[n-1].name))
			}
			e := stack[n-1]
			stack = stack[:n-1]
			v := e.value()
			if n == 1 {
				result, done = v, true
				continue
			}
			stack[n-2].add(unescapeName(rawName(e.name)), v)
		case xml.CharData:
			if n := len(stack); n > 0 {
				stack[n-1].text = append(stack[n-1].text, t...)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, heureka.Errorf(heureka.EINVALID, "malformed XML: text %q outside the root element", prefix(bytes.TrimSpace(t), 16))
			}
		case xml.Directive:
			return nil, heureka.Errorf(heureka.EINVALID, "XML with a DOCTYPE or other <!...> declaration is not accepted")
		case xml.ProcInst, xml.Comment:
		}
	}
	if len(stack) > 0 {
		return nil, heureka.Errorf(heureka.EINVALID, "malformed XML: the body ends inside <%s>", rawName(stack[len(stack)-1].name))
	}
	if !done {
		return nil, heureka.Errorf(heureka.EINVALID, "XML body has no root element, want <%s>", root)
	}
	return result, nil
}

// value converts a finished element: a metadata element to an object of its
// children; an element with children to an object of them and its
// attributes; an element with attributes only to {"$":text,"@attr":..};
// any other element to its text.
func (e *xmlElem) value() any {
	if e.metadata {
		if e.kids == nil {
			return map[string]any{}
		}
		return e.kids
	}
	var m map[string]any
	for _, a := range e.attrs {
		if a.Name.Space != "" || a.Name.Local == "xmlns" {
			continue // namespace declarations and prefixed attributes
		}
		if m == nil {
			m = e.kids
			if m == nil {
				m = map[string]any{"$": string(e.text)}
			}
		}
		m["@"+a.Name.Local] = a.Value
	}
	switch {
	case m != nil:
		return m
	case e.kids != nil:
		return e.kids
	}
	return string(e.text)
}

// add records a child; a repeated name becomes an array.
func (e *xmlElem) add(name string, v any) {
	if e.kids == nil {
		e.kids = map[string]any{}
	}
	switch old := e.kids[name].(type) {
	case nil:
		e.kids[name] = v
	case []any:
		e.kids[name] = append(old, v)
	default:
		e.kids[name] = []any{old, v}
	}
}

func rawName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

func xmlError(err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return heureka.Errorf(heureka.EINVALID, "malformed XML at line %d: %s", se.Line, se.Msg)
	}
	return heureka.Errorf(heureka.EINVALID, "malformed XML: %v", err)
}

func lineOf(body []byte, off int64) int {
	if off > int64(len(body)) {
		off = int64(len(body))
	}
	return 1 + bytes.Count(body[:off], []byte{'\n'})
}

// charsetReader lets a body declare ISO-8859-1 (Latin-1) or US-ASCII, the
// charsets besides UTF-8 that Java readers accept.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1":
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b)+len(b)/4)
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return bytes.NewReader(out), nil
	}
	return nil, errors.New("encoding " + label + " is not supported; send UTF-8")
}

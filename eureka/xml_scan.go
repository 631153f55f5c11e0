package eureka

import (
	"bytes"
	"strconv"
)

// A fast path for XML. encoding/xml allocates for every token, and
// parseXML then builds maps from them; the XML real clients send (fargo,
// XStream, heureka's own encoder) is plain: ASCII, no comments, CDATA,
// namespaces or document types. scanXML reads exactly that plain subset
// into a flat table of elements, which node.go serves to the readers in
// the same shape parseXML gives (the XStream mapping), and gives up on
// anything else: the caller then takes the encoding/xml path, which also
// makes every XML error message. So the fast path only has to be right
// about the bodies it accepts, and it accepts only bodies encoding/xml
// reads the same way.

// xmlDoc is a body read by scanXML.
type xmlDoc struct {
	body  []byte
	elems []xmlElement // elems[0] is the root element
	attrs []xmlAttr
}

type xmlElement struct {
	name     string  // unescaped, as in parseXML's tree
	raw      xmlText // the name as written
	text     xmlText
	kid      int32 // first child element, or -1
	next     int32 // next sibling, or -1
	attr     int32 // first attribute in xmlDoc.attrs
	nattr    int32 // attributes counted in the XStream mapping
	metadata bool  // a <metadata> element: its children are map entries
}

type xmlAttr struct {
	key string // "@" and the attribute's name
	val xmlText
}

// xmlText is a run of the body holding character data, with entity
// references still to be replaced when ent is set.
type xmlText struct {
	start, end int32
	ent        bool
}

// xmlKnownNames maps the element names the readers look up, as written,
// to their unescaped form, shared instead of allocated for every body.
var xmlKnownNames = func() map[string]string {
	m := map[string]string{}
	for _, ks := range []keySet{instanceKeys, dataCenterKeys, leaseKeys, applicationKeys, applicationsKeys} {
		for k := range ks {
			m[k] = unescapeName(k)
		}
	}
	return m
}()

// xmlKnownAttrs are the attribute keys the readers look up.
var xmlKnownAttrs = map[string]string{"@enabled": "@enabled", "@class": "@class"}

// scanXML reads body, whose root element must be <root>, if it is plain
// XML (see above). ok is false if it is not, or is not well-formed, or
// would be refused by parseXML.
func scanXML(body []byte, root string) (n node, ok bool) {
	body = bytes.TrimPrefix(body, utf8BOM)
	if len(body) > 1<<30 {
		return node{}, false
	}
	d := &xmlDoc{body: body, elems: make([]xmlElement, 0, 64)}
	i := skipXMLSpace(body, 0)
	if i = skipXMLDecl(body, i); i < 0 {
		return node{}, false
	}
	i = skipXMLSpace(body, i)
	var (
		stack []int32 // open elements
		last  []int32 // their last child so far, or -1
		done  bool
	)
	stack = make([]int32, 0, 8)
	last = make([]int32, 0, 8)
	for i < len(body) {
		if body[i] != '<' {
			t, end := scanXMLText(body, i)
			if end < 0 || len(stack) == 0 && t.ent {
				return node{}, false
			}
			if len(stack) == 0 {
				for _, c := range body[i:end] {
					if !isSpace(c) {
						return node{}, false
					}
				}
			}
			i = end
			continue
		}
		if i+1 >= len(body) {
			return node{}, false
		}
		switch body[i+1] {
		case '/': // end tag
			if len(stack) == 0 {
				return node{}, false
			}
			nameEnd := scanXMLName(body, i+2)
			if nameEnd < 0 {
				return node{}, false
			}
			j := skipXMLSpace(body, nameEnd)
			if j >= len(body) || body[j] != '>' {
				return node{}, false
			}
			top := stack[len(stack)-1]
			if !d.endMatches(top, body[i+2:nameEnd]) {
				return node{}, false
			}
			if e := &d.elems[top]; e.kid < 0 {
				e.text.end = int32(i)
			}
			stack, last = stack[:len(stack)-1], last[:len(last)-1]
			done = len(stack) == 0
			i = j + 1
		case '?', '!':
			return node{}, false
		default: // start tag
			if done || len(stack) >= maxXMLDepth {
				return node{}, false
			}
			nameEnd := scanXMLName(body, i+1)
			if nameEnd < 0 {
				return node{}, false
			}
			raw := body[i+1 : nameEnd]
			if len(stack) == 0 && string(raw) != root {
				return node{}, false
			}
			parentIsMetadata := len(stack) > 0 && d.elems[stack[len(stack)-1]].metadata
			e := xmlElement{name: xmlName(raw), raw: xmlText{start: int32(i + 1), end: int32(nameEnd)},
				kid: -1, next: -1, attr: int32(len(d.attrs)),
				metadata: string(raw) == "metadata"}
			if parentIsMetadata && !ValidXMLMetadataKey(e.name) {
				return node{}, false
			}
			j, empty := d.scanAttrs(body, nameEnd, &e)
			if j < 0 {
				return node{}, false
			}
			idx := int32(len(d.elems))
			e.text = xmlText{start: int32(j), end: int32(j)}
			d.elems = append(d.elems, e)
			if n := len(stack); n > 0 {
				if p := last[n-1]; p >= 0 {
					d.elems[p].next = idx
				} else {
					d.elems[stack[n-1]].kid = idx
				}
				last[n-1] = idx
			}
			i = j
			if empty {
				done = len(stack) == 0
				continue
			}
			stack, last = append(stack, idx), append(last, -1)
		}
	}
	if !done || len(stack) > 0 {
		return node{}, false
	}
	// Text of elements with children is never read; entities in it have
	// been checked by scanXMLText. Mark leaves' text as having entities.
	for k := range d.elems {
		if e := &d.elems[k]; e.kid < 0 && e.text.end > e.text.start {
			e.text.ent = bytes.IndexByte(body[e.text.start:e.text.end], '&') >= 0
		}
	}
	return node{xml: d, xi: 0, xk: xkElem, ok: true}, true
}

// endMatches reports whether the end tag named raw closes element k.
func (d *xmlDoc) endMatches(k int32, raw []byte) bool {
	n := d.elems[k].raw
	return bytes.Equal(d.body[n.start:n.end], raw)
}

// scanAttrs reads the attributes of a start tag from i, just after its
// name, up to and including '>' or "/>". It returns the index after the
// tag and whether the element is empty (<x/>), or -1.
func (d *xmlDoc) scanAttrs(b []byte, i int, e *xmlElement) (int, bool) {
	for {
		j := skipXMLSpace(b, i)
		if j >= len(b) {
			return -1, false
		}
		switch b[j] {
		case '>':
			return j + 1, false
		case '/':
			if j+1 < len(b) && b[j+1] == '>' {
				return j + 2, true
			}
			return -1, false
		}
		if j == i { // attributes must be separated by white space
			return -1, false
		}
		nameEnd := scanXMLName(b, j)
		if nameEnd < 0 {
			return -1, false
		}
		name := b[j:nameEnd]
		k := skipXMLSpace(b, nameEnd)
		if k >= len(b) || b[k] != '=' {
			return -1, false
		}
		k = skipXMLSpace(b, k+1)
		if k >= len(b) || b[k] != '"' && b[k] != '\'' {
			return -1, false
		}
		q := b[k]
		end := k + 1
		ent := false
		for end < len(b) && b[end] != q {
			switch c := b[end]; {
			case c == '<' || c == '\t' || c == '\n' || !isPlainXMLByte(c):
				return -1, false
			case c == '&':
				n := xmlEntityLen(b, end)
				if n < 0 {
					return -1, false
				}
				ent = true
				end += n
				continue
			}
			end++
		}
		if end >= len(b) {
			return -1, false
		}
		if string(name) != "xmlns" {
			key, ok := xmlKnownAttrs["@"+string(name)]
			if !ok {
				key = "@" + string(name)
			}
			d.attrs = append(d.attrs, xmlAttr{key: key, val: xmlText{start: int32(k + 1), end: int32(end), ent: ent}})
			e.nattr++
		}
		i = end + 1
	}
}

// skipXMLDecl skips an XML declaration at i that declares version 1.0 and
// UTF-8 or no encoding, written as heureka and Java write it. Any other
// <?...?> is left for encoding/xml (-1).
func skipXMLDecl(b []byte, i int) int {
	for _, decl := range []string{
		`<?xml version="1.0" encoding="UTF-8"?>`, `<?xml version="1.0"?>`,
		`<?xml version='1.0' encoding='UTF-8'?>`, `<?xml version="1.0" encoding="utf-8"?>`,
	} {
		if bytes.HasPrefix(b[i:], []byte(decl)) {
			return i + len(decl)
		}
	}
	if bytes.HasPrefix(b[i:], []byte("<?")) {
		return -1
	}
	return i
}

// skipXMLSpace skips the white space encoding/xml skips inside tags, less
// '\r', which plain XML does not have (encoding/xml rewrites it in text).
func skipXMLSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n') {
		i++
	}
	return i
}

// scanXMLName returns the end of a plain element or attribute name at i:
// an ASCII letter or '_', then letters, digits, '_', '.' and '-'. No ':'
// (namespaces are left to encoding/xml). -1 if there is none.
func scanXMLName(b []byte, i int) int {
	if i >= len(b) || !(b[i] == '_' || 'a' <= b[i] && b[i] <= 'z' || 'A' <= b[i] && b[i] <= 'Z') {
		return -1
	}
	for i++; i < len(b); i++ {
		c := b[i]
		if !(c == '_' || c == '.' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			break
		}
	}
	if i < len(b) && b[i] >= 0x80 { // a non-ASCII name character follows
		return -1
	}
	return i
}

// xmlName returns an element name as parseXML's tree has it: unescaped,
// and shared when it is one the readers know.
func xmlName(raw []byte) string {
	if s, ok := xmlKnownNames[string(raw)]; ok {
		return s
	}
	return unescapeName(string(raw))
}

// isPlainXMLByte reports whether c may appear as itself in plain text:
// printable ASCII, tab and newline. '\r' (which encoding/xml rewrites),
// other control characters and every non-ASCII byte are not plain.
func isPlainXMLByte(c byte) bool { return c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' }

// scanXMLText returns the character data from i up to the next '<', or
// -1 if it is not plain: it may hold the five predefined entities and
// character references to plain characters or '\r', and no "]]>".
func scanXMLText(b []byte, i int) (xmlText, int) {
	t := xmlText{start: int32(i)}
	for i < len(b) && b[i] != '<' {
		switch c := b[i]; {
		case c == '&':
			n := xmlEntityLen(b, i)
			if n < 0 {
				return t, -1
			}
			t.ent = true
			i += n
			continue
		case c == '>' && i >= 2 && b[i-1] == ']' && b[i-2] == ']':
			return t, -1
		case !isPlainXMLByte(c):
			return t, -1
		}
		i++
	}
	t.end = int32(i)
	return t, i
}

// xmlEntityLen returns the length of the entity reference at b[i] ('&'),
// or -1 unless it is one of the five predefined entities or a character
// reference to a plain character or '\r'.
func xmlEntityLen(b []byte, i int) int {
	end := bytes.IndexByte(b[i:min(len(b), i+12)], ';')
	if end < 0 {
		return -1
	}
	if _, ok := xmlEntityValue(b[i+1 : i+end]); !ok {
		return -1
	}
	return end + 1
}

// xmlEntityValue is the character an entity reference's name (between '&'
// and ';') stands for.
func xmlEntityValue(name []byte) (byte, bool) {
	switch string(name) {
	case "amp":
		return '&', true
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "apos":
		return '\'', true
	case "quot":
		return '"', true
	}
	if len(name) < 2 || name[0] != '#' {
		return 0, false
	}
	digits, base := name[1:], 10
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 {
		return 0, false
	}
	for _, c := range digits {
		if !('0' <= c && c <= '9' || base == 16 && isHex(c)) {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(string(digits), base, 8)
	if err != nil || !(isPlainXMLByte(byte(n)) || n == '\r') {
		return 0, false
	}
	return byte(n), true
}

// text returns the characters of t, entities replaced.
func (d *xmlDoc) text(t xmlText) string {
	raw := d.body[t.start:t.end]
	if !t.ent {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '&' {
			out = append(out, raw[i])
			continue
		}
		end := bytes.IndexByte(raw[i:], ';')
		c, _ := xmlEntityValue(raw[i+1 : i+end])
		out = append(out, c)
		i += end
	}
	return string(out)
}

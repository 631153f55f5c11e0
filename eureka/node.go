package eureka

import (
	"encoding/json"
	"strconv"
	"unsafe"
)

// node is one value of a body being decoded: either the bytes of a JSON
// value that scanJSON has checked, or a value of the tree parseXML builds
// (string, map[string]any or []any). The lenient readers in decode.go
// work on nodes, so JSON and XML accept exactly the same variations while
// JSON is read in place, without a tree.
type node struct {
	json []byte  // a checked JSON value
	xml  *xmlDoc // or a value in a body scanXML read:
	xi   int32   // the element or attribute index in xml
	xk   xmlKind // and what of it the node is
	tree any     // or, when json and xml are nil, a value of parseXML's tree
	ok   bool    // false for a member that is absent
}

// xmlKind says what a node in an xmlDoc stands for, in the shape parseXML
// gives the same XML.
type xmlKind uint8

const (
	xkElem   xmlKind = iota // an element: an object or its text
	xkGroup                 // the elements named as xi and its later siblings: an array
	xkAttr                  // an attribute's value
	xkDollar                // the text of an element that has attributes ("$")
)

type kind uint8

const (
	kAbsent kind = iota
	kNull
	kString
	kNumber
	kBool
	kObject
	kArray
)

func jsonNode(b []byte) node { return node{json: b, ok: true} }
func treeNode(v any) node    { return node{tree: v, ok: true} }

func (n node) kind() kind {
	switch {
	case !n.ok:
		return kAbsent
	case n.json != nil:
		switch n.json[0] {
		case 'n':
			return kNull
		case '"':
			return kString
		case 't', 'f':
			return kBool
		case '{':
			return kObject
		case '[':
			return kArray
		}
		return kNumber
	case n.xml != nil:
		switch n.xk {
		case xkElem:
			if e := &n.xml.elems[n.xi]; e.metadata || e.kid >= 0 || e.nattr > 0 {
				return kObject
			}
			return kString
		case xkGroup:
			return kArray
		}
		return kString
	}
	switch n.tree.(type) {
	case string:
		return kString
	case json.Number:
		return kNumber
	case bool:
		return kBool
	case map[string]any:
		return kObject
	case []any:
		return kArray
	}
	return kNull
}

// textView is text without a copy for JSON strings that need no decoding
// and for numbers: a view into the body, valid only while the body is
// unchanged, so only for text that is parsed, compared or copied before
// the decode returns.
func (n node) textView() string {
	if n.json != nil {
		switch n.json[0] {
		case '"':
			if inner, ok := plainJSONString(n.json); ok {
				return bytesView(inner)
			}
		case 't', 'f':
		default:
			return bytesView(n.json)
		}
	}
	return n.text()
}

// text returns the text of a string, number or boolean node.
func (n node) text() string {
	if n.json != nil {
		switch n.json[0] {
		case '"':
			return jsonString(n.json)
		case 't':
			return "true"
		case 'f':
			return "false"
		}
		return string(n.json)
	}
	if d := n.xml; d != nil {
		if n.xk == xkAttr {
			return d.text(d.attrs[n.xi].val)
		}
		return d.text(d.elems[n.xi].text)
	}
	switch v := n.tree.(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// memberKey is the name of an object member: decoded JSON bytes, or an XML
// tree's map key.
type memberKey struct {
	b []byte
	s string
}

func (k memberKey) is(s string) bool {
	if k.b != nil {
		return string(k.b) == s
	}
	return k.s == s
}

func (k memberKey) String() string {
	if k.b != nil {
		return string(k.b)
	}
	return k.s
}

// view returns the key's text without copying JSON bytes: valid only as
// long as they are, so only for a key that is compared or copied before
// the decode returns.
func (k memberKey) view() string {
	if k.b != nil {
		return bytesView(k.b)
	}
	return k.s
}

// bytesView is b as a string, without a copy. b must not change while the
// string is used.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (k memberKey) hasAtPrefix() bool {
	if k.b != nil {
		return len(k.b) > 0 && k.b[0] == '@'
	}
	return len(k.s) > 0 && k.s[0] == '@'
}

// each calls fn with every member of an object node until fn returns
// false. JSON members come in document order, repeated names included (the
// last one is the one that counts, as in encoding/json); XML members come
// in no particular order and never repeat.
func (n node) each(fn func(k memberKey, v node) bool) {
	if n.json != nil {
		eachJSONMember(n.json, func(key, v []byte) bool {
			k := jsonKey(key)
			if k == nil {
				k = []byte{} // a member named ""
			}
			return fn(memberKey{b: k}, jsonNode(v))
		})
		return
	}
	if n.xml != nil {
		n.eachXML(fn)
		return
	}
	m, _ := n.tree.(map[string]any)
	for k, v := range m {
		if !fn(memberKey{s: k}, treeNode(v)) {
			return
		}
	}
}

// elems calls fn with every element of an array node.
func (n node) elems(fn func(v node) bool) {
	if n.json != nil {
		eachJSONElem(n.json, func(v []byte) bool { return fn(jsonNode(v)) })
		return
	}
	if d := n.xml; d != nil {
		name := d.elems[n.xi].name
		for k := n.xi; k >= 0; k = d.elems[k].next {
			if d.elems[k].name == name && !fn(node{xml: d, xi: k, xk: xkElem, ok: true}) {
				return
			}
		}
		return
	}
	l, _ := n.tree.([]any)
	for _, v := range l {
		if !fn(treeNode(v)) {
			return
		}
	}
}

// size is the number of members of an object node, repeated names counted
// once each time they appear.
func (n node) size() int {
	if m, ok := n.tree.(map[string]any); ok {
		return len(m)
	}
	c := 0
	if n.json != nil {
		eachJSONMember(n.json, func(_, _ []byte) bool { c++; return true })
	} else {
		n.each(func(memberKey, node) bool { c++; return true })
	}
	return c
}

// eachXML is each for an element of an xmlDoc: its children, a name given
// more than once as one array member, then unless it is a <metadata>
// element its attributes, and its text as "$" if it has attributes but no
// children.
func (n node) eachXML(fn func(k memberKey, v node) bool) {
	d := n.xml
	e := &d.elems[n.xi]
	for k := e.kid; k >= 0; k = d.elems[k].next {
		name := d.elems[k].name
		seen := false
		for p := e.kid; p != k; p = d.elems[p].next {
			if d.elems[p].name == name {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		kid := node{xml: d, xi: k, xk: xkElem, ok: true}
		for q := d.elems[k].next; q >= 0; q = d.elems[q].next {
			if d.elems[q].name == name {
				kid.xk = xkGroup
				break
			}
		}
		if !fn(memberKey{s: name}, kid) {
			return
		}
	}
	if e.metadata {
		return
	}
	for a := e.attr; a < e.attr+e.nattr; a++ {
		if !fn(memberKey{s: d.attrs[a].key}, node{xml: d, xi: a, xk: xkAttr, ok: true}) {
			return
		}
	}
	if e.kid < 0 && e.nattr > 0 {
		fn(memberKey{s: "$"}, node{xml: d, xi: n.xi, xk: xkDollar, ok: true})
	}
}

// value returns the node as encoding/json would decode it into an any
// (numbers as json.Number), for error messages. A node of an xmlDoc has
// no value: an error met on the XML fast path is never reported, the body
// is decoded again through parseXML (see decodeBody).
func (n node) value() any {
	if n.xml != nil {
		return nil
	}
	if n.json == nil {
		return n.tree
	}
	v, err := parseJSON(n.json)
	if err != nil {
		return nil
	}
	return v
}

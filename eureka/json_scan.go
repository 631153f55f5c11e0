package eureka

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A small JSON scanner for the typed decoder. scanJSON checks a whole body
// once against the JSON grammar, exactly as encoding/json does (the same
// nesting bound, invalid UTF-8 inside strings accepted, to be replaced by
// U+FFFD as encoding/json replaces it); the readers then walk the checked
// bytes without building a tree, and hand anything unusual (escapes,
// invalid UTF-8, error messages) to encoding/json so that its meaning
// stays encoding/json's.

// maxJSONDepth is encoding/json's own nesting bound, kept so that a body
// is refused for depth exactly when encoding/json would refuse it.
const maxJSONDepth = 10000

// scanJSON reports whether body holds exactly one JSON value, with white
// space around it allowed.
func scanJSON(body []byte) bool {
	i := skipJSONSpace(body, 0)
	end := scanValue(body, i, 0)
	return end >= 0 && skipJSONSpace(body, end) == len(body)
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanValue returns the end of the value starting at b[i], or -1 if there
// is no valid value there. depth is the number of enclosing containers.
func scanValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '{':
		return scanContainer(b, i, depth, '}', true)
	case c == '[':
		return scanContainer(b, i, depth, ']', false)
	case c == '"':
		return scanString(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(b, i)
	}
	return -1
}

// scanContainer scans an object (members) or an array.
func scanContainer(b []byte, i, depth int, closer byte, members bool) int {
	if depth++; depth > maxJSONDepth {
		return -1
	}
	i = skipJSONSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1
	}
	for {
		if members {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			if i = scanString(b, i); i < 0 {
				return -1
			}
			if i = skipJSONSpace(b, i); i >= len(b) || b[i] != ':' {
				return -1
			}
			i = skipJSONSpace(b, i+1)
		}
		if i = scanValue(b, i, depth); i < 0 {
			return -1
		}
		if i = skipJSONSpace(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = skipJSONSpace(b, i+1)
		case closer:
			return i + 1
		default:
			return -1
		}
	}
}

func scanString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		}
		// c is '\\'
		i++
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(b) {
				return -1
			}
			for _, h := range b[i+1 : i+5] {
				if !isHex(h) {
					return -1
				}
			}
			i += 4
		default:
			return -1
		}
	}
	return -1
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber follows RFC 8259's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = scanDigits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := scanDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := scanDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func scanDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// skipChecked returns the end of the value starting at b[i] in checked
// JSON, without checking it again.
func skipChecked(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipCheckedString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipCheckedString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !isSpace(b[i]) {
		i++
	}
	return i
}

// skipCheckedString returns the end of the checked string literal at b[i].
// Eureka's strings are short: a plain loop beats bytes.IndexByte here.
func skipCheckedString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// eachJSONMember calls fn with the raw (still quoted) key and the value of
// each member of the checked object obj, in document order, until fn
// returns false.
func eachJSONMember(obj []byte, fn func(key, v []byte) bool) {
	i := skipJSONSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		kend := skipCheckedString(obj, i)
		key := obj[i:kend]
		vstart := skipJSONSpace(obj, skipJSONSpace(obj, kend)+1)
		vend := skipChecked(obj, vstart)
		if !fn(key, obj[vstart:vend]) {
			return
		}
		i = skipJSONSpace(obj, vend)
		if obj[i] == ',' {
			i = skipJSONSpace(obj, i+1)
		}
	}
}

// eachJSONElem calls fn with each element of the checked array arr.
func eachJSONElem(arr []byte, fn func(v []byte) bool) {
	i := skipJSONSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := skipChecked(arr, i)
		if !fn(arr[i:end]) {
			return
		}
		i = skipJSONSpace(arr, end)
		if arr[i] == ',' {
			i = skipJSONSpace(arr, i+1)
		}
	}
}

// plainJSONString returns the contents of the checked string literal s when
// they need no decoding: no escapes and valid UTF-8.
func plainJSONString(s []byte) ([]byte, bool) {
	inner := s[1 : len(s)-1]
	for i, c := range inner {
		switch {
		case c == '\\':
			return nil, false
		case c >= utf8.RuneSelf:
			rest := inner[i:]
			return inner, bytes.IndexByte(rest, '\\') < 0 && utf8.Valid(rest)
		}
	}
	return inner, true
}

// jsonString decodes the checked string literal s.
func jsonString(s []byte) string {
	if inner, ok := plainJSONString(s); ok {
		return string(inner)
	}
	var out string
	_ = json.Unmarshal(s, &out) // s is a checked literal: this cannot fail
	return out
}

// jsonKey is jsonString for member names, which are mostly compared rather
// than kept: it returns the name's bytes, decoded only when it has escapes
// or invalid UTF-8.
func jsonKey(s []byte) []byte {
	if inner, ok := plainJSONString(s); ok {
		return inner
	}
	return []byte(jsonString(s))
}

// jsonWhole parses a checked number, or a string literal holding only
// digits, as a whole number of at most bits bits without allocating. ok is
// false for anything else (signs, fractions, exponents, white space, too
// many digits); the caller then takes the general path.
func jsonWhole(b []byte, bits int) (n int64, ok bool) {
	if len(b) > 0 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if bits < 64 && n >= 1<<(bits-1) {
		return 0, false
	}
	return n, true
}

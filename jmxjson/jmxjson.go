package jmxjson

import "bytes"

// Sanitize replaces the bare NaN, Infinity and -Infinity tokens that
// Hadoop's JMX servlet writes for non-finite doubles (invalid JSON) with
// null, leaving string contents untouched. Input without such tokens is
// returned as is.
func Sanitize(b []byte) []byte {
	var out []byte // nil until the first replacement
	last := 0      // b[last:i] is not yet copied to out
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++ // skip the escaped byte
			case '"':
				inString = false
			}
			continue
		}
		var n int
		switch c {
		case '"':
			inString = true
			continue
		case 'N':
			if bytes.HasPrefix(b[i:], []byte("NaN")) {
				n = len("NaN")
			}
		case 'I':
			if bytes.HasPrefix(b[i:], []byte("Infinity")) {
				n = len("Infinity")
			}
		case '-', '+':
			if bytes.HasPrefix(b[i+1:], []byte("Infinity")) {
				n = 1 + len("Infinity")
			}
		}
		if n == 0 {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[last:i]...)
		out = append(out, "null"...)
		i += n - 1
		last = i + 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

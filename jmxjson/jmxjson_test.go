package jmxjson

import (
	"encoding/json"
	"testing"
)

func TestSanitize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"a":NaN,"b":Infinity,"c":-Infinity}`, `{"a":null,"b":null,"c":null}`},
		{`{"s":"NaN and Infinity stay in strings","x":NaN}`, `{"s":"NaN and Infinity stay in strings","x":null}`},
		{`{"s":"an escaped \" then NaN","y":[NaN, 2]}`, `{"s":"an escaped \" then NaN","y":[null, 2]}`},
	} {
		got := string(Sanitize([]byte(c.in)))
		if got != c.want {
			t.Errorf("Sanitize(%s) = %s, want %s", c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("Sanitize(%s) = %s: not JSON", c.in, got)
		}
	}
	in := []byte(`{"clean":true}`)
	if out := Sanitize(in); &out[0] != &in[0] {
		t.Error("input without bare tokens was copied, not returned as is")
	}
}

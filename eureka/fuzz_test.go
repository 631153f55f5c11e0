package eureka

import (
	"encoding/json"
	"testing"

	"github.com/heureka-project/heureka"
)

// The fuzz targets check that decoding never panics, fails only with
// EINVALID, and that what it accepts survives encode → decode unchanged as
// valid output.

func FuzzDecodeInstanceJSON(f *testing.F) {
	for _, s := range []string{
		springBody, springNumbersBody, fargoJSONBody, jsMinimalBody, jsBooleanBody, pyBody,
		`{"hostName":"h","port":{"$":"1e3","@enabled":"TRUE"},"metadata":{"instanceId":"x","n":1.5,"@class":"y"}}`,
		`{"instance":null}`, `[]`, `{"a":"\u0000\ud800\u2028"}`,
	} {
		f.Add([]byte(s))
	}
	for _, in := range allTestInstances() {
		f.Add(EncodeInstance(JSON, in))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := DecodeInstance(body, JSON)
		if err != nil {
			if heureka.ErrorCode(err) != heureka.EINVALID {
				t.Fatalf("error code %q: %v", heureka.ErrorCode(err), err)
			}
			return
		}
		enc := EncodeInstance(JSON, in)
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON output %q", enc)
		}
		again, err := DecodeInstance(enc, JSON)
		if err != nil {
			t.Fatalf("cannot decode own output %q: %v", enc, err)
		}
		if !sameInstance(in, again) {
			t.Fatalf("round trip changed the instance\nbody: %q\n out: %q\nonce: %s\ntwice: %s", body, enc, dump(in), dump(again))
		}
	})
}

func FuzzDecodeInstanceXML(f *testing.F) {
	for _, s := range []string{
		fargoXMLBody, javaXMLBody,
		`<instance><port enabled="true"/><metadata><a__b>x</a__b><c_-d/></metadata></instance>`,
		`<instance><hostName>&#13;&#x1F600;</hostName><securePort enabled="TRUE">1</securePort></instance>`,
		`<!DOCTYPE x><instance/>`, `<instance xmlns="urn:x" a="1"><x:y xmlns:x="urn:y"/></instance>`,
	} {
		f.Add([]byte(s))
	}
	for _, in := range allTestInstances() {
		f.Add(EncodeInstance(XML, in))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := DecodeInstance(body, XML)
		if err != nil {
			if heureka.ErrorCode(err) != heureka.EINVALID {
				t.Fatalf("error code %q: %v", heureka.ErrorCode(err), err)
			}
			return
		}
		enc := EncodeInstance(XML, in)
		if err := checkXML(enc); err != nil {
			t.Fatalf("malformed XML output %q: %v", enc, err)
		}
		again, err := DecodeInstance(enc, XML)
		if err != nil {
			t.Fatalf("cannot decode own output %q: %v", enc, err)
		}
		if !sameInstance(in, again) {
			t.Fatalf("round trip changed the instance\nbody: %q\n out: %q\nonce: %s\ntwice: %s", body, enc, dump(in), dump(again))
		}
	})
}

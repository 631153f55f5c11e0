package eureka

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

// The typed decoder must decide exactly as the map[string]any decoder it
// replaced (olddecode_test.go): the same values, or the same error
// message, for every body. These tests run both on every recorded body
// (the fuzz corpora, the golden files, the client bodies of decode_test.go
// and a set of tricky ones) and FuzzDecodersAgree searches for more.

// trickyBodies are the cases the typed decoder handles on a path of its
// own: repeated members, escapes in names, invalid UTF-8, deep nesting,
// bodies encoding/json refuses.
var trickyBodies = []string{
	`{"hostName":"a","hostName":"b"}`,
	`{"port":[1],"port":8080}`,
	`{"port":8080,"port":[1]}`,
	`{"instance":{"hostName":"a"},"instance":5}`,
	`{"instance":5,"instance":{"hostName":"a"}}`,
	`{"ho\u0073tName":"esc","\u0061pp":"x"}`,
	`{"hostName":"caf\u00e9 \ud83d\ude00 \ud800 \"q\" \\ \/"}`,
	"{\"hostName\":\"\xff\xfeok\xc3\"}",
	"{\"host\xffName\":\"x\",\"metadata\":{\"k\xff\":\"v\xfe\"}}",
	`{"metadata":{"a":"1","a":null,"b":{},"b":"2","c":[1],"c":"3"}}`,
	`{"metadata":{"a":{},"b":[],"a":"x"}}`,
	`{"metadata":{"a":{"$":"v","@x":"1"},"b":{"$":1},"c":{"$":true}}}`,
	`{"metadata":{"":"empty","@class":{}}}`,
	`{"hostName":{"$":"h","@a":1},"app":{"$":"x","b":1}}`,
	`{"port":{"@enabled":"false"},"securePort":{"$":null,"@enabled":"TRUE"}}`,
	`{"port":{"$":"8080","$":"9090"},"securePort":{"x":1}}`,
	`{"port":-0,"securePort":"-1","countryId":-5,"lastDirtyTimestamp":-9223372036854775808}`,
	`{"port":2147483647,"securePort":2147483648}`,
	`{"countryId":"0012","lastUpdatedTimestamp":"999999999999999999","lastDirtyTimestamp":9999999999999999999}`,
	`{"lastDirtyTimestamp":1E3,"lastUpdatedTimestamp":"1e3","countryId":" 7"}`,
	`{"isCoordinatingDiscoveryServer":null}`,
	`{"isCoordinatingDiscoveryServer":"TRUE "}`,
	`{"isCoordinatingDiscoveryServer":1}`,
	`{"dataCenterInfo":"","leaseInfo":"  "}`,
	`{"dataCenterInfo":null,"leaseInfo":null,"metadata":""}`,
	`{"dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","metadata":{"instance-id":"i-1"}},"dataCenterInfo":{"name":"Netflix"}}`,
	`{"leaseInfo":{"renewalIntervalInSecs":"x"},"port":[1]}`,
	`{"port":[1],"leaseInfo":{"renewalIntervalInSecs":"x"}}`,
	`{"applications":{"versions_delta":"3","apps_hashcode":"UP_1_","application":{"name":"a","instance":[{"hostName":"h"},null]}}}`,
	`{"applications":{"application":[{"name":"a","instance":null},{"name":["b"]}]}}`,
	`{"applications":{"application":"  "}}`,
	`{"application":{"name":"a","instance":{"instanceId":"i","leaseInfo":{"renewalTimestamp":"5","lastRenewalTimestamp":6}}}}`,
	`{"replicationList":[{"appName":"A","id":"i","lastDirtyTimestamp":5,"status":"UP","overriddenStatus":"UNKNOWN","action":"Register","instanceInfo":{"hostName":"h","app":"A"}},{"action":"Cancel","instanceInfo":null,"x":[1]}],"other":1}`,
	`{"replicationList":[{"appName":"A","appname":"B"}]}`, `{"replicationList":[{"AppName":"A"}]}`, `{"REPLICATIONLIST":[{"id":"x"}]}`,
	`{"replicationList":[{"id":"x","id":"y"}]}`, `{"replicationList":[{"id":null}]}`, `{"replicationList":[null,{}]}`,
	`{"replicationList":[{"lastDirtyTimestamp":"12"}]}`, `{"replicationList":[{"lastDirtyTimestamp":1.5}]}`, `{"replicationList":[{"lastDirtyTimestamp":"x"}]}`,
	`{"replicationList":[{"instanceInfo":5},{"instanceInfo":{"port":[1]},"lastDirtyTimestamp":1e3}]}`, `{"replicationList":[{"id":5}]}`,
	`{"replicationList":null}`, `{"replicationList":[]} trailing`, `{"replicationList":[{"id":"\u00e9\ud800"}]}`,
	`{"replicationList":[],"replicationList":[{"id":"x"}]}`, `{"replicationList":{"id":"x"}}`, `[]`,
	`  {"hostName":"a"}  `, "\xef\xbb\xbf\xef\xbb\xbf{}", `{} `, `{}}`, `{"a":1,}`, `{"a" 1}`, `[1,]`, `01`, `1.`, `-`, `1e`, `"\u12"`,
	`"\x"`, "\"\x01\"", `tru`, `nul`, `{"a":nulll}`, `{"a":[1 2]}`, `{,}`, ` `, `{"instance":{}}x`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"x":` + strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat("}", 10001),
	`<instance><hostName>a</hostName><hostName>b</hostName></instance>`,
	`<instance><port enabled="maybe">1</port><metadata><k>v</k><k>w</k></metadata></instance>`,
	`<applications><versions__delta>x</versions__delta></applications>`,
	`<applications><application><name>A</name><instance/><instance><port>x</port></instance></application></applications>`,
	`<applications><versions__delta>4</versions__delta><apps__hashcode>UP_2_</apps__hashcode><application><name>a</name><instance><hostName>h</hostName></instance></application><application><name>b</name></application></applications>`,
	`<instance><hostName>a</hostName><app>x</app><hostName>b</hostName></instance>`,
	`<instance><port enabled="true" enabled="false">1</port><securePort enabled='true'>&#50;</securePort></instance>`,
	`<instance><port enabled="true"><_->7</_-></port><hostName a="1"><x/></hostName></instance>`,
	`<instance><hostName a="&amp;&lt;&gt;&quot;&apos;&#65;&#x42;">t&#13;&#xA;&#9;</hostName></instance>`,
	`<application/>`, `<application> </application>`, `{"application":" "}`, `{"application":""}`,
	`<instance xmlns="urn:x"/>`, `<instance> </instance>`, `<instance>text</instance>`, `<instance a="1"/>`,
	`<instance><metadata class="java.util.Collections$EmptyMap" a="b"><k c="d">v</k><k2/></metadata></instance>`,
	`<instance><metadata><k><x>1</x></k></metadata></instance>`,
	`<instance><metadata><a__b>1</a__b><a_b>2</a_b></metadata></instance>`,
	`<instance><dataCenterInfo class="com.netflix.appinfo.AmazonInfo"><metadata><instance-id>i-1</instance-id></metadata></dataCenterInfo></instance>`,
	`<instance><leaseInfo><renewalIntervalInSecs> 10 </renewalIntervalInSecs></leaseInfo><countryId>1.0</countryId></instance>`,
	`<instance><isCoordinatingDiscoveryServer>TRUE</isCoordinatingDiscoveryServer><port>  </port></instance>`,
	"<?xml version=\"1.0\"?>\n<instance>\n  <hostName>h</hostName>\n</instance>\n",
	"\xef\xbb\xbf<instance><hostName>h</hostName></instance>",
}

// corpusBodies returns every recorded body: the fuzz corpora and the golden
// files in testdata, the client bodies and trickyBodies.
func corpusBodies(t testing.TB) [][]byte {
	var out [][]byte
	for _, s := range []string{springBody, springNumbersBody, fargoJSONBody, fargoXMLBody, jsMinimalBody, jsBooleanBody, pyBody, javaXMLBody} {
		out = append(out, []byte(s))
	}
	for _, s := range trickyBodies {
		out = append(out, []byte(s))
	}
	golden, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(golden) == 0 || len(corpus) == 0 {
		t.Fatal("no golden files or fuzz corpus found")
	}
	for _, path := range golden {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	for _, path := range corpus {
		b, err := readCorpusFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, b)
	}
	return out
}

// readCorpusFile reads a "go test fuzz v1" file holding one []byte.
func readCorpusFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, os.ErrInvalid
	}
	lit, ok := strings.CutPrefix(lines[1], "[]byte(")
	lit, ok2 := strings.CutSuffix(lit, ")")
	if !ok || !ok2 {
		return nil, os.ErrInvalid
	}
	s, err := strconv.Unquote(lit)
	return []byte(s), err
}

// decoderPair is one public decoder and its map[string]any predecessor.
type decoderPair struct {
	name     string
	new, old func([]byte, Format) (any, error)
}

var decoderPairs = []decoderPair{
	{"DecodeInstance",
		func(b []byte, f Format) (any, error) { return DecodeInstance(b, f) },
		func(b []byte, f Format) (any, error) { return oldDecodeInstance(b, f) }},
	{"DecodeServerInstance",
		func(b []byte, f Format) (any, error) { return DecodeServerInstance(b, f) },
		func(b []byte, f Format) (any, error) { return oldDecodeServerInstance(b, f) }},
	{"DecodeApplication",
		func(b []byte, f Format) (any, error) { return DecodeApplication(b, f) },
		func(b []byte, f Format) (any, error) { return oldDecodeApplication(b, f) }},
	{"DecodeApplications",
		func(b []byte, f Format) (any, error) { return DecodeApplications(b, f) },
		func(b []byte, f Format) (any, error) { return oldDecodeApplications(b, f) }},
}

// checkAgree fails t unless every decoder gives what its predecessor gives
// for body in f: deeply equal values, or errors with the same message.
func checkAgree(t *testing.T, body []byte, f Format) {
	t.Helper()
	for _, p := range decoderPairs {
		got, gerr := p.new(bytes.Clone(body), f)
		want, werr := p.old(bytes.Clone(body), f)
		switch {
		case (gerr == nil) != (werr == nil):
			t.Errorf("%s(%s, %q):\n new error %v\n old error %v", p.name, f, body, gerr, werr)
		case gerr != nil:
			if !sameError(gerr, werr) {
				t.Errorf("%s(%s, %q):\n new error %q\n old error %q", p.name, f, body, gerr, werr)
			}
		case !reflect.DeepEqual(got, want):
			t.Errorf("%s(%s, %q):\n new %+v\n old %+v", p.name, f, body, got, want)
		}
	}
	if f != JSON {
		return
	}
	items, errs, err := DecodeReplicationList(bytes.Clone(body))
	oitems, oerrs, oerr := oldDecodeReplicationList(bytes.Clone(body))
	if errText(err) != errText(oerr) || !reflect.DeepEqual(items, oitems) || len(errs) != len(oerrs) {
		t.Errorf("DecodeReplicationList(%q):\n new %+v, %v, %v\n old %+v, %v, %v", body, items, errs, err, oitems, oerrs, oerr)
		return
	}
	for i := range errs {
		if (errs[i] == nil) != (oerrs[i] == nil) || errs[i] != nil && !sameError(errs[i], oerrs[i]) {
			t.Errorf("DecodeReplicationList(%q) item %d:\n new %v\n old %v", body, i, errs[i], oerrs[i])
		}
	}
}

// badMetadataKey matches the error for a metadata value that is not a
// scalar. The old decoder read metadata from a Go map, so with several bad
// keys it named one at random; the typed decoder names the first.
var badMetadataKey = regexp.MustCompile(`metadata key ".*" must have a string, number or boolean value, got .*`)

// sameError reports whether a and b say the same, taking any two reports
// of a bad metadata value to be the same.
func sameError(a, b error) bool {
	x, y := a.Error(), b.Error()
	return x == y || badMetadataKey.ReplaceAllString(x, "") == badMetadataKey.ReplaceAllString(y, "")
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "error: " + err.Error()
}

func TestDecoderMatchesOld(t *testing.T) {
	bodies := corpusBodies(t)
	for _, in := range append(allTestInstances(), dataNodeInstance()) {
		for _, f := range []Format{JSON, XML} {
			bodies = append(bodies, EncodeInstance(f, in))
		}
	}
	apps := registry10k()
	apps.Apps = apps.Apps[:2]
	for _, f := range []Format{JSON, XML} {
		bodies = append(bodies, EncodeApplications(f, apps), EncodeApplication(f, apps.Apps[0]))
	}
	batch := EncodeReplicationList([]ReplicationItem{
		{AppName: "A", ID: "a", LastDirtyTimestamp: 7, Status: heureka.StatusUp, Instance: dataNodeInstance(), Action: "Register"},
		{AppName: "A", ID: "b", Status: heureka.StatusDown, OverriddenStatus: heureka.StatusOutOfService, Action: "StatusUpdate"},
	})
	if _, ok := scanReplicationList(batch); !ok {
		t.Errorf("scanReplicationList gave up on EncodeReplicationList's %s", batch)
	}
	bodies = append(bodies, batch)
	for _, body := range bodies {
		for _, f := range []Format{JSON, XML} {
			checkAgree(t, body, f)
		}
	}
}

// FuzzDecodersAgree decodes each input as JSON and as XML with both
// decoders, seeded with every recorded body.
func FuzzDecodersAgree(f *testing.F) {
	for _, b := range corpusBodies(f) {
		if len(b) <= 8<<10 { // the deeply nested ones make minimising crawl
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAgree(t, body, JSON)
		checkAgree(t, body, XML)
	})
}

// TestXMLFastPathTaken checks that the XML clients send takes the fast
// path (scanXML) rather than always falling back to parseXML, and that
// what the fast path refuses is refused.
func TestXMLFastPathTaken(t *testing.T) {
	plain := map[string][]byte{"fargo": []byte(fargoXMLBody), "XStream": []byte(javaXMLBody)}
	for _, in := range append(allTestInstances(), dataNodeInstance()) {
		plain[in.ID] = EncodeInstance(XML, in)
	}
	for name, body := range plain {
		if _, ok := scanXML(body, "instance"); !ok && name != "XStream" {
			t.Errorf("%s: scanXML gave up on %s", name, body)
		}
	}
	apps := registry10k()
	apps.Apps = apps.Apps[:2]
	if _, ok := scanXML(EncodeApplications(XML, apps), "applications"); !ok {
		t.Error("scanXML gave up on EncodeApplications")
	}
	for _, body := range []string{
		`<instance><!-- c --></instance>`, `<instance><a><![CDATA[x]]></a></instance>`, "<instance>\r\n</instance>",
		`<instance><a>&bogus;</a></instance>`, `<instance><a>&#1;</a></instance>`, `<instance><a>é</a></instance>`,
		`<instance><e:a xmlns:e="urn:e"/></instance>`, `<instance><a></b></instance>`, `<instance>`, `<other/>`,
		`<instance/><instance/>`, `<instance a=1/>`, `<instance a="<"/>`, `<instance>]]></instance>`,
		`<?xml version="1.0" encoding="ISO-8859-1"?><instance/>`, `x<instance/>`,
		`<instance>` + strings.Repeat("<a>", 64) + strings.Repeat("</a>", 64) + `</instance>`,
		`<instance><metadata><1a>x</1a></metadata></instance>`,
	} {
		if _, ok := scanXML([]byte(body), "instance"); ok {
			t.Errorf("scanXML took %q, which is not plain XML", body)
		}
	}
}

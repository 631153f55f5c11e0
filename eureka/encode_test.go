package eureka

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func TestGolden(t *testing.T) {
	apps := testApplications()
	cases := []struct {
		name   string
		encode func(Format) []byte
	}{
		{"applications", func(f Format) []byte { return EncodeApplications(f, apps) }},
		{"applications_empty", func(f Format) []byte {
			return EncodeApplications(f, &heureka.Applications{VersionDelta: 1})
		}},
		{"application", func(f Format) []byte { return EncodeApplication(f, apps.Apps[1]) }},
		{"instance_amazon", func(f Format) []byte { return EncodeInstance(f, amazonInstance()) }},
		{"instance_myown", func(f Format) []byte { return EncodeInstance(f, myOwnInstance()) }},
		{"instance_empty_metadata", func(f Format) []byte { return EncodeInstance(f, emptyMetadataInstance()) }},
	}
	for _, c := range cases {
		for _, f := range []Format{JSON, XML} {
			name := c.name + "." + f.String()
			t.Run(name, func(t *testing.T) {
				got := c.encode(f)
				assertWellFormed(t, f, got)
				path := filepath.Join("testdata", "golden", name)
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from %s (go test -update rewrites it)\n got: %s\nwant: %s", path, got, want)
				}
				assertWellFormed(t, f, want)
			})
		}
	}
}

// assertWellFormed checks that b is one valid JSON value, or one
// well-formed XML element that encoding/xml reads to the end.
func assertWellFormed(t *testing.T, f Format, b []byte) {
	t.Helper()
	if f == JSON {
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
		return
	}
	if err := checkXML(b); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

func checkXML(b []byte) error {
	if bytes.HasPrefix(b, []byte("<?xml")) {
		return errors.New("XML has a declaration")
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	roots := 0
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 {
				return errors.New("text outside the root element")
			}
		}
	}
	if roots != 1 {
		return errors.New("want exactly one root element")
	}
	return nil
}

// The structs below read JSON the way Spring Cloud's client does: a plain
// ObjectMapper that fails on unknown properties, with exact types. fargo's
// `@enabled,string` tag is the same constraint as EnabledString here.

type strictPort struct {
	Number  int    `json:"$"`
	Enabled string `json:"@enabled"`
}

type strictInstance struct {
	InstanceID                    string            `json:"instanceId"`
	HostName                      string            `json:"hostName"`
	App                           string            `json:"app"`
	IPAddr                        string            `json:"ipAddr"`
	SID                           string            `json:"sid"`
	Status                        string            `json:"status"`
	OverriddenStatus              string            `json:"overriddenStatus"`
	Port                          strictPort        `json:"port"`
	SecurePort                    strictPort        `json:"securePort"`
	CountryID                     int               `json:"countryId"`
	DataCenterInfo                map[string]any    `json:"dataCenterInfo"`
	LeaseInfo                     map[string]int64  `json:"leaseInfo"`
	Metadata                      map[string]string `json:"metadata"`
	AppGroupName                  string            `json:"appGroupName"`
	HomePageURL                   string            `json:"homePageUrl"`
	StatusPageURL                 string            `json:"statusPageUrl"`
	HealthCheckURL                string            `json:"healthCheckUrl"`
	SecureHealthCheckURL          string            `json:"secureHealthCheckUrl"`
	VIPAddress                    string            `json:"vipAddress"`
	SecureVIPAddress              string            `json:"secureVipAddress"`
	IsCoordinatingDiscoveryServer string            `json:"isCoordinatingDiscoveryServer"`
	LastUpdatedTimestamp          string            `json:"lastUpdatedTimestamp"`
	LastDirtyTimestamp            string            `json:"lastDirtyTimestamp"`
	ActionType                    string            `json:"actionType"`
	ASGName                       string            `json:"asgName"`
}

type strictApplications struct {
	Applications struct {
		VersionsDelta string `json:"versions__delta"`
		AppsHashcode  string `json:"apps__hashcode"`
		Application   []struct {
			Name     string           `json:"name"`
			Instance []strictInstance `json:"instance"`
		} `json:"application"`
	} `json:"applications"`
}

func strictDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("a strict reader fails: %v\n%s", err, b)
	}
}

func TestJSONSatisfiesStrictReaders(t *testing.T) {
	var got strictApplications
	strictDecode(t, EncodeApplications(JSON, testApplications()), &got)
	a := got.Applications
	if a.VersionsDelta != "1" || a.AppsHashcode != "DOWN_1_OUT_OF_SERVICE_1_STARTING_1_UP_1_" {
		t.Errorf("versions__delta %q, apps__hashcode %q", a.VersionsDelta, a.AppsHashcode)
	}
	if len(a.Application) != 2 || len(a.Application[0].Instance) != 2 {
		t.Fatalf("want 2 applications of 2 instances, got %+v", a.Application)
	}
	leaseKeys := []string{"renewalIntervalInSecs", "durationInSecs", "registrationTimestamp", "lastRenewalTimestamp", "evictionTimestamp", "serviceUpTimestamp"}
	for _, app := range a.Application {
		for _, in := range app.Instance {
			if in.App == "" || in.Port.Enabled == "" || in.SecurePort.Enabled == "" || in.Metadata == nil {
				t.Errorf("%s: app, port, securePort and metadata must be present: %+v", in.InstanceID, in)
			}
			if _, ok := in.DataCenterInfo["@class"].(string); !ok {
				t.Errorf("%s: dataCenterInfo has no @class", in.InstanceID)
			}
			if len(in.LeaseInfo) != len(leaseKeys) {
				t.Errorf("%s: leaseInfo has %d fields, want %v", in.InstanceID, len(in.LeaseInfo), leaseKeys)
			}
		}
	}
	// Exact shapes a real client checks.
	amazon := string(EncodeInstance(JSON, amazonInstance()))
	for _, want := range []string{
		`"port":{"$":8080,"@enabled":"true"}`, `"securePort":{"$":443,"@enabled":"false"}`,
		`"dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{"ami-id":"ami-1",`,
		`"countryId":1,`, `"isCoordinatingDiscoveryServer":"false"`, `"lastDirtyTimestamp":"1717171717000"`,
		`"overriddenStatus":"UNKNOWN"`,
	} {
		if !strings.Contains(amazon, want) {
			t.Errorf("missing %s in %s", want, amazon)
		}
	}
	if strings.Contains(amazon, `"sid"`) {
		t.Errorf(`sid "na" must be left out: %s`, amazon)
	}
	empty := string(EncodeInstance(JSON, emptyMetadataInstance()))
	for _, want := range []string{
		`"metadata":{"@class":"java.util.Collections$EmptyMap"}`,
		`"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"Netflix"},`,
	} {
		if !strings.Contains(empty, want) {
			t.Errorf("missing %s in %s", want, empty)
		}
	}
}

func TestEmptyListingsAreArrays(t *testing.T) {
	for _, apps := range []*heureka.Applications{nil, {}, {Apps: []*heureka.Application{nil}}} {
		got := string(EncodeApplications(JSON, apps))
		if want := `{"applications":{"versions__delta":"0","apps__hashcode":"","application":[]}}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	got := string(EncodeApplication(JSON, &heureka.Application{Name: "X", Instances: []*heureka.Instance{nil}}))
	if want := `{"application":{"name":"X","instance":[]}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	got = string(EncodeApplications(XML, nil))
	if want := `<applications><versions__delta>0</versions__delta><apps__hashcode></apps__hashcode></applications>`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// An Instance that never went through Normalize still encodes to what
// strict readers accept: closed enums, @class, never-null metadata.
func TestEncodeCanonicalises(t *testing.T) {
	in := &heureka.Instance{
		ID: "x", Status: "bogus", OverriddenStatus: "", ActionType: "RENAMED", SID: "unknown",
		DataCenter: heureka.DataCenterInfo{Name: "my-app", Metadata: heureka.MetadataOf(map[string]string{"instance-id": "leak"})},
		Metadata:   heureka.MetadataOf(map[string]string{"@class": "java.util.HashMap"}),
	}
	j := string(EncodeInstance(JSON, in))
	for _, want := range []string{
		`"status":"UNKNOWN","overriddenStatus":"UNKNOWN"`,
		`"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}`,
		`"metadata":{"@class":"java.util.Collections$EmptyMap"}`,
	} {
		if !strings.Contains(j, want) {
			t.Errorf("missing %s in %s", want, j)
		}
	}
	for _, bad := range []string{"RENAMED", "leak", `"sid"`, "HashMap", "my-app"} {
		if strings.Contains(j, bad) {
			t.Errorf("%s must not be written: %s", bad, j)
		}
	}
	var s strictInstance
	strictDecode(t, []byte(j[len(`{"instance":`):len(j)-1]), &s)

	x := string(EncodeInstance(XML, in))
	for _, want := range []string{
		"<status>UNKNOWN</status><overriddenstatus>UNKNOWN</overriddenstatus>",
		`<dataCenterInfo class="com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"><name>MyOwn</name></dataCenterInfo>`,
		`<metadata class="java.util.Collections$EmptyMap"/>`,
	} {
		if !strings.Contains(x, want) {
			t.Errorf("missing %s in %s", want, x)
		}
	}
}

func TestEncodeXMLShapes(t *testing.T) {
	x := string(EncodeInstance(XML, myOwnInstance()))
	for _, want := range []string{
		`<port enabled="true">9866</port><securePort enabled="false">9865</securePort>`,
		"<overriddenstatus>OUT_OF_SERVICE</overriddenstatus>",
		"<sid>s-17</sid>",
		"<disk__used>0.42</disk__used>",
		"<price_-usd>3</price_-usd>",
		"<note>a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt; e</note>",
		"<leaseInfo><renewalIntervalInSecs>10</renewalIntervalInSecs><durationInSecs>30</durationInSecs>",
	} {
		if !strings.Contains(x, want) {
			t.Errorf("missing %s in %s", want, x)
		}
	}
	if strings.Contains(x, "JSON only") {
		t.Errorf("a key that is not an XML name must be left out: %s", x)
	}
	if !strings.HasPrefix(x, "<instance><instanceId>") {
		t.Errorf("want a bare <instance> root without declaration: %s", x)
	}
}

func TestEncodeEscaping(t *testing.T) {
	weird := "q\"b\\s/\n\r\t\x00\x1f\x7f<&>\u2028\u2029é\xff\xfe" + string(rune(0xFFFE)) + "😀"
	in := &heureka.Instance{ID: weird, HostName: weird, Metadata: heureka.MetadataOf(map[string]string{weird: weird, "k": weird})}

	j := EncodeInstance(JSON, in)
	if !json.Valid(j) {
		t.Fatalf("invalid JSON: %q", j)
	}
	var back struct {
		Instance struct {
			ID string `json:"instanceId"`
		} `json:"instance"`
	}
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	wantJSON := "q\"b\\s/\n\r\t\x00\x1f\x7f<&>\u2028\u2029é\ufffd\ufffd" + string(rune(0xFFFE)) + "😀"
	if back.Instance.ID != wantJSON {
		t.Errorf("JSON string round trip:\n got %q\nwant %q", back.Instance.ID, wantJSON)
	}
	if !bytes.Contains(j, []byte(`\u0000\u001f`)) || !bytes.Contains(j, []byte(`\u2028\u2029`)) {
		t.Errorf("control characters and U+2028/9 must be escaped: %q", j)
	}

	x := EncodeInstance(XML, in)
	if err := checkXML(x); err != nil {
		t.Fatalf("%v: %q", err, x)
	}
	var xb struct {
		ID string `xml:"instanceId"`
	}
	if err := xml.Unmarshal(x, &xb); err != nil {
		t.Fatal(err)
	}
	wantXML := "q\"b\\s/\n\r\t\ufffd\ufffd\x7f<&>\u2028\u2029é\ufffd\ufffd\ufffd😀"
	if xb.ID != wantXML {
		t.Errorf("XML text round trip:\n got %q\nwant %q", xb.ID, wantXML)
	}
}

func TestValidXMLMetadataKey(t *testing.T) {
	for k, want := range map[string]bool{
		"zone": true, "management.port": true, "disk_used": true, "_x": true, "$x": true, "a-b.c_d$e9": true,
		"": false, "9lives": false, "-x": false, ".x": false, "a b": false, "a:b": false, "größe": false, "a/b": false,
	} {
		if got := ValidXMLMetadataKey(k); got != want {
			t.Errorf("ValidXMLMetadataKey(%q) = %v, want %v", k, got, want)
		}
	}
	for _, k := range []string{"a", "a_b", "a__b", "a_-b", "$", "_", "__", "a$_$", "_-_"} {
		if got := unescapeName(string(appendEscapedName(nil, k))); got != k {
			t.Errorf("unescape(escape(%q)) = %q", k, got)
		}
	}
}

// py_eureka_client reads XML with ElementTree and indexes attributes
// directly (attrib["class"], attrib["enabled"]): a missing one is a KeyError
// for the whole fetch. fargo reads <metadata> as raw inner XML.
func TestXMLSatisfiesReaders(t *testing.T) {
	type port struct {
		Enabled *string `xml:"enabled,attr"`
		Number  int     `xml:",chardata"`
	}
	var got struct {
		XMLName       xml.Name `xml:"applications"`
		VersionsDelta string   `xml:"versions__delta"`
		AppsHashcode  string   `xml:"apps__hashcode"`
		Application   []struct {
			Name     string `xml:"name"`
			Instance []struct {
				App            string `xml:"app"`
				Port           port   `xml:"port"`
				SecurePort     port   `xml:"securePort"`
				CountryID      int    `xml:"countryId"`
				DataCenterInfo struct {
					Class *string `xml:"class,attr"`
					Name  string  `xml:"name"`
				} `xml:"dataCenterInfo"`
				Metadata struct {
					Inner string `xml:",innerxml"`
				} `xml:"metadata"`
			} `xml:"instance"`
		} `xml:"application"`
	}
	if err := xml.Unmarshal(EncodeApplications(XML, testApplications()), &got); err != nil {
		t.Fatal(err)
	}
	if got.VersionsDelta != "1" || got.AppsHashcode != "DOWN_1_OUT_OF_SERVICE_1_STARTING_1_UP_1_" || len(got.Application) != 2 {
		t.Fatalf("got %+v", got)
	}
	for _, app := range got.Application {
		for _, in := range app.Instance {
			if in.App == "" || in.Port.Enabled == nil || in.SecurePort.Enabled == nil || in.DataCenterInfo.Class == nil || in.CountryID != 1 {
				t.Errorf("%s: app, port/securePort enabled and dataCenterInfo class are required: %+v", app.Name, in)
			}
			if strings.TrimSpace(in.Metadata.Inner) != in.Metadata.Inner {
				t.Errorf("metadata must not hold bare white space: %q", in.Metadata.Inner)
			}
		}
	}
}

// TestErrorBodyReadsBackAsItsMessage decodes error bodies with the
// standard library's decoders: whatever the message holds (quotes, markup,
// control characters, bad UTF-8), the body is well-formed and says it.
func TestErrorBodyReadsBackAsItsMessage(t *testing.T) {
	for _, msg := range []string{
		"instance HDFS-DATANODE.PROD/dn-1:9866 is not registered",
		`a "quoted" <tag> & 'apostrophe' \ backslash`,
		"tab\tnewline\nreturn\r bell\x07 nul\x00",
		"bad utf-8 \xff\xfe and U+2028 \u2028 and ü",
		"",
	} {
		var j struct{ Error string }
		body := AppendError(nil, JSON, msg)
		if err := json.Unmarshal(body, &j); err != nil {
			t.Fatalf("JSON body %q for %q: %v", body, msg, err)
		}
		// Each byte of bad UTF-8 is one U+FFFD, as []rune reads it.
		if want := string([]rune(msg)); j.Error != want {
			t.Errorf("JSON body %q reads back %q, want %q", body, j.Error, want)
		}
		var x struct {
			XMLName xml.Name `xml:"error"`
			Message string   `xml:"message"`
		}
		body = AppendError([]byte("kept"), XML, msg)
		if !bytes.HasPrefix(body, []byte("kept<error>")) {
			t.Fatalf("XML body %q does not append to its buffer", body)
		}
		if err := xml.Unmarshal(body[len("kept"):], &x); err != nil {
			t.Fatalf("XML body %q for %q: %v", body, msg, err)
		}
		if strings.ContainsAny(msg, "\x00\x07\xff") {
			// XML 1.0 has no way to say these; the body says U+FFFD.
			if !strings.Contains(x.Message, "\ufffd") {
				t.Errorf("XML body %q reads back %q: want U+FFFD for what XML cannot carry", body, x.Message)
			}
			continue
		}
		if x.Message != msg {
			t.Errorf("XML body %q reads back %q, want %q", body, x.Message, msg)
		}
	}
}

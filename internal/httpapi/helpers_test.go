package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
)

// testServer is an httpapi.Server over a real registry, on a loopback
// httptest server.
type testServer struct {
	t      *testing.T
	url    string
	reg    *registry.Registry
	client *http.Client
}

func newTestServer(t *testing.T, mods ...func(*httpapi.Config)) *testServer {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	rcfg := registry.DefaultConfig()
	rcfg.Logger = logger
	reg, err := registry.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = reg.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	cfg := httpapi.DefaultConfig()
	for _, m := range mods {
		m(&cfg)
	}
	hs := httptest.NewServer(newAPI(t, cfg, reg, logger).Handler())
	t.Cleanup(hs.Close)
	// DisableCompression: the tests ask for gzip themselves and look at the
	// raw answer.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	return &testServer{t: t, url: hs.URL, reg: reg, client: client}
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

func (r *response) String() string {
	return fmt.Sprintf("%d %s", r.code, bytes.TrimSpace(r.body))
}

// do sends one request and fails the test if it cannot. hdr is name/value
// pairs.
func (ts *testServer) do(method, path string, body []byte, hdr ...string) *response {
	ts.t.Helper()
	r, err := ts.send(method, path, body, hdr...)
	if err != nil {
		ts.t.Fatal(err)
	}
	return r
}

// send is do for goroutines other than the test's: it returns the error.
func (ts *testServer) send(method, path string, body []byte, hdr ...string) (*response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Transfer-Encoding") {
			req.ContentLength = -1 // send chunked: the server sees no length
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading body: %w", method, path, err)
	}
	return &response{code: resp.StatusCode, header: resp.Header, body: b}, nil
}

// expect sends a request and fails the test unless it gets code.
func (ts *testServer) expect(code int, method, path string, body []byte, hdr ...string) *response {
	ts.t.Helper()
	r := ts.do(method, path, body, hdr...)
	if r.code != code {
		ts.t.Fatalf("%s %s: got %s, want %d", method, path, r, code)
	}
	return r
}

const (
	jsonAccept = "application/json"
	xmlAccept  = "application/xml"
)

// registerJSON registers in through POST /eureka/v2/apps/{app}.
func (ts *testServer) registerJSON(in inst) {
	ts.t.Helper()
	ts.expect(http.StatusNoContent, "POST", "/eureka/v2/apps/"+in.app, in.json(), "Content-Type", jsonAccept)
}

// apps returns GET /eureka/v2/apps in JSON, to compare registry contents.
func (ts *testServer) apps() string {
	ts.t.Helper()
	return string(ts.expect(http.StatusOK, "GET", "/eureka/v2/apps", nil, "Accept", jsonAccept).body)
}

// inst describes a registration body.
type inst struct {
	app, id, vip string
	status       string
	metadata     map[string]string
	lastDirty    int64
	omitApp      bool
}

func newInst(app, id string) inst {
	return inst{app: app, id: id, vip: strings.ToLower(app), status: "UP", lastDirty: 1717171717000}
}

func (i inst) fields() map[string]any {
	m := map[string]any{
		"instanceId":         i.id,
		"hostName":           "10.0.0.5",
		"ipAddr":             "10.0.0.5",
		"status":             i.status,
		"overriddenStatus":   "UNKNOWN",
		"port":               map[string]any{"$": 8080, "@enabled": "true"},
		"securePort":         map[string]any{"$": 443, "@enabled": "false"},
		"countryId":          1,
		"dataCenterInfo":     map[string]any{"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
		"leaseInfo":          map[string]any{"renewalIntervalInSecs": 30, "durationInSecs": 90},
		"vipAddress":         i.vip,
		"secureVipAddress":   i.vip,
		"lastDirtyTimestamp": strconv.FormatInt(i.lastDirty, 10),
	}
	if !i.omitApp {
		m["app"] = i.app
	}
	if i.metadata != nil {
		m["metadata"] = i.metadata
	}
	return m
}

func (i inst) json() []byte {
	b, err := json.Marshal(map[string]any{"instance": i.fields()})
	if err != nil {
		panic(err)
	}
	return b
}

func (i inst) xml() []byte {
	var b strings.Builder
	elem := func(name, v string) {
		b.WriteString("<" + name + ">")
		_ = xml.EscapeText(&b, []byte(v))
		b.WriteString("</" + name + ">")
	}
	b.WriteString("<instance>")
	elem("instanceId", i.id)
	elem("hostName", "10.0.0.5")
	if !i.omitApp {
		elem("app", i.app)
	}
	elem("ipAddr", "10.0.0.5")
	elem("status", i.status)
	elem("overriddenstatus", "UNKNOWN")
	b.WriteString(`<port enabled="true">8080</port><securePort enabled="false">443</securePort>`)
	elem("countryId", "1")
	b.WriteString(`<dataCenterInfo class="com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"><name>MyOwn</name></dataCenterInfo>`)
	b.WriteString(`<leaseInfo><renewalIntervalInSecs>30</renewalIntervalInSecs><durationInSecs>90</durationInSecs></leaseInfo>`)
	if len(i.metadata) > 0 {
		b.WriteString("<metadata>")
		for _, k := range slices.Sorted(maps.Keys(i.metadata)) {
			elem(k, i.metadata[k])
		}
		b.WriteString("</metadata>")
	}
	elem("vipAddress", i.vip)
	elem("secureVipAddress", i.vip)
	elem("lastDirtyTimestamp", strconv.FormatInt(i.lastDirty, 10))
	b.WriteString("</instance>")
	return []byte(b.String())
}

// statuses reads an Applications, Application or Instance body (JSON or
// XML) and returns instance ID → status.
func statuses(t *testing.T, body []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '<' {
		type xinst struct {
			ID     string `xml:"instanceId"`
			Status string `xml:"status"`
		}
		type xapp struct {
			Instances []xinst `xml:"instance"`
		}
		var doc struct {
			XMLName      xml.Name
			Applications []xapp  `xml:"application"`
			Instances    []xinst `xml:"instance"`
			ID           string  `xml:"instanceId"`
			Status       string  `xml:"status"`
		}
		if err := xml.Unmarshal(body, &doc); err != nil {
			t.Fatalf("bad XML %q: %v", body, err)
		}
		if doc.XMLName.Local == "instance" {
			out[doc.ID] = doc.Status
		}
		for _, a := range doc.Applications {
			for _, in := range a.Instances {
				out[in.ID] = in.Status
			}
		}
		for _, in := range doc.Instances {
			out[in.ID] = in.Status
		}
		return out
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("bad JSON %q: %v", body, err)
	}
	var walkInstances func(v any)
	walkInstances = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walkInstances(e)
			}
		case map[string]any:
			id, _ := v["instanceId"].(string)
			st, _ := v["status"].(string)
			out[id] = st
		}
	}
	walkApps := func(v any) {
		var list []any
		switch v := v.(type) {
		case []any:
			list = v
		case map[string]any:
			list = []any{v}
		}
		for _, a := range list {
			if a, ok := a.(map[string]any); ok {
				walkInstances(a["instance"])
			}
		}
	}
	switch {
	case doc["applications"] != nil:
		apps, _ := doc["applications"].(map[string]any)
		walkApps(apps["application"])
	case doc["application"] != nil:
		walkApps(doc["application"])
	case doc["instance"] != nil:
		walkInstances(doc["instance"])
	}
	return out
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gunzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newAPI is httpapi.New for tests: an invalid config fails the test.
func newAPI(tb testing.TB, cfg httpapi.Config, reg *registry.Registry, logger *slog.Logger) *httpapi.Server {
	tb.Helper()
	api, err := httpapi.New(cfg, reg, logger)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(api.CloseStreams) // stops the background encoder, which holds reg
	return api
}

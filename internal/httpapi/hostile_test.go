package httpapi_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
)

// hostile is one malformed or hostile request. raw, when set, is sent on a
// bare TCP connection as it is (for what net/http's client refuses to send).
type hostile struct {
	name         string
	method, path string
	body         []byte
	hdr          []string
	raw          string
	// batch: the answer is Eureka's 200 with a refusal per item.
	batch bool
}

// hostileServer serves like `heureka server`: the same header limit and
// read timeouts as cmd/heureka sets on its http.Server.
func hostileServer(t *testing.T, authOn bool) (ts *testServer, opsAuthz string) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.DefaultConfig()
	cfg.WriteRate = 0 // the battery is not about the rate limit
	authz := ""
	if authOn {
		path := filepath.Join(t.TempDir(), "credentials.json")
		authtest.WriteCredentials(t, path, auth.ReadsAuthenticated, uDN, uOps, uPeer)
		store := auth.NewStore(path, logger)
		if err := store.Load(); err != nil {
			t.Fatal(err)
		}
		cfg.Auth = store
		authz = header(uOps)
	}
	api := newAPI(t, cfg, reg, logger)
	hs := httptest.NewUnstartedServer(api.Handler())
	hs.Config.MaxHeaderBytes = 64 << 10
	hs.Config.ReadHeaderTimeout = 10 * time.Second
	hs.Config.ReadTimeout = 30 * time.Second
	hs.Start()
	t.Cleanup(func() { api.CloseStreams(); hs.Close() })
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	return &testServer{t: t, url: hs.URL, reg: reg, client: client}, authz
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// hostileRequests is the battery. Every one must leave the registry as it
// was and be answered with a 4xx that carries a message.
func hostileRequests() []hostile {
	dn := "/eureka/apps/HDFS-DATANODE.PROD"
	good := newInst("HDFS-DATANODE.PROD", "dn9").json()
	// withField is a good registration with one field's JSON replaced
	// (value is raw JSON, or invalid bytes in a string).
	withField := func(field, value string) []byte {
		m := newInst("HDFS-DATANODE.PROD", "dn9").fields()
		m[field] = "\x00PLACEHOLDER"
		b, err := json.Marshal(map[string]any{"instance": m})
		if err != nil {
			panic(err)
		}
		return bytes.Replace(b, []byte(`"\u0000PLACEHOLDER"`), []byte(value), 1)
	}
	ctJSON := []string{"Content-Type", "application/json"}
	ctXML := []string{"Content-Type", "application/xml"}
	long := strings.Repeat("x", 20_000)
	var hs []hostile
	add := func(name, method, path string, body []byte, hdr ...string) {
		hs = append(hs, hostile{name: name, method: method, path: path, body: body, hdr: hdr})
	}
	raw := func(name, req string) { hs = append(hs, hostile{name: name, raw: req}) }

	// Sizes.
	add("oversized body", "POST", dn, bytes.Repeat([]byte("a"), 2<<20), ctJSON...)
	add("oversized chunked body", "POST", dn, bytes.Repeat([]byte(" "), 2<<20), "Content-Type", "application/json", "Transfer-Encoding", "chunked")
	add("gzip bomb", "POST", dn, gz(bytes.Repeat([]byte(" "), 64<<20)), "Content-Type", "application/json", "Content-Encoding", "gzip")
	add("bad gzip", "POST", dn, good, "Content-Type", "application/json", "Content-Encoding", "gzip")
	add("truncated gzip", "POST", dn, gz(good)[:40], "Content-Type", "application/json", "Content-Encoding", "gzip")
	add("unknown encoding", "POST", dn, good, "Content-Type", "application/json", "Content-Encoding", "br")
	raw("body shorter than Content-Length", "POST "+dn+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n"+string(good))
	raw("Content-Length and chunked", "POST "+dn+" HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n")
	raw("two Content-Lengths", "POST "+dn+" HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Length: 20\r\nConnection: close\r\n\r\n0123456789")

	// Truncated and malformed.
	add("empty body", "POST", dn, []byte{}, ctJSON...)
	add("truncated JSON", "POST", dn, good[:len(good)/2], ctJSON...)
	add("truncated XML", "POST", dn, newInst("HDFS-DATANODE.PROD", "dn9").xml()[:100], ctXML...)
	add("not JSON or XML", "POST", dn, []byte("hello"), "Content-Type", "text/plain")
	add("JSON null", "POST", dn, []byte("null"), ctJSON...)
	add("JSON array", "POST", dn, []byte("[]"), ctJSON...)
	add("two JSON values", "POST", dn, append(append([]byte{}, good...), good...), ctJSON...)

	// Wrong types. (A status that is not one of Eureka's is read as
	// UNKNOWN, as Eureka's clients and servers do: that is lenient input,
	// not an error, so it is not in this list.)
	for _, c := range []struct{ field, value string }{
		{"port", `"eighty"`}, {"port", `{"$":"99999","@enabled":"true"}`}, {"metadata", "[1,2]"},
		{"leaseInfo", `"long"`}, {"app", `{"a":1}`}, {"hostName", "null"}, {"lastDirtyTimestamp", `"yesterday"`},
		{"dataCenterInfo", "7"}, {"metadata", `{"k":{"nested":1}}`},
	} {
		add("wrong type: "+c.field+"="+c.value, "POST", dn, withField(c.field, c.value), ctJSON...)
	}
	add("instance is a list", "POST", dn, []byte(`{"instance":[]}`), ctJSON...)

	// Deep nesting.
	add("deeply nested JSON", "POST", dn, []byte(`{"instance":`+strings.Repeat("[", 200_000)), ctJSON...)
	add("deeply nested JSON metadata", "POST", dn, withField("metadata", `{"a":`+strings.Repeat(`{"a":`, 50_000)+`1`+strings.Repeat("}", 50_001)), ctJSON...)
	add("deeply nested XML", "POST", dn, []byte("<instance>"+strings.Repeat("<a>", 100_000)), ctXML...)
	add("XML entity expansion", "POST", dn, []byte(`<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><instance><app>&b;</app></instance>`), ctXML...)
	add("XML external entity", "POST", dn, []byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><instance><hostName>&e;</hostName></instance>`), ctXML...)

	// Invalid UTF-8 and control characters.
	add("invalid UTF-8 in JSON", "POST", dn, withField("hostName", "\"\xff\xfe\""), ctJSON...)
	add("invalid UTF-8 app in XML", "POST", dn, []byte("<instance><app>HDFS-DATANODE.PROD\xff</app></instance>"), ctXML...)
	add("NUL in instance ID", "POST", dn, withField("instanceId", `"dn\u00009"`), ctJSON...)
	add("invalid UTF-8 metadata value", "PUT", dn+"/dn1/metadata?k=%FF%FE", nil)
	add("control character in metadata value", "PUT", dn+"/dn1/metadata?k=a%00b", nil)
	add("invalid UTF-8 metadata key", "PUT", dn+"/dn1/metadata?%FF=v", nil)
	add("too much metadata", "PUT", dn+"/dn1/metadata?k="+strings.Repeat("v", 9000), nil)

	// Path tricks.
	add("dot-dot to another app", "DELETE", dn+"/dn1/../../HDFS-NAMENODE.PROD/nn1", nil)
	raw("raw dot-dot", "DELETE /eureka/apps/HDFS-DATANODE.PROD/../HDFS-NAMENODE.PROD/nn1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	add("encoded dot-dot", "DELETE", dn+"/%2e%2e/nn1", nil)
	add("encoded slash", "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD%2Fnn1", nil)
	add("double-encoded slash", "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD%252Fnn1", nil)
	add("backslash", "DELETE", `/eureka/apps/HDFS-NAMENODE.PROD\nn1`, nil)
	add("NUL in path", "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nn1%00", nil)
	raw("raw NUL in path", "DELETE /eureka/apps/HDFS-NAMENODE.PROD/nn1\x00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	raw("bad percent-encoding", "DELETE /eureka/apps/HDFS-NAMENODE.PROD/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	raw("absolute URL to another host", "DELETE http://evil.example/eureka/apps/HDFS-NAMENODE.PROD/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	add("very long path", "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/"+long, nil)
	add("very long app", "POST", "/eureka/apps/"+long, good, ctJSON...)
	add("many segments", "GET", strings.Repeat("/a", 10_000), nil)
	add("app mismatch", "POST", "/eureka/apps/HDFS-NAMENODE.PROD", good, ctJSON...)

	// Timestamps and queries.
	add("lastDirtyTimestamp from the future", "PUT", dn+"/dn1?lastDirtyTimestamp=99999999999999", nil)
	add("replicated renew with an older copy", "PUT", dn+"/dn1?lastDirtyTimestamp=1", nil, "x-netflix-discovery-replication", "true")
	add("lastDirtyTimestamp not a number", "PUT", dn+"/dn1?lastDirtyTimestamp=soon", nil)
	add("lastDirtyTimestamp negative", "PUT", dn+"/dn1/status?value=DOWN&lastDirtyTimestamp=-5", nil)
	add("lastDirtyTimestamp overflows", "PUT", dn+"/dn1/status?value=DOWN&lastDirtyTimestamp=99999999999999999999999", nil)
	add("status missing", "PUT", dn+"/dn1/status", nil)
	add("status unknown", "PUT", dn+"/dn1/status?value=%00UP", nil)
	add("status of nobody", "PUT", dn+"/nobody/status?value=DOWN", nil)
	add("watch from a negative version", "GET", "/v1/watch?since=-1", nil)
	add("watch with a bad Last-Event-ID", "GET", "/v1/watch", nil, "Last-Event-ID", "zzz")
	add("watch a huge app name", "GET", "/v1/watch?app="+long, nil)

	// Methods and headers.
	add("TRACE", "TRACE", "/eureka/apps", nil)
	add("PATCH", "PATCH", dn+"/dn1", []byte("{}"))
	add("huge header", "GET", "/eureka/apps", nil, "X-Pad", strings.Repeat("p", 100<<10))
	raw("header without a colon", "GET /eureka/apps HTTP/1.1\r\nHost: x\r\nno colon here\r\nConnection: close\r\n\r\n")
	raw("header with a NUL", "GET /eureka/apps HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\nConnection: close\r\n\r\n")
	raw("HTTP/0.9", "GET /eureka/apps\r\n\r\n")
	raw("no Host", "GET /eureka/apps HTTP/1.1\r\nConnection: close\r\n\r\n")

	// Peer batches: Eureka's answer is 200 with a status per item; none
	// may take effect.
	for _, b := range []string{
		`{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"dn1","action":"Nuke"}]}`,
		`{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"dn1","action":"Register"}]}`,
		`{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"dn1","action":"StatusUpdate"}]}`,
		`{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"nope","action":"Cancel"}]}`,
		`{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"dn1","action":"Heartbeat","lastDirtyTimestamp":99999999999999}]}`,
	} {
		hs = append(hs, hostile{name: "batch " + b[20:70], method: "POST", path: "/eureka/peerreplication/batch", body: []byte(b), hdr: ctJSON, batch: true})
	}
	add("batch not a list", "POST", "/eureka/peerreplication/batch", []byte(`{"replicationList":{}}`), ctJSON...)
	add("batch truncated", "POST", "/eureka/peerreplication/batch", []byte(`{"replicationList":[{"appName":`), ctJSON...)
	return hs
}

// TestHostileRequests sends the battery, with auth off and with auth on
// (as an operator, so that every parser is reached), and checks after each
// request that the registry is unchanged, that the answer is a 4xx with a
// message, and that the server still serves.
func TestHostileRequests(t *testing.T) {
	for _, authOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("auth=%v", authOn), func(t *testing.T) {
			ts, authz := hostileServer(t, authOn)
			var creds, peerCreds []string
			if authOn {
				creds = []string{"Authorization", authz}
				peerCreds = []string{"Authorization", header(uPeer)}
			}
			seedAll(t, ts)
			before, version := snapshotOf(t, ts, creds)
			for _, h := range hostileRequests() {
				c := creds
				if strings.Contains(h.path, "peerreplication") || slices.Contains(h.hdr, "x-netflix-discovery-replication") {
					c = peerCreds
				}
				code, body, ctype := sendHostile(t, ts, h, c)
				t.Logf("%-40s %d %.90s", h.name, code, bytes.TrimSpace(body))
				switch {
				case code == http.StatusConflict && bytes.Contains(body, []byte(`"instanceId":"dn1"`)):
					// Eureka's answer to a peer with an older copy: ours.
				case h.batch:
					if code != 200 || strings.Contains(string(body), `"statusCode":200`) {
						t.Errorf("%s: %d %s, want 200 with every item refused", h.name, code, body)
					}
				case code < 400 || code >= 500:
					t.Fatalf("%s: got %d %.200s, want a 4xx", h.name, code, body)
				case len(bytes.TrimSpace(body)) == 0:
					t.Errorf("%s: %d without a message", h.name, code)
				case strings.Contains(ctype, "json") && !bytes.Contains(body, []byte(`"error"`)):
					t.Errorf("%s: %d JSON answer without an error message: %.200s", h.name, code, body)
				}
				after, v := snapshotOf(t, ts, creds)
				if v != version || after != before {
					t.Fatalf("%s changed the registry (version %d → %d):\nbefore %.2000s\nafter  %.2000s", h.name, version, v, before, after)
				}
			}
		})
	}
}

// TestBadAuthHeaders: with auth on, malformed credentials are 401 with a
// message, never a crash, and never a write.
func TestBadAuthHeaders(t *testing.T) {
	ts, authz := hostileServer(t, true)
	seedAll(t, ts)
	before, version := snapshotOf(t, ts, []string{"Authorization", authz})
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, a := range []string{
		"", "Basic", "Basic ", "Basic !!!", "Basic " + b64("ops"), "Basic " + b64(":ops-pass"), "Basic " + b64("ops:"),
		"Basic " + b64("ops:ops-pass\x00"), "Basic " + b64("o\x00ps:ops-pass"), "Basic " + b64("ops:"+strings.Repeat("p", 4000)),
		"Basic " + b64("\xff\xfe:x"), "Basic " + strings.Repeat("A", 40_000), "Bearer", "Bearer  ", "Bearer " + strings.Repeat("t", 5000),
		"Bearer hk_\xff", "Digest username=\"ops\"", "NTLM TlRMTVNTUAABAAAA", "ops:ops-pass", strings.Repeat("B", 60_000),
	} {
		r := ts.do("DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nn1", nil, "Authorization", a, "Accept", jsonAccept)
		if r.code != 401 && r.code != 431 && r.code != 400 {
			t.Errorf("Authorization %.60q: %s, want 401", a, r)
		}
		if r.code == 401 {
			errorMessage(t, r)
		}
		if after, v := snapshotOf(t, ts, []string{"Authorization", authz}); v != version || after != before {
			t.Fatalf("Authorization %.60q changed the registry", a)
		}
	}
	// Two headers, one of them good: refused, not the good one picked.
	r := ts.do("DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nn1", nil)
	if r.code != 401 {
		t.Fatalf("no credentials: %s", r)
	}
	code, body, _ := sendHostile(t, ts, hostile{name: "two", raw: "DELETE /eureka/apps/HDFS-NAMENODE.PROD/nn1 HTTP/1.1\r\nHost: x\r\nAuthorization: " +
		authz + "\r\nAuthorization: Basic " + b64("dn-agent:dn-pass") + "\r\nConnection: close\r\n\r\n"}, nil)
	if code != 401 || !bytes.Contains(body, []byte("2 Authorization headers")) {
		t.Fatalf("two Authorization headers: %d %s", code, body)
	}
}

func seedAll(t *testing.T, ts *testServer) {
	t.Helper()
	(&authServer{testServer: ts}).seed()
}

// snapshotOf is the registry as a client sees it, and its version.
func snapshotOf(t *testing.T, ts *testServer, creds []string) (string, uint64) {
	t.Helper()
	r := ts.expect(200, "GET", "/eureka/apps", nil, append([]string{"Accept", jsonAccept}, creds...)...)
	return string(r.body), ts.reg.Snapshot().Version
}

// sendHostile sends h, with creds unless h is raw, and returns the status,
// body and content type.
func sendHostile(t *testing.T, ts *testServer, h hostile, creds []string) (int, []byte, string) {
	t.Helper()
	if h.raw == "" {
		r, err := ts.send(h.method, h.path, h.body, append(append([]string{"Accept", jsonAccept}, h.hdr...), creds...)...)
		if err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		return r.code, r.body, r.header.Get("Content-Type")
	}
	u, _ := url.Parse(ts.url)
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	raw := h.raw
	if len(creds) == 2 && !strings.Contains(raw, "Authorization:") {
		raw = strings.Replace(raw, "\r\nHost: x\r\n", "\r\nHost: x\r\nAuthorization: "+creds[1]+"\r\n", 1)
	}
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatalf("%s: %v", h.name, err)
	}
	_ = c.(*net.TCPConn).CloseWrite() // a body shorter than announced ends here
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: no HTTP answer: %v", h.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header.Get("Content-Type")
}

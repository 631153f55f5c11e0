package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

// formats runs f for each wire format with the Accept header that selects it.
func formats(t *testing.T, f func(t *testing.T, accept, contentType string)) {
	t.Run("json", func(t *testing.T) { f(t, jsonAccept, "application/json") })
	t.Run("xml", func(t *testing.T) { f(t, xmlAccept, "application/xml") })
}

// TestEndpoints walks every Eureka endpoint through its life cycle and checks
// status codes and content types in both formats.
func TestEndpoints(t *testing.T) {
	formats(t, func(t *testing.T, accept, ctype string) {
		ts := newTestServer(t)
		const id = "10.0.0.5:orders:8080"
		in := newInst("orders", id)
		in.app = "ORDERS"
		body := in.json()
		if accept == xmlAccept {
			body = in.xml()
		}
		h := []string{"Accept", accept, "Content-Type", accept}

		type step struct {
			method, path string
			want         int
			body         bool   // a payload in the read format is expected
			contains     string // the body must contain this
		}
		steps := []step{
			{"GET", "/eureka/v2/apps/ORDERS", 404, false, ""},
			{"GET", "/eureka/v2/apps/ORDERS/" + id, 404, false, ""},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id, 404, false, ""},
			{"POST", "/eureka/v2/apps/ORDERS", 204, false, ""},
			{"GET", "/eureka/v2/apps", 200, true, id},
			{"GET", "/eureka/v2/apps?regions=us-east-1", 200, true, id},
			{"GET", "/eureka/v2/apps/delta", 200, true, id},
			{"GET", "/eureka/v2/apps/ORDERS", 200, true, id},
			{"GET", "/eureka/v2/apps/orders", 200, true, id}, // app names are upper-cased
			{"GET", "/eureka/v2/apps/NOPE", 404, false, ""},
			{"GET", "/eureka/v2/apps/ORDERS/" + id, 200, true, id},
			{"GET", "/eureka/v2/apps/ORDERS/nope", 404, false, ""},
			{"GET", "/eureka/v2/instances/" + id, 200, true, id},
			{"GET", "/eureka/v2/instances/nope", 404, false, ""},
			{"GET", "/eureka/v2/vips/orders", 200, true, id},
			{"GET", "/eureka/v2/vips/nothing-here", 200, true, ""},
			{"GET", "/eureka/v2/svips/orders", 200, true, id},
			{"GET", "/eureka/v2/svips/nothing-here", 200, true, ""},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id, 200, false, ""},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id + "?status=UP&lastDirtyTimestamp=1717171717000", 200, false, ""},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id + "/status?value=OUT_OF_SERVICE", 200, false, ""},
			{"GET", "/eureka/v2/apps/ORDERS/" + id, 200, true, "OUT_OF_SERVICE"},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id + "/status", 400, false, "value"},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id + "/status?value=SIDEWAYS", 400, false, "SIDEWAYS"},
			{"PUT", "/eureka/v2/apps/ORDERS/nope/status?value=UP", 404, false, ""},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id + "/status?value=UP", 200, false, ""},
			{"DELETE", "/eureka/v2/apps/ORDERS/" + id + "/status?value=UP", 200, false, ""},
			{"DELETE", "/eureka/v2/apps/ORDERS/nope/status", 404, false, ""},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id + "/metadata?zone=z1&zone=z2&rack=r7", 200, false, ""},
			{"GET", "/eureka/v2/apps/ORDERS/" + id, 200, true, "r7"},
			{"PUT", "/eureka/v2/apps/ORDERS/nope/metadata?zone=z1", 404, false, ""},
			{"DELETE", "/eureka/v2/apps/ORDERS/" + id, 200, false, ""},
			{"DELETE", "/eureka/v2/apps/ORDERS/" + id, 404, false, ""},
			{"PUT", "/eureka/v2/apps/ORDERS/" + id, 404, false, ""},
			{"GET", "/eureka/v2/apps/ORDERS", 404, false, ""},
			{"GET", "/eureka/v2/apps", 200, true, ""},
		}
		for _, s := range steps {
			var b []byte
			if s.method == "POST" {
				b = body
			}
			r := ts.do(s.method, s.path, b, h...)
			if r.code != s.want {
				t.Fatalf("%s %s: got %s, want %d", s.method, s.path, r, s.want)
			}
			switch {
			case s.want == 204:
				if len(r.body) != 0 {
					t.Errorf("%s %s: 204 with a body %q", s.method, s.path, r.body)
				}
			case s.body || s.want >= 400:
				if got := r.header.Get("Content-Type"); got != ctype {
					t.Errorf("%s %s: Content-Type %q, want %q", s.method, s.path, got, ctype)
				}
			default: // renew, cancel, status, metadata: 200, empty
				if len(r.body) != 0 || r.header.Get("Content-Length") != "0" {
					t.Errorf("%s %s: want an empty body with Content-Length 0, got %q (Content-Length %q)",
						s.method, s.path, r.body, r.header.Get("Content-Length"))
				}
			}
			if s.contains != "" && !bytes.Contains(r.body, []byte(s.contains)) {
				t.Errorf("%s %s: body %q lacks %q", s.method, s.path, r.body, s.contains)
			}
			if s.want >= 400 {
				checkErrorBody(t, r, accept)
			}
		}
	})
}

func checkErrorBody(t *testing.T, r *response, accept string) {
	t.Helper()
	if accept == jsonAccept {
		var e struct{ Error string }
		if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" {
			t.Errorf("error body %q is not {\"error\":\"…\"}: %v", r.body, err)
		}
		return
	}
	if !bytes.HasPrefix(r.body, []byte("<error><message>")) || !bytes.HasSuffix(r.body, []byte("</message></error>")) {
		t.Errorf("error body %q is not <error><message>…</message></error>", r.body)
	}
}

func TestRegisterXMLAndJSONBodiesAnyContentType(t *testing.T) {
	ts := newTestServer(t)
	a, b := newInst("ORDERS", "a"), newInst("ORDERS", "b")
	ts.expect(204, "POST", "/eureka/apps/ORDERS", a.xml(), "Content-Type", "text/plain")
	ts.expect(204, "POST", "/eureka/apps/ORDERS", b.json()) // no Content-Type at all
	got := statuses(t, ts.expect(200, "GET", "/eureka/apps/ORDERS", nil).body)
	if got["a"] != "UP" || got["b"] != "UP" {
		t.Fatalf("after two registrations GET /apps/ORDERS has %v", got)
	}
	// Without Accept the answer is XML, as Eureka's.
	r := ts.expect(200, "GET", "/eureka/apps/ORDERS/a", nil)
	if ct := r.header.Get("Content-Type"); ct != "application/xml" {
		t.Fatalf("Content-Type without Accept: %q, want application/xml", ct)
	}
}

// TestPaths checks every prefix with trailing and doubled slashes.
func TestPaths(t *testing.T) {
	ts := newTestServer(t)
	ts.registerJSON(newInst("ORDERS", "host:orders:8080"))
	for _, prefix := range []string{"/eureka/v2", "/eureka/v1", "/eureka", "/v2", "/v1", ""} {
		for _, p := range []string{
			prefix + "/apps",
			prefix + "/apps/",
			prefix + "//apps//",
			"/" + prefix + "/apps/ORDERS/",
			prefix + "/apps//ORDERS//host:orders:8080/",
			prefix + "/instances/host:orders:8080",
			prefix + "/apps/delta/",
			prefix + "/vips/orders/",
		} {
			r := ts.do("GET", p, nil, "Accept", jsonAccept)
			if r.code != 200 {
				t.Errorf("GET %s: %s, want 200", p, r)
			}
		}
	}
	// "/" is the dashboard's page (internal/dashboard).
	for _, p := range []string{"/eureka", "/eureka/v2", "/eureka/v2/nope", "/eureka/v3/apps",
		"/eureka/v2/apps/ORDERS/host:orders:8080/status/extra", "/healthz/x", "/eureka/healthz"} {
		r := ts.do("GET", p, nil, "Accept", jsonAccept)
		if r.code != 404 {
			t.Errorf("GET %s: %s, want 404", p, r)
		}
		checkErrorBody(t, r, jsonAccept)
	}
	// Instance IDs are case-sensitive and percent-decoded.
	ts.expect(404, "GET", "/eureka/apps/ORDERS/HOST:ORDERS:8080", nil)
	ts.expect(200, "GET", "/eureka/apps/ORDERS/host%3Aorders%3A8080", nil)
}

func TestMethodNotAllowed(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/eureka/v2/apps", "GET, HEAD"},
		{"POST", "/eureka/v2/apps/delta", "GET, HEAD"},
		{"PATCH", "/eureka/apps/A/B", "DELETE, GET, HEAD, PUT"},
		{"GET", "/eureka/apps/A/B/status", "DELETE, PUT"},
		{"POST", "/eureka/apps/A/B/metadata", "PUT"},
		{"PUT", "/eureka/vips/x", "GET, HEAD"},
		{"POST", "/healthz", "GET, HEAD"},
	} {
		r := ts.do(c.method, c.path, nil, "Accept", jsonAccept)
		if r.code != 405 {
			t.Errorf("%s %s: %s, want 405", c.method, c.path, r)
			continue
		}
		if got := r.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
		checkErrorBody(t, r, jsonAccept)
		if !bytes.Contains(r.body, []byte(c.method)) {
			t.Errorf("%s %s: message %q does not name the method", c.method, c.path, r.body)
		}
	}
	r := ts.expect(200, "HEAD", "/eureka/apps", nil)
	if len(r.body) != 0 {
		t.Errorf("HEAD /eureka/apps has a body")
	}
}

func TestGzipResponse(t *testing.T) {
	ts := newTestServer(t)
	ts.registerJSON(newInst("ORDERS", "a"))
	for _, p := range []string{"/eureka/apps", "/eureka/apps/delta", "/eureka/apps/ORDERS", "/eureka/apps/ORDERS/a", "/eureka/vips/orders"} {
		plain := ts.expect(200, "GET", p, nil, "Accept", jsonAccept)
		if plain.header.Get("Content-Encoding") != "" {
			t.Errorf("GET %s without Accept-Encoding: Content-Encoding %q", p, plain.header.Get("Content-Encoding"))
		}
		for range 2 { // the second answer comes from the cache
			z := ts.expect(200, "GET", p, nil, "Accept", jsonAccept, "Accept-Encoding", "gzip, deflate")
			if z.header.Get("Content-Encoding") != "gzip" || !strings.Contains(z.header.Get("Vary"), "Accept-Encoding") {
				t.Fatalf("GET %s: headers %v, want Content-Encoding gzip and Vary Accept-Encoding", p, z.header)
			}
			if z.header.Get("Content-Type") != "application/json" {
				t.Errorf("GET %s: Content-Type %q", p, z.header.Get("Content-Type"))
			}
			if got := gunzipBytes(t, z.body); !bytes.Equal(got, plain.body) {
				t.Errorf("GET %s: gunzipped %q, plain %q", p, got, plain.body)
			}
		}
	}
}

func TestGzipRequestBody(t *testing.T) {
	ts := newTestServer(t)
	in := newInst("ORDERS", "zipped")
	ts.expect(204, "POST", "/eureka/apps/ORDERS", gzipBytes(t, in.json()),
		"Content-Type", jsonAccept, "Content-Encoding", "gzip")
	if st := statuses(t, ts.expect(200, "GET", "/eureka/apps/ORDERS/zipped", nil).body); st["zipped"] != "UP" {
		t.Fatalf("gzipped registration not stored: %v", st)
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := newTestServer(t)
	ts.registerJSON(newInst("ORDERS", "a"))
	before := ts.apps()

	// An honest-looking body with 1 MiB of padding in a field.
	big := newInst("ORDERS", "big")
	big.vip = strings.Repeat("v", 1<<20)
	for _, c := range []struct {
		name string
		body []byte
		hdr  []string
	}{
		{"plain", big.json(), []string{"Content-Type", jsonAccept}},
		{"plain-no-content-length", big.json(), []string{"Content-Type", jsonAccept, "Transfer-Encoding", "chunked"}},
		// 2 MiB of zeros gzip to a few KiB: the limit holds after inflation.
		{"gzip-bomb", gzipBytes(t, append([]byte(`{"instance":{"app":"`), make([]byte, 2<<20)...)),
			[]string{"Content-Type", jsonAccept, "Content-Encoding", "gzip"}},
		{"gzip-big", gzipBytes(t, big.json()), []string{"Content-Type", jsonAccept, "Content-Encoding", "gzip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do("POST", "/eureka/apps/ORDERS", c.body, append(c.hdr, "Accept", jsonAccept)...)
			if r.code != 413 {
				t.Fatalf("got %s, want 413", r)
			}
			if !bytes.Contains(r.body, []byte("1 MiB")) {
				t.Errorf("413 message %q does not state the limit", r.body)
			}
			if after := ts.apps(); after != before {
				t.Errorf("registry changed by a rejected request:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// TestBadRequests sends requests that must be refused with 400 and a
// message, and checks that none of them changes the registry.
func TestBadRequests(t *testing.T) {
	ts := newTestServer(t)
	const id = "10.0.0.5:orders:8080"
	ts.registerJSON(newInst("ORDERS", id))

	many := map[string]string{}
	for i := range 65 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	large := map[string]string{"a": strings.Repeat("x", 5000), "b": strings.Repeat("y", 5000)}
	mod := func(f func(*inst)) inst {
		in := newInst("ORDERS", "new-one")
		f(&in)
		return in
	}
	manyQuery := url.Values{}
	for k, v := range many {
		manyQuery.Set(k, v)
	}

	type bad struct {
		name, method, path string
		body               []byte
		hdr                []string
		msg                string // the message must contain this
	}
	cases := []bad{
		{"malformed json", "POST", "/eureka/apps/ORDERS", []byte(`{"instance":{"app":"ORDERS",`), []string{"Content-Type", jsonAccept}, ""},
		{"malformed xml", "POST", "/eureka/apps/ORDERS", []byte(`<instance><app>ORDERS</app>`), []string{"Content-Type", xmlAccept}, ""},
		{"neither json nor xml", "POST", "/eureka/apps/ORDERS", []byte(`app=ORDERS`), []string{"Content-Type", "text/plain"}, ""},
		{"empty body", "POST", "/eureka/apps/ORDERS", nil, nil, ""},
		{"bad gzip", "POST", "/eureka/apps/ORDERS", []byte("not gzip at all"), []string{"Content-Encoding", "gzip"}, "gzip"},
		{"unknown content encoding", "POST", "/eureka/apps/ORDERS", newInst("ORDERS", "x").json(), []string{"Content-Encoding", "br"}, "br"},
		{"65 metadata entries json", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.metadata = many }).json(), nil, "metadata"},
		{"65 metadata entries xml", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.metadata = many }).xml(), nil, "metadata"},
		{"10 KB metadata json", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.metadata = large }).json(), nil, "metadata"},
		{"10 KB metadata xml", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.metadata = large }).xml(), nil, "metadata"},
		{"control char in id", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.id = "a\x01b" }).json(), nil, "instanceId"},
		{"id too long", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.id = strings.Repeat("i", 300) }).json(), nil, "instanceId"},
		{"id with slash", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.id = "a/b" }).json(), nil, "instanceId"},
		{"mismatched app", "POST", "/eureka/apps/PAYMENTS", mod(func(i *inst) {}).json(), nil, "Mismatched appName, expecting PAYMENTS but was ORDERS"},
		{"missing app json", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.omitApp = true }).json(), nil, "Missing appName"},
		{"missing app xml", "POST", "/eureka/apps/ORDERS", mod(func(i *inst) { i.omitApp = true }).xml(), nil, "Missing appName"},
		{"status without value", "PUT", "/eureka/apps/ORDERS/" + id + "/status", nil, nil, "value"},
		{"status empty value", "PUT", "/eureka/apps/ORDERS/" + id + "/status?value=", nil, nil, "value"},
		{"unknown status", "PUT", "/eureka/apps/ORDERS/" + id + "/status?value=HALF_UP", nil, nil, "HALF_UP"},
		{"unknown status on delete", "DELETE", "/eureka/apps/ORDERS/" + id + "/status?value=HALF_UP", nil, nil, "HALF_UP"},
		{"bad lastDirtyTimestamp", "PUT", "/eureka/apps/ORDERS/" + id + "/status?value=DOWN&lastDirtyTimestamp=yesterday", nil, nil, "lastDirtyTimestamp"},
		{"bad renew timestamp", "PUT", "/eureka/apps/ORDERS/" + id + "?lastDirtyTimestamp=x", nil, nil, "lastDirtyTimestamp"},
		{"65 metadata keys by query", "PUT", "/eureka/apps/ORDERS/" + id + "/metadata?" + manyQuery.Encode(), nil, nil, "metadata"},
		{"10 KB metadata by query", "PUT", "/eureka/apps/ORDERS/" + id + "/metadata?a=" + strings.Repeat("x", 5000) + "&b=" + strings.Repeat("y", 5000), nil, nil, "metadata"},
		{"control char in metadata by query", "PUT", "/eureka/apps/ORDERS/" + id + "/metadata?a=%01", nil, nil, ""},
	}
	for _, f := range []struct{ name, accept string }{{"json", jsonAccept}, {"xml", xmlAccept}} {
		accept := f.accept
		for _, c := range cases {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				before := ts.apps()
				r := ts.do(c.method, c.path, c.body, append(c.hdr, "Accept", accept)...)
				if r.code != 400 {
					t.Fatalf("got %s, want 400", r)
				}
				if ct := r.header.Get("Content-Type"); ct != accept {
					t.Errorf("Content-Type %q, want %q", ct, accept)
				}
				checkErrorBody(t, r, accept)
				if !bytes.Contains(r.body, []byte(c.msg)) {
					t.Errorf("message %q lacks %q", r.body, c.msg)
				}
				if after := ts.apps(); after != before {
					t.Errorf("registry changed by a rejected request:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// TestReadAfterWrite checks that no cached payload outlives a write: every
// read issued after a write returned reflects it, on every cached endpoint.
func TestReadAfterWrite(t *testing.T) {
	ts := newTestServer(t)
	reads := []string{"/eureka/apps", "/eureka/apps/ORDERS", "/eureka/vips/orders", "/eureka/svips/orders"}
	warm := func() { // fill the cache in both formats and encodings
		for _, p := range append(reads, "/eureka/apps/delta") {
			for _, accept := range []string{jsonAccept, xmlAccept} {
				ts.do("GET", p, nil, "Accept", accept)
				ts.do("GET", p, nil, "Accept", accept, "Accept-Encoding", "gzip")
			}
		}
	}
	check := func(id, want string) {
		t.Helper()
		for _, p := range reads {
			for _, accept := range []string{jsonAccept, xmlAccept} {
				r := ts.do("GET", p, nil, "Accept", accept)
				got := ""
				if r.code == 200 {
					got = statuses(t, r.body)[id]
				}
				if got != want {
					t.Fatalf("GET %s (%s) after a write: %s has status %q, want %q", p, accept, id, got, want)
				}
			}
		}
	}
	for i := range 6 {
		id := fmt.Sprintf("host-%d:orders:8080", i)
		warm()
		ts.registerJSON(newInst("ORDERS", id))
		check(id, "UP")
		if r := ts.expect(200, "GET", "/eureka/apps/delta", nil); !bytes.Contains(r.body, []byte(id)) {
			t.Fatalf("delta after registering %s lacks it: %s", id, r.body)
		}
		warm()
		ts.expect(200, "PUT", "/eureka/apps/ORDERS/"+id+"/status?value=OUT_OF_SERVICE", nil)
		check(id, "OUT_OF_SERVICE")
		warm()
		ts.expect(200, "PUT", "/eureka/apps/ORDERS/"+id+"/status?value=UP", nil)
		check(id, "UP")
		if i%2 == 1 {
			warm()
			ts.expect(200, "DELETE", "/eureka/apps/ORDERS/"+id, nil)
			check(id, "")
		}
	}
}

func TestDeltaCarriesActionType(t *testing.T) {
	ts := newTestServer(t)
	ts.registerJSON(newInst("ORDERS", "a"))
	r := ts.expect(200, "GET", "/eureka/apps/delta", nil, "Accept", jsonAccept)
	if !bytes.Contains(r.body, []byte(`"actionType":"ADDED"`)) {
		t.Fatalf("delta %s lacks actionType ADDED", r.body)
	}
}

// TestRenewConflict: a peer whose copy is older than ours gets 409 and our
// copy; a plain client gets 200; a newer copy gets 404.
func TestRenewConflict(t *testing.T) {
	ts := newTestServer(t)
	in := newInst("ORDERS", "a")
	in.lastDirty = 2000
	ts.registerJSON(in)
	r := ts.expect(409, "PUT", "/eureka/apps/ORDERS/a?lastDirtyTimestamp=1000", nil,
		"x-netflix-discovery-replication", "true", "Accept", jsonAccept)
	if st := statuses(t, r.body); st["a"] != "UP" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("409 body %q (Content-Type %q) is not the stored instance", r.body, r.header.Get("Content-Type"))
	}
	ts.expect(200, "PUT", "/eureka/apps/ORDERS/a?lastDirtyTimestamp=1000", nil)
	ts.expect(200, "PUT", "/eureka/apps/ORDERS/a?lastDirtyTimestamp=1000", nil, "x-netflix-discovery-replication", "TRUE")
	ts.expect(404, "PUT", "/eureka/apps/ORDERS/a?lastDirtyTimestamp=3000", nil)
}

// TestToldPeersReachTheForwarder: a heartbeat or a registration is
// forwarded with its heureka.ToldPeersHeader as sent, for the replicator
// to leave those peers out; one marked the old way, X-Heureka-Every-Peer:
// true, is forwarded as if it named nobody, so it reaches every peer; a
// replicated one is not forwarded whatever it names.
func TestToldPeersReachTheForwarder(t *testing.T) {
	ts := newTestServer(t)
	ts.registerJSON(newInst("ORDERS", "a"))
	var mu sync.Mutex
	var forwarded []registry.Op
	ts.reg.SetForwarder(func(op registry.Op) {
		mu.Lock()
		defer mu.Unlock()
		forwarded = append(forwarded, op)
	})
	take := func() []registry.Op {
		mu.Lock()
		defer mu.Unlock()
		out := forwarded
		forwarded = nil
		return out
	}
	const told = "http://reg1:8761/eureka,http://reg2:8761/eureka"
	for _, c := range []struct {
		name     string
		header   []string
		wantTold string
	}{
		{"told peers", []string{heureka.ToldPeersHeader, told}, told},
		{"an older agent's mark", []string{"X-Heureka-Every-Peer", "true"}, ""},
		{"a plain Eureka client", nil, ""},
	} {
		before, _ := ts.reg.LastRenewal("ORDERS", "a")
		ts.expect(200, "PUT", "/eureka/apps/ORDERS/a", nil, c.header...)
		if after, _ := ts.reg.LastRenewal("ORDERS", "a"); !after.After(before) {
			t.Fatalf("%s: the heartbeat did not renew: last renewal %v, before it %v", c.name, after, before)
		}
		if got := take(); len(got) != 1 || got[0].Action != registry.ActionHeartbeat || got[0].Told != c.wantTold {
			t.Fatalf("%s: the heartbeat forwarded %+v, want one Heartbeat told %q", c.name, got, c.wantTold)
		}
		b := newInst("ORDERS", "b")
		ts.expect(204, "POST", "/eureka/apps/ORDERS", b.json(), append([]string{"Content-Type", "application/json"}, c.header...)...)
		if got := take(); len(got) != 1 || got[0].Action != registry.ActionRegister || got[0].Told != c.wantTold {
			t.Fatalf("%s: the registration forwarded %+v, want one Register told %q", c.name, got, c.wantTold)
		}
	}
	ts.expect(200, "PUT", "/eureka/apps/ORDERS/a", nil, heureka.ToldPeersHeader, told, "x-netflix-discovery-replication", "true")
	if got := take(); len(got) != 0 {
		t.Fatalf("a replicated heartbeat was forwarded: %+v", got)
	}
}

func TestHealthAndReady(t *testing.T) {
	ts := newTestServer(t)
	if r := ts.expect(200, "GET", "/healthz", nil); strings.TrimSpace(string(r.body)) != "ok" {
		t.Errorf("/healthz body %q", r.body)
	}
	ts.expect(200, "GET", "/readyz", nil)

	ready := false
	nr := newTestServer(t, func(c *httpapi.Config) { c.Ready = func() bool { return ready } })
	nr.expect(503, "GET", "/readyz", nil)
	ready = true
	nr.expect(200, "GET", "/readyz", nil)
}

func TestMetrics(t *testing.T) {
	ts := newTestServer(t)
	ts.registerJSON(newInst("ORDERS", "secret-id-1"))
	// Three renewals, so that the histogram's cached label sets are
	// counted on every request, not only the first.
	for range 3 {
		ts.expect(200, "PUT", "/eureka/apps/ORDERS/secret-id-1", nil)
	}
	ts.expect(200, "GET", "/eureka/apps/ORDERS/secret-id-1", nil)
	ts.expect(404, "GET", "/no/such/path", nil)
	ts.expect(404, "PUT", "/eureka/apps/ORDERS/no-such-id", nil)
	body := string(ts.expect(200, "GET", "/metrics", nil).body)
	for _, want := range []string{
		`heureka_instances{app="ORDERS",status="UP"} 1`,
		"heureka_registrations_total 1",
		"heureka_renewals_total",
		"heureka_cancels_total",
		"heureka_evictions_total",
		"heureka_self_preservation 0",
		"heureka_renews_last_minute",
		"heureka_renews_threshold",
		`heureka_http_request_duration_seconds_count{code="204",method="POST",route="/apps/{app}"} 1`,
		`heureka_http_request_duration_seconds_count{code="200",method="PUT",route="/apps/{app}/{id}"} 3`,
		`heureka_http_request_duration_seconds_count{code="404",method="PUT",route="/apps/{app}/{id}"} 1`,
		`route="unmatched"`,
		"go_goroutines",
		"process_",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "secret-id-1") || strings.Contains(body, "/no/such/path") {
		t.Errorf("/metrics has a raw path in a label")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}

// TestEmptyRegistry: lists are never missing, single reads 404.
func TestEmptyRegistry(t *testing.T) {
	ts := newTestServer(t)
	r := ts.expect(200, "GET", "/eureka/apps", nil, "Accept", jsonAccept)
	if !bytes.Contains(r.body, []byte(`"application":[]`)) {
		t.Errorf("empty registry JSON %s lacks \"application\":[]", r.body)
	}
	ts.expect(200, "GET", "/eureka/apps", nil)
	ts.expect(200, "GET", "/eureka/apps/delta", nil)
	ts.expect(404, "GET", "/eureka/apps/ORDERS", nil)
	ts.expect(404, "DELETE", "/eureka/apps/ORDERS/x", nil)
}

func TestConcurrentTraffic(t *testing.T) {
	ts := newTestServer(t)
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 25 {
				id := fmt.Sprintf("w%d-%d", w, i)
				r, err := ts.send("POST", "/eureka/apps/ORDERS", newInst("ORDERS", id).json())
				if err != nil || r.code != 204 {
					t.Errorf("register %s: %v %v", id, r, err)
					return
				}
				if r, err := ts.send("GET", "/eureka/apps", nil, "Accept-Encoding", "gzip"); err != nil || r.code != 200 {
					t.Errorf("GET /apps: %v %v", r, err)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if n := len(statuses(t, []byte(ts.apps()))); n != 100 {
		t.Fatalf("registry has %d instances, want 100", n)
	}
}

// TestNodeHeaderAnswersReadsAndPeers: every read is answered with the
// server's node ID (a registry version means something only to the process
// that issued it), and so is a peer, whose request carries its own node ID
// and which recognises its own URL in its peer list that way. A client's
// renewal is not, so that it costs no response header map.
func TestNodeHeaderAnswersReadsAndPeers(t *testing.T) {
	ts := newTestServer(t, func(c *httpapi.Config) { c.NodeID = "node-under-test" })
	in := newInst("ORDERS", "o1")
	ts.registerJSON(in)
	path := "/eureka/apps/ORDERS/o1"
	for _, c := range []struct {
		name string
		hdr  []string
		want string
	}{
		{"client", nil, ""},
		{"peer", []string{replication.NodeHeader, "some-peer"}, "node-under-test"},
	} {
		r := ts.expect(200, "PUT", path, nil, c.hdr...)
		if got := r.header.Get(replication.NodeHeader); got != c.want {
			t.Errorf("a renewal from a %s: %s %q, want %q", c.name, replication.NodeHeader, got, c.want)
		}
		for _, get := range []string{path, "/eureka/apps/", "/eureka/apps/delta", "/eureka/apps/NOBODY"} {
			for _, method := range []string{"GET", "HEAD"} {
				if got := ts.do(method, get, nil, c.hdr...).header.Get(replication.NodeHeader); got != "node-under-test" {
					t.Errorf("%s %s from a %s: %s %q, want the node's", method, get, c.name, replication.NodeHeader, got)
				}
			}
		}
		if r := ts.expect(404, "PUT", "/eureka/apps/ORDERS/nobody", nil, c.hdr...); r.header.Get(replication.NodeHeader) != c.want {
			t.Errorf("a 404 to a %s: %s %q, want %q", c.name, replication.NodeHeader, r.header.Get(replication.NodeHeader), c.want)
		}
	}
}

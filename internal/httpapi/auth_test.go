package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry"
)

// The users of the auth tests, their clear secrets and how they send them.
var (
	uDN     = authtest.User{User: auth.User{Name: "dn-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{`HDFS-DATANODE\..*`}}, Password: "dn-pass"}
	uNN     = authtest.User{User: auth.User{Name: "nn-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{`HDFS-NAMENODE\..*`}}, Password: "hk_nn_token", Token: true}
	uOps    = authtest.User{User: auth.User{Name: "ops", Roles: []auth.Role{auth.RoleOperator}}, Password: "ops-pass"}
	uPeer   = authtest.User{User: auth.User{Name: "peer", Roles: []auth.Role{auth.RolePeer}}, Password: "hk_peer_token", Token: true}
	uReader = authtest.User{User: auth.User{Name: "grafana", Roles: []auth.Role{auth.RoleReader}}, Password: "read-pass"}
)

// header is the Authorization header a user sends: basic for passwords,
// bearer for tokens.
func header(u authtest.User) string {
	if u.Token {
		return "Bearer " + u.Password
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.Name+":"+u.Password))
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// authServer is a test server with authentication on.
type authServer struct {
	*testServer
	api   *httpapi.Server
	store *auth.Store
	path  string
	logs  *logBuffer
}

func newAuthServer(t *testing.T, reads auth.Reads, mods ...func(*httpapi.Config)) *authServer {
	t.Helper()
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	path := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, path, reads, uDN, uNN, uOps, uPeer, uReader)
	store := auth.NewStore(path, logger)
	if err := store.Load(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.DefaultConfig()
	cfg.Auth = store
	for _, m := range mods {
		m(&cfg)
	}
	api := newAPI(t, cfg, reg, logger)
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() { api.CloseStreams(); hs.Close() })
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	return &authServer{testServer: &testServer{t: t, url: hs.URL, reg: reg, client: client},
		api: api, store: store, path: path, logs: logs}
}

// seed registers one DataNode and one NameNode directly in the registry.
func (as *authServer) seed() {
	as.t.Helper()
	for _, in := range []inst{newInst("HDFS-DATANODE.PROD", "dn1"), newInst("HDFS-NAMENODE.PROD", "nn1")} {
		decoded, err := eureka.DecodeInstance(in.json(), eureka.JSON)
		if err != nil {
			as.t.Fatal(err)
		}
		if err := as.reg.Register(decoded, false); err != nil {
			as.t.Fatal(err)
		}
	}
}

// errorMessage is the message of a JSON error answer.
func errorMessage(t *testing.T, r *response) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" {
		t.Fatalf("not a JSON error: %s", r)
	}
	return e.Error
}

// TestRolesPerEndpoint is the access table: every role against every kind
// of endpoint, with the status each must get.
func TestRolesPerEndpoint(t *testing.T) {
	dnBody := string(newInst("HDFS-DATANODE.PROD", "dn2").json())
	nnBody := string(newInst("HDFS-NAMENODE.PROD", "nn2").json())
	batch := `{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"dn1","action":"Heartbeat","lastDirtyTimestamp":1717171717000}]}`
	type ep struct {
		name, method, path, body string
		hdr                      []string
		ok                       int // the status when allowed
	}
	eps := []ep{
		{"read apps", "GET", "/eureka/apps", "", nil, 200},
		{"read status", "GET", "/v1/status", "", nil, 200},
		{"healthz", "GET", "/healthz", "", nil, 200},
		{"metrics", "GET", "/metrics", "", nil, 200},
		{"register DN", "POST", "/eureka/apps/HDFS-DATANODE.PROD", dnBody, nil, 204},
		{"register NN", "POST", "/eureka/apps/HDFS-NAMENODE.PROD", nnBody, nil, 204},
		{"renew DN", "PUT", "/eureka/apps/HDFS-DATANODE.PROD/dn1", "", nil, 200},
		{"renew NN", "PUT", "/eureka/apps/hdfs-namenode.prod/nn1", "", nil, 200},
		{"status NN", "PUT", "/eureka/apps/HDFS-NAMENODE.PROD/nn1/status?value=OUT_OF_SERVICE", "", nil, 200},
		{"clear status DN", "DELETE", "/eureka/v2/apps/HDFS-DATANODE.PROD/dn1/status", "", nil, 200},
		{"metadata NN", "PUT", "/eureka/apps/HDFS-NAMENODE.PROD/nn1/metadata?k=v", "", nil, 200},
		{"cancel DN", "DELETE", "/eureka/apps/HDFS-DATANODE.PROD/dn1", "", nil, 200},
		{"cancel NN", "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nn1", "", nil, 200},
		{"replicated renew", "PUT", "/eureka/apps/HDFS-DATANODE.PROD/dn1", "", []string{"x-netflix-discovery-replication", "true"}, 200},
		{"batch", "POST", "/eureka/peerreplication/batch", batch, nil, 200},
		{"digest", "GET", "/v1/replication/digest", "", nil, 200},
		{"instance digests", "GET", "/v1/replication/apps/HDFS-DATANODE.PROD/digests", "", nil, 200},
		{"instances by ID", "GET", "/v1/replication/apps/HDFS-DATANODE.PROD?id=dn1", "", nil, 200},
	}
	const (
		ok = iota
		unauth
		forbid
	)
	// want[user][endpoint]; endpoints in the order above.
	want := map[string][]int{
		"anonymous": {ok, ok, ok, ok, unauth, unauth, unauth, unauth, unauth, unauth, unauth, unauth, unauth, unauth, unauth, unauth, unauth, unauth},
		"dn-agent":  {ok, ok, ok, ok, ok, forbid, ok, forbid, forbid, ok, forbid, ok, forbid, forbid, forbid, forbid, forbid, forbid},
		"nn-agent":  {ok, ok, ok, ok, forbid, ok, forbid, ok, ok, forbid, ok, forbid, ok, forbid, forbid, forbid, forbid, forbid},
		"ops":       {ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, forbid, forbid, forbid, forbid, forbid},
		"peer":      {ok, ok, ok, ok, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, ok, ok, ok, ok, ok},
		"grafana":   {ok, ok, ok, ok, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid, forbid},
	}
	users := map[string]*authtest.User{"anonymous": nil, "dn-agent": &uDN, "nn-agent": &uNN, "ops": &uOps, "peer": &uPeer, "grafana": &uReader}
	for name, row := range want {
		t.Run(name, func(t *testing.T) {
			as := newAuthServer(t, auth.ReadsOpen)
			for i, e := range eps {
				as.seed()
				hdr := append([]string{"Accept", jsonAccept, "Content-Type", jsonAccept}, e.hdr...)
				if u := users[name]; u != nil {
					hdr = append(hdr, "Authorization", header(*u))
				}
				var body []byte
				if e.body != "" {
					body = []byte(e.body)
				}
				r := as.do(e.method, e.path, body, hdr...)
				code := map[int]int{ok: e.ok, unauth: 401, forbid: 403}[row[i]]
				if r.code != code {
					t.Errorf("%s %s %s: got %s, want %d", name, e.method, e.path, r, code)
					continue
				}
				if code >= 400 {
					checkErrorBody(t, r, jsonAccept)
				}
				if code == 401 && len(r.header.Values("WWW-Authenticate")) != 2 {
					t.Errorf("%s: 401 without both challenges: %q", e.name, r.header.Values("WWW-Authenticate"))
				}
			}
		})
	}
}

// TestUnauthenticatedVersusForbidden checks the two refusals' messages:
// each says what is missing.
func TestUnauthenticatedVersusForbidden(t *testing.T) {
	as := newAuthServer(t, auth.ReadsAuthenticated)
	as.seed()
	cancelNN := "/eureka/apps/HDFS-NAMENODE.PROD/nn1"
	for _, c := range []struct {
		name    string
		hdr     []string
		code    int
		msg     string
		invalid bool // error="invalid_token" in the Bearer challenge
	}{
		{"no credentials", nil, 401, "send credentials: HTTP basic auth", false},
		{"wrong password", []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("dn-agent:nope"))}, 401, `user "dn-agent" is unknown or its password is wrong`, false},
		{"unknown token", []string{"Authorization", "Bearer hk_nope"}, 401, "bearer token is not valid", true},
		{"bad scheme", []string{"Authorization", "Negotiate abc"}, 401, `"Negotiate" is not supported`, false},
		{"DataNode agent on the NameNode", []string{"Authorization", header(uDN)}, 403, `user "dn-agent" (agent for HDFS-DATANODE\..*) may not cancel HDFS-NAMENODE.PROD/nn1: that needs the operator role`, false},
		{"replication header without the peer role", []string{"Authorization", header(uOps), "x-netflix-discovery-replication", "true"}, 403, "x-netflix-discovery-replication", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := as.do("DELETE", cancelNN, nil, append([]string{"Accept", jsonAccept}, c.hdr...)...)
			if r.code != c.code || !strings.Contains(errorMessage(t, r), c.msg) {
				t.Fatalf("got %s, want %d with %q", r, c.code, c.msg)
			}
			if got := strings.Contains(strings.Join(r.header.Values("WWW-Authenticate"), " "), "invalid_token"); got != c.invalid {
				t.Errorf("challenge %q: invalid_token %v, want %v", r.header.Values("WWW-Authenticate"), got, c.invalid)
			}
		})
	}
	// XML clients get the same message in Eureka's XML error shape.
	r := as.do("GET", "/eureka/apps", nil, "Accept", xmlAccept)
	if r.code != 401 || !strings.Contains(string(r.body), "<error><message>to read the registry, send credentials") {
		t.Fatalf("XML 401: %s", r)
	}
	if _, ok := as.reg.Snapshot().Instance("HDFS-NAMENODE.PROD", "nn1"); !ok {
		t.Fatal("a refused cancel removed the instance")
	}
}

// TestAgentScopedToInstances: an agent limited to its own instance IDs
// cannot register (and so overwrite) another one: the ID is in the body.
func TestAgentScopedToInstances(t *testing.T) {
	as := newAuthServer(t, auth.ReadsOpen)
	dn1 := authtest.User{User: auth.User{Name: "dn1-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{`HDFS-DATANODE\..*`}, Instances: []string{"dn1"}}, Password: "x"}
	authtest.WriteCredentials(t, as.path, auth.ReadsOpen, dn1, uOps)
	if err := as.store.Load(); err != nil {
		t.Fatal(err)
	}
	h := []string{"Authorization", header(dn1), "Content-Type", jsonAccept, "Accept", jsonAccept}
	as.expect(204, "POST", "/eureka/apps/HDFS-DATANODE.PROD", newInst("HDFS-DATANODE.PROD", "dn1").json(), h...)
	r := as.expect(403, "POST", "/eureka/apps/HDFS-DATANODE.PROD", newInst("HDFS-DATANODE.PROD", "dn2").json(), h...)
	if msg := errorMessage(t, r); !strings.Contains(msg, "may not register HDFS-DATANODE.PROD/dn2") {
		t.Fatalf("message %q", msg)
	}
	as.expect(403, "DELETE", "/eureka/apps/HDFS-DATANODE.PROD/dn2", nil, h...)
	as.expect(200, "DELETE", "/eureka/apps/HDFS-DATANODE.PROD/dn1", nil, h...)
}

// TestReadsOpenOrAuthenticated: the credentials file decides, and an edit
// of it changes the answer without a restart.
func TestReadsOpenOrAuthenticated(t *testing.T) {
	as := newAuthServer(t, auth.ReadsOpen)
	for _, p := range []string{"/eureka/apps", "/eureka/apps/delta", "/v1/status", "/eureka/vips/x"} {
		as.expect(200, "GET", p, nil)
	}
	authtest.WriteCredentials(t, as.path, auth.ReadsAuthenticated, uDN, uNN, uOps, uPeer, uReader)
	if err := as.store.Load(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/eureka/apps", "/eureka/apps/delta", "/v1/status", "/eureka/vips/x"} {
		as.expect(401, "GET", p, nil)
		as.expect(200, "GET", p, nil, "Authorization", header(uReader))
	}
	for _, p := range []string{"/v1/watch", "/v1/events"} {
		if s := openStream(t, as.url+p); s.resp.StatusCode != 401 {
			t.Errorf("anonymous %s: %d, want 401", p, s.resp.StatusCode)
		}
		openStream(t, as.url+p, "Authorization", header(uReader)).next()
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		as.expect(200, "GET", p, nil)
		as.expect(200, "GET", p, nil, "Authorization", "Bearer garbage") // credentials are not even read
	}
}

// TestCredentialsReload: new credentials work, old ones stop, and a bad
// file keeps the old ones, all without a restart.
func TestCredentialsReload(t *testing.T) {
	as := newAuthServer(t, auth.ReadsOpen)
	as.seed()
	renew := "/eureka/apps/HDFS-DATANODE.PROD/dn1"
	as.expect(200, "PUT", renew, nil, "Authorization", header(uDN))

	rotated := uDN
	rotated.Password = "dn-pass-2"
	authtest.WriteCredentials(t, as.path, auth.ReadsOpen, rotated, uOps)
	if err := as.store.Load(); err != nil {
		t.Fatal(err)
	}
	as.expect(401, "PUT", renew, nil, "Authorization", header(uDN))
	as.expect(200, "PUT", renew, nil, "Authorization", header(rotated))
	as.expect(401, "GET", "/eureka/apps", nil, "Authorization", header(uPeer)) // removed

	authtest.WriteFile(t, as.path, []byte(`{"reads":"open","users":[{"name":"dn-agent","roles":["agent"]}]}`))
	if err := as.store.Load(); err == nil || !strings.Contains(err.Error(), "an agent needs") {
		t.Fatalf("bad file: %v", err)
	}
	as.expect(200, "PUT", renew, nil, "Authorization", header(rotated))
}

// TestAuditLines: every operator action leaves one line saying who, what
// and which instance; an agent's own writes leave none.
func TestAuditLines(t *testing.T) {
	as := newAuthServer(t, auth.ReadsOpen)
	as.seed()
	ops := []string{"Authorization", header(uOps)}
	as.expect(200, "PUT", "/eureka/apps/HDFS-NAMENODE.PROD/nn1/status?value=OUT_OF_SERVICE", nil, ops...)
	as.expect(200, "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nn1/status?value=UP", nil, ops...)
	as.expect(200, "PUT", "/eureka/apps/HDFS-NAMENODE.PROD/nn1/metadata?maintenance=yes", nil, ops...)
	as.expect(404, "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nope", nil, ops...)
	as.expect(200, "DELETE", "/eureka/apps/HDFS-DATANODE.PROD/dn1", nil, ops...)
	as.expect(200, "PUT", "/eureka/apps/HDFS-NAMENODE.PROD/nn1", nil, "Authorization", header(uNN)) // the agent's own: no line
	as.expect(403, "DELETE", "/eureka/apps/HDFS-NAMENODE.PROD/nn1", nil, "Authorization", header(uDN))

	var lines []string
	for l := range strings.SplitSeq(as.logs.String(), "\n") {
		if strings.Contains(l, "subsystem=audit") {
			lines = append(lines, l)
		}
	}
	want := [][]string{
		{`user=ops`, `auth=basic`, `action="set the status of"`, `app=HDFS-NAMENODE.PROD`, `id=nn1`, `query="value=OUT_OF_SERVICE"`, `status=200`, `remote=127.0.0.1`},
		{`user=ops`, `action="clear the status override of"`, `id=nn1`, `status=200`},
		{`user=ops`, `action="update the metadata of"`, `query="maintenance=yes"`, `status=200`},
		{`user=ops`, `action=cancel`, `app=HDFS-NAMENODE.PROD`, `id=nope`, `status=404`},
		{`user=ops`, `action=cancel`, `app=HDFS-DATANODE.PROD`, `id=dn1`, `status=200`},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d audit lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		for _, part := range w {
			if !strings.Contains(lines[i], part) {
				t.Errorf("audit line %d %q lacks %q", i, lines[i], part)
			}
		}
	}
}

// TestWriteRateLimit: a client over its budget gets 429 with Retry-After;
// other clients and peers are not affected.
func TestWriteRateLimit(t *testing.T) {
	as := newAuthServer(t, auth.ReadsOpen, func(c *httpapi.Config) { c.WriteRate = 1; c.WriteBurst = 3 })
	as.seed()
	renew := "/eureka/apps/HDFS-DATANODE.PROD/dn1"
	for range 3 {
		as.expect(200, "PUT", renew, nil, "Authorization", header(uDN))
	}
	r := as.expect(429, "PUT", renew, nil, "Authorization", header(uDN), "Accept", jsonAccept)
	if r.header.Get("Retry-After") != "1" || !strings.Contains(errorMessage(t, r), "too many writes from dn-agent@127.0.0.1") {
		t.Fatalf("429 without Retry-After: 1 or a message: %s %v", r, r.header)
	}
	as.expect(200, "GET", "/eureka/apps", nil, "Authorization", header(uDN)) // reads are not limited
	as.expect(200, "PUT", renew, nil, "Authorization", header(uOps))         // another client
	batch := []byte(`{"replicationList":[{"appName":"HDFS-DATANODE.PROD","id":"dn1","action":"Heartbeat"}]}`)
	for range 10 {
		as.expect(200, "POST", "/eureka/peerreplication/batch", batch, "Authorization", header(uPeer))
	}
}

// TestWriteRateLimitExemptions: anonymous loopback clients (a local
// simulator of many agents) are not limited, and the off switch works.
func TestWriteRateLimitExemptions(t *testing.T) {
	ts := newTestServer(t, func(c *httpapi.Config) { c.WriteRate = 1; c.WriteBurst = 1 })
	ts.registerJSON(newInst("ORDERS", "o1"))
	for range 5 {
		ts.expect(200, "PUT", "/eureka/apps/ORDERS/o1", nil)
	}
	as := newAuthServer(t, auth.ReadsOpen, func(c *httpapi.Config) { c.WriteRate = 0 })
	as.seed()
	for range 200 {
		as.expect(200, "PUT", "/eureka/apps/HDFS-DATANODE.PROD/dn1", nil, "Authorization", header(uDN))
	}
}

// TestWatchersPerClient: one client cannot hold more streams than its cap;
// others still can, and a closed stream frees a place.
func TestWatchersPerClient(t *testing.T) {
	as := newAuthServer(t, auth.ReadsAuthenticated, func(c *httpapi.Config) { c.MaxWatchersPerClient = 2 })
	dn := []string{"Authorization", header(uDN)}
	s1 := openStream(t, as.url+"/v1/watch", dn...)
	s1.next()
	s2 := openStream(t, as.url+"/v1/events", dn...)
	s2.next()
	r := as.do("GET", "/v1/watch", nil, append(dn, "Accept", jsonAccept)...)
	if r.code != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(errorMessage(t, r), "dn-agent@127.0.0.1 already has 2") {
		t.Fatalf("third stream of one client: %s %v, want 429 with Retry-After", r, r.header)
	}
	o := openStream(t, as.url+"/v1/watch", "Authorization", header(uOps))
	o.next() // another client is not affected
	s1.cancel()
	if !s1.ended() {
		t.Fatal("stream did not end")
	}
	proctest.Eventually(t, 5*time.Second, "2 watchers after one closed", func() bool { return as.api.Watchers() == 2 })
	s3 := openStream(t, as.url+"/v1/watch", dn...)
	s3.next()

	// Without auth, loopback clients are exempt; the global cap holds.
	ts := newTestServer(t, func(c *httpapi.Config) { c.MaxWatchersPerClient = 1; c.MaxWatchers = 3 })
	for range 3 {
		openStream(t, ts.url+"/v1/watch").next()
	}
	if r := ts.do("GET", "/v1/watch", nil); r.code != http.StatusServiceUnavailable {
		t.Fatalf("over the global cap: %s, want 503", r)
	}
}

// TestReplicationHeaderWithoutAuth: with auth off, the header is honoured
// as in Eureka (nothing can be checked).
func TestReplicationHeaderWithoutAuth(t *testing.T) {
	ts := newTestServer(t)
	ts.registerJSON(newInst("ORDERS", "o1"))
	ts.expect(200, "PUT", "/eureka/apps/ORDERS/o1", nil, "x-netflix-discovery-replication", "true")
}

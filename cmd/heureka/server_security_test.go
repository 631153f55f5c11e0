package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/server/servertest"
)

// openSecureServer opens the real wiring with cfg changed by edit, logging
// to the returned buffer.
func openSecureServer(t *testing.T, edit func(*server.Config)) (*server.Server, *proctest.Buffer) {
	t.Helper()
	logs := &proctest.Buffer{}
	logger := slog.New(slog.NewTextHandler(io.MultiWriter(logs, t.Output()), &slog.HandlerOptions{Level: slog.LevelInfo}))
	return servertest.OpenLogged(t, edit, logger), logs
}

// tlsClient trusts ca, opens a new connection per request (so that every
// request sees the certificate served now) and shows cert when given.
func tlsClient(ca *authtest.CA, cert *authtest.Cert) *http.Client {
	tc := &tls.Config{RootCAs: ca.Pool()}
	if cert != nil {
		tc.Certificates = []tls.Certificate{cert.TLS}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}}
}

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

var (
	secAgent = authtest.User{User: auth.User{Name: "orders-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{"ORDERS"}}, Password: "agent-pass"}
	secOps   = authtest.User{User: auth.User{Name: "ops", Roles: []auth.Role{auth.RoleOperator}}, Password: "hk_ops_token", Token: true}
)

// TestServerTLSReload serves HTTPS with authentication, then replaces the
// certificate and the credentials on disk and reloads them as SIGHUP does:
// new connections get the new certificate, new credentials work and old
// ones stop; files that do not load keep what is in use.
func TestServerTLSReload(t *testing.T) {
	ca := authtest.NewCA(t, "test CA")
	first := ca.Issue("server", "heureka")
	creds := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, creds, auth.ReadsAuthenticated, secAgent, secOps)
	s, logs := openSecureServer(t, func(c *server.Config) {
		c.TLSCert, c.TLSKey, c.AuthFile = first.CertFile, first.KeyFile, creds
		c.AuthPoll = time.Hour // this test reloads by hand
	})
	base := "https://" + s.Addr().String()
	c := tlsClient(ca, nil)
	agent := []string{"Authorization", basicAuth(secAgent.Name, secAgent.Password)}

	if code, body, serial := authtest.Call(t, c, "POST", base+"/eureka/apps/ORDERS", registerBody, agent...); code != 204 || serial.Cmp(first.Serial) != 0 {
		t.Fatalf("register over TLS: %d %s, certificate %v (want %v)", code, body, serial, first.Serial)
	}
	if code, _, _ := authtest.Call(t, c, "GET", base+"/eureka/apps", ""); code != 401 {
		t.Fatalf("anonymous read with reads authenticated: %d", code)
	}
	if _, err := http.Get("http://" + s.Addr().String() + "/healthz"); err == nil {
		// net/http answers plain HTTP on a TLS port with a 400; what
		// matters is that nothing is served in clear.
		if code, body, _ := authtest.Call(t, &http.Client{}, "GET", "http://"+s.Addr().String()+"/healthz", ""); code == 200 {
			t.Fatalf("plain HTTP served on the TLS port: %d %s", code, body)
		}
	}

	second := ca.Issue("server", "heureka") // renewed in place
	rotated := secAgent
	rotated.Password = "agent-pass-2"
	authtest.WriteCredentials(t, creds, auth.ReadsAuthenticated, rotated, secOps)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if code, _, serial := authtest.Call(t, c, "PUT", base+"/eureka/apps/ORDERS/10.0.0.5:orders:8080", "", agent...); code != 401 || serial.Cmp(second.Serial) != 0 {
		t.Fatalf("after reload, old password: %d with certificate %v; want 401 with %v", code, serial, second.Serial)
	}
	newAgent := []string{"Authorization", basicAuth(rotated.Name, rotated.Password)}
	if code, body, _ := authtest.Call(t, c, "PUT", base+"/eureka/apps/ORDERS/10.0.0.5:orders:8080", "", newAgent...); code != 200 {
		t.Fatalf("after reload, new password: %d %s", code, body)
	}

	// Broken files: the reload fails, says why, and nothing changes.
	if err := os.WriteFile(second.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	authtest.WriteFile(t, creds, []byte(`{"reads":"open"`))
	err := s.Reload()
	if err == nil || !strings.Contains(err.Error(), "TLS key pair") || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("reload of broken files: %v", err)
	}
	if code, _, serial := authtest.Call(t, c, "PUT", base+"/eureka/apps/ORDERS/10.0.0.5:orders:8080", "", newAgent...); code != 200 || serial.Cmp(second.Serial) != 0 {
		t.Fatalf("after a failed reload: %d with %v, want 200 with %v", code, serial, second.Serial)
	}
	if !strings.Contains(logs.String(), "reload incomplete") {
		t.Errorf("failed reload not logged:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "tls=true auth=true") {
		t.Errorf("listening line does not say TLS and auth are on:\n%s", logs)
	}
}

// TestServerMutualTLSPeersReplicate runs two peers over mutual TLS: each
// shows a client certificate whose CN is a user with the peer role, so a
// write to one appears on the other. A third server without a client
// certificate is refused by its peer, and says so in /v1/status.
func TestServerMutualTLSPeersReplicate(t *testing.T) {
	ca := authtest.NewCA(t, "cluster CA")
	creds := filepath.Join(t.TempDir(), "credentials.json")
	peerUser := func(name string) authtest.User {
		return authtest.User{User: auth.User{Name: name, Roles: []auth.Role{auth.RolePeer}, Certificate: true}}
	}
	authtest.WriteCredentials(t, creds, auth.ReadsAuthenticated, secAgent, secOps, peerUser("peer-a"), peerUser("peer-b"))
	addrA, addrB := proctest.FreeAddr(t, "127.0.0.1"), proctest.FreeAddr(t, "127.0.0.1")
	urlA, urlB := "https://"+addrA+"/eureka", "https://"+addrB+"/eureka"
	open := func(addr, name string, peers ...string) *server.Server {
		serving := ca.Issue(name+"-server", name)
		client := ca.Issue(name+"-client", name)
		s, _ := openSecureServer(t, func(c *server.Config) {
			c.Listen = addr
			c.TLSCert, c.TLSKey, c.TLSClientCA = serving.CertFile, serving.KeyFile, ca.CertFile
			c.PeerCA, c.PeerCert, c.PeerKey = ca.CertFile, client.CertFile, client.KeyFile
			c.AuthFile = creds
			c.Replication.Peers = peers
			c.Replication.SyncTimeout = 2 * time.Second
		})
		return s
	}
	a := open(addrA, "peer-a", urlA, urlB)
	b := open(addrB, "peer-b", urlA, urlB)
	c := tlsClient(ca, nil)
	agent := []string{"Authorization", basicAuth(secAgent.Name, secAgent.Password)}
	if code, body, _ := authtest.Call(t, c, "POST", "https://"+a.Addr().String()+"/eureka/apps/ORDERS", registerBody, agent...); code != 204 {
		t.Fatalf("register on A: %d %s", code, body)
	}
	proctest.Eventually(t, 15*time.Second, "the registration to reach B over mutual TLS", func() bool {
		_, ok := b.Registry.Snapshot().Instance("ORDERS", "10.0.0.5:orders:8080")
		return ok
	})

	// A client certificate of a peer user lets its holder replicate
	// directly; without one (or with basic auth of a non-peer) it is 403.
	peerCert := ca.Issue("peer-b-client", "peer-b")
	batch := `{"replicationList":[{"appName":"ORDERS","id":"10.0.0.5:orders:8080","action":"StatusUpdate","status":"OUT_OF_SERVICE"}]}`
	if code, body, _ := authtest.Call(t, tlsClient(ca, peerCert), "POST", "https://"+a.Addr().String()+"/eureka/peerreplication/batch", batch); code != 200 || !strings.Contains(body, `"statusCode":200`) {
		t.Fatalf("batch with a peer certificate: %d %s", code, body)
	}
	if code, body, _ := authtest.Call(t, c, "POST", "https://"+a.Addr().String()+"/eureka/peerreplication/batch", batch, agent...); code != 403 || !strings.Contains(body, "peer role") {
		t.Fatalf("batch from an agent: %d %s, want 403", code, body)
	}

	// A server without a client certificate cannot replicate to B.
	addrC := proctest.FreeAddr(t, "127.0.0.1")
	serving := ca.Issue("peer-c-server", "peer-c")
	cs, _ := openSecureServer(t, func(cfg *server.Config) {
		cfg.Listen = addrC
		cfg.TLSCert, cfg.TLSKey = serving.CertFile, serving.KeyFile
		cfg.PeerCA = ca.CertFile
		cfg.AuthFile = creds
		cfg.Replication.Peers = []string{urlB}
		cfg.Replication.SyncTimeout = time.Second
	})
	if code, body, _ := authtest.Call(t, c, "POST", "https://"+addrC+"/eureka/apps/ORDERS", strings.Replace(registerBody, "10.0.0.5:orders:8080", "o-c", 1), agent...); code != 204 {
		t.Fatalf("register on C: %d %s", code, body)
	}
	proctest.Eventually(t, 15*time.Second, "C to report that B refused its credentials", func() bool {
		for _, p := range cs.Replicator.Status() {
			if strings.Contains(p.LastError, "refused our credentials") && strings.Contains(p.LastError, "401") {
				return true
			}
		}
		return false
	})
	if _, ok := b.Registry.Snapshot().Instance("ORDERS", "o-c"); ok {
		t.Fatal("B took a write from a server that is not a peer")
	}
}

// TestServerSecurityFlags checks the flags' validation messages.
func TestServerSecurityFlags(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	authtest.WriteFile(t, bad, []byte(`{"reads":"open","users":[{"name":"x","roles":["operator"],"secrets":["plain"]}]}`))
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"server", "--tls-cert", "c.pem"}, 2, "--tls-key: is empty while --tls-cert is set: give both or neither"},
		{[]string{"server", "--tls-client-ca", "ca.pem"}, 2, `--tls-client-ca "ca.pem": needs --tls-cert and --tls-key`},
		{[]string{"server", "--peer-cert", "c.pem"}, 2, "--peer-key: is empty while --peer-cert is set"},
		{[]string{"server", "--peers", "http://u:secret@h:1/eureka"}, 2, "--peers \"http://u:xxxxx@h:1/eureka\": carries credentials"},
		{[]string{"server", "--write-rate", "-1"}, 2, "--write-rate -1: want a finite number"},
		{[]string{"server", "--max-watchers-per-client", "-1"}, 2, "--max-watchers-per-client -1: want 0"},
		{[]string{"server", "--listen", "127.0.0.1:0", "--auth-file", filepath.Join(dir, "none.json")}, 1, "--auth-file: "},
		{[]string{"server", "--listen", "127.0.0.1:0", "--auth-file", bad}, 1, "plaintext secrets are refused"},
		{[]string{"server", "--listen", "127.0.0.1:0", "--tls-cert", bad, "--tls-key", bad}, 1, "--tls-cert: "},
		{[]string{"server", "-h"}, 0, "--auth-file"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.err) {
			t.Errorf("heureka %q: exit %d, stderr %q; want exit %d with %q", c.args, code, stderr.String(), c.code, c.err)
		}
		if strings.Contains(stderr.String(), "secret@") {
			t.Errorf("heureka %q printed a password: %s", c.args, stderr.String())
		}
	}
}

// TestAuthCommand makes secrets with `heureka auth` and checks a file with
// them, as an operator would.
func TestAuthCommand(t *testing.T) {
	runWith := func(in string, args ...string) (int, string, string) {
		t.Helper()
		stdin = strings.NewReader(in)
		defer func() { stdin = os.Stdin }()
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, hash, errs := runWith("correct horse\n", "auth", "hash", "-cost", "4")
	if code != 0 || !strings.HasPrefix(hash, "$2a$04$") {
		t.Fatalf("auth hash: %d %q %q", code, hash, errs)
	}
	code, tokenOut, _ := runWith("", "auth", "token")
	var token, secret string
	for l := range strings.SplitSeq(tokenOut, "\n") {
		if v, ok := strings.CutPrefix(l, "token:  "); ok {
			token = v
		}
		if v, ok := strings.CutPrefix(l, "secret: "); ok {
			secret = v
		}
	}
	if code != 0 || !strings.HasPrefix(token, "hk_") || secret != auth.HashToken(token) {
		t.Fatalf("auth token: %d %q", code, tokenOut)
	}
	if code, out, _ := runWith(token+"\n", "auth", "hash", "-token"); code != 0 || strings.TrimSpace(out) != secret {
		t.Fatalf("auth hash -token: %d %q, want %s", code, out, secret)
	}

	file := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteFile(t, file, []byte(`{"reads":"authenticated","users":[
		{"name":"ops","roles":["operator"],"secrets":["`+strings.TrimSpace(hash)+`"]},
		{"name":"dn-agent","roles":["agent"],"apps":["HDFS-DATANODE\\..*"],"secrets":["`+secret+`"]}]}`))
	if code, out, errs := runWith("", "auth", "check", file); code != 0 || !strings.Contains(out, "ok, 2 users, reads authenticated") {
		t.Fatalf("auth check: %d %q %q", code, out, errs)
	}
	store := auth.NewStore(file, slog.New(slog.DiscardHandler))
	if err := store.Load(); err != nil {
		t.Fatal(err)
	}
	for h, user := range map[string]string{basicAuth("ops", "correct horse"): "ops", "Bearer " + token: "dn-agent"} {
		r, _ := http.NewRequest("GET", "http://x/", nil)
		r.Header.Set("Authorization", h)
		if p, err := store.Authenticate(r); err != nil || p.Name != user {
			t.Fatalf("made secrets do not authenticate %s: %v", user, err)
		}
	}

	for _, c := range []struct {
		in   string
		args []string
		code int
		err  string
	}{
		{"", []string{"auth"}, 2, "missing subcommand"},
		{"", []string{"auth", "nope"}, 2, "unknown subcommand"},
		{"", []string{"auth", "hash"}, 2, "no secret"},
		{"x\n", []string{"auth", "hash", "-cost", "40"}, 2, "cost"},
		{"", []string{"auth", "hash", "secret"}, 2, "standard input"},
		{"", []string{"auth", "check"}, 2, "one FILE"},
		{"", []string{"auth", "check", filepath.Join(t.TempDir(), "none")}, 1, "no such file"},
		{"", []string{"auth", "-h"}, 0, "heureka auth hash"},
	} {
		if code, _, errs := runWith(c.in, c.args...); code != c.code || !strings.Contains(errs, c.err) {
			t.Errorf("heureka %q: exit %d, stderr %q; want %d with %q", c.args, code, errs, c.code, c.err)
		}
	}
}

// TestServerTimeoutsSpareStreams: the read timeout cuts a client that
// sends its body too slowly, but a watch stream lives on past it.
func TestServerTimeoutsSpareStreams(t *testing.T) {
	s, _ := openSecureServer(t, func(c *server.Config) { c.ReadTimeout = 300 * time.Millisecond })
	base := "http://" + s.Addr().String()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/watch", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		b := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(b)
			if n > 0 {
				lines <- string(b[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	<-lines                 // hello
	time.Sleep(time.Second) // three read timeouts
	if code, body, _ := request(t, "POST", base+"/eureka/apps/ORDERS", registerBody, "Content-Type", "application/json"); code != 204 {
		t.Fatalf("register: %d %s", code, body)
	}
	select {
	case l, ok := <-lines:
		if !ok || !strings.Contains(l, "event: change") {
			t.Fatalf("stream after the read timeout: %q (open %v)", l, ok)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change on a stream older than the read timeout")
	}

	// A body that never comes is cut off.
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	_, _ = io.WriteString(conn, "POST /eureka/apps/ORDERS HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	answer, _ := io.ReadAll(conn)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("slow sender held for %v", d)
	}
	if len(answer) > 0 && !bytes.HasPrefix(answer, []byte("HTTP/1.1 400")) {
		t.Fatalf("slow sender got %q, want 400 or a closed connection", answer)
	}
}

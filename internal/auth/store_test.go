package auth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/proctest"
)

var (
	dnAgent = authtest.User{User: auth.User{Name: "dn-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{`HDFS-DATANODE\..*`}}, Password: "dn-secret"}
	ops     = authtest.User{User: auth.User{Name: "ops", Roles: []auth.Role{auth.RoleOperator}}, Password: "ops-secret"}
	peer    = authtest.User{User: auth.User{Name: "peer-1", Roles: []auth.Role{auth.RolePeer}, Certificate: true}, Password: "hk_peertoken", Token: true}
)

func newStore(t *testing.T, reads auth.Reads, users ...authtest.User) (*auth.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, path, reads, users...)
	s := auth.NewStore(path, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	return s, path
}

func req(authz ...string) *http.Request {
	r, _ := http.NewRequest("GET", "http://x/eureka/apps", nil)
	for _, a := range authz {
		r.Header.Add("Authorization", a)
	}
	return r
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestAuthenticate(t *testing.T) {
	s, _ := newStore(t, auth.ReadsOpen, dnAgent, ops, peer)
	for _, c := range []struct {
		name   string
		r      *http.Request
		user   string // "" for anonymous
		method string
		err    string // an Unauthenticated error containing this
	}{
		{"anonymous", req(), "", "", ""},
		{"basic", req(basic("dn-agent", "dn-secret")), "dn-agent", "basic", ""},
		{"basic, scheme in lower case", req("basic " + base64.StdEncoding.EncodeToString([]byte("ops:ops-secret"))), "ops", "basic", ""},
		{"token as a basic password", req(basic("peer-1", "hk_peertoken")), "peer-1", "basic", ""},
		{"bearer", req("Bearer hk_peertoken"), "peer-1", "bearer", ""},
		{"wrong password", req(basic("dn-agent", "nope")), "", "", `user "dn-agent" is unknown or its password is wrong`},
		{"unknown user", req(basic("mallory", "dn-secret")), "", "", `user "mallory" is unknown`},
		{"another user's password", req(basic("ops", "dn-secret")), "", "", "password is wrong"},
		{"empty password", req(basic("ops", "")), "", "", "password is wrong"},
		{"bcrypt password as bearer", req("Bearer dn-secret"), "", "", "bearer token is not valid"},
		{"empty bearer", req("Bearer "), "", "", "empty bearer token"},
		{"bad base64", req("Basic !!!"), "", "", "malformed basic credentials"},
		{"no colon", req("Basic " + base64.StdEncoding.EncodeToString([]byte("ops"))), "", "", "no ':'"},
		{"no user", req(basic("", "x")), "", "", "without a user name"},
		{"control character in user", req(basic("o\x00ps", "x")), "", "", "invalid user name"},
		{"huge credentials", req(basic("ops", strings.Repeat("x", 5000))), "", "", "at most"},
		{"unknown scheme", req("Digest username=ops"), "", "", `scheme "Digest" is not supported`},
		{"two headers", req(basic("ops", "ops-secret"), "Bearer hk_peertoken"), "", "", "2 Authorization headers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := s.Authenticate(c.r)
			if c.err != "" {
				var ae *auth.Error
				if !errors.As(err, &ae) || ae.Kind != auth.Unauthenticated || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, %v; want an Unauthenticated error with %q", p, err, c.err)
				}
				if strings.Contains(err.Error(), "secret") && strings.Contains(c.name, "password") {
					t.Errorf("error %q quotes a secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.user == "" && p != nil:
				t.Fatalf("got %q, want anonymous", p.Name)
			case c.user != "" && (p == nil || p.Name != c.user || p.Method != c.method):
				t.Fatalf("got %+v, want %s by %s", p, c.user, c.method)
			}
		})
	}
}

// TestAuthenticateCertificate maps a verified client certificate to the
// user named by its CN, when that user allows it.
func TestAuthenticateCertificate(t *testing.T) {
	s, _ := newStore(t, auth.ReadsOpen, dnAgent, peer)
	ca := authtest.NewCA(t, "test CA")
	withCert := func(cn string, verified bool) *http.Request {
		r := req()
		leaf, err := x509.ParseCertificate(ca.Issue(cn, cn).TLS.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
		if verified {
			r.TLS.VerifiedChains = [][]*x509.Certificate{{leaf}}
		}
		return r
	}
	if p, err := s.Authenticate(withCert("peer-1", true)); err != nil || p == nil || p.Name != "peer-1" || p.Method != "certificate" || !p.Has(auth.RolePeer) {
		t.Fatalf("verified peer certificate: %+v, %v", p, err)
	}
	if p, err := s.Authenticate(withCert("peer-1", false)); err != nil || p != nil {
		t.Fatalf("unverified certificate authenticated: %+v, %v", p, err)
	}
	if p, err := s.Authenticate(withCert("dn-agent", true)); err != nil || p != nil {
		t.Fatalf("certificate of a user without \"certificate\": true authenticated: %+v, %v", p, err)
	}
	r := withCert("peer-1", true)
	r.Header.Set("Authorization", basic("dn-agent", "dn-secret"))
	if p, err := s.Authenticate(r); err != nil || p.Name != "dn-agent" {
		t.Fatalf("Authorization header should win over the certificate: %+v, %v", p, err)
	}
}

// TestReload: new credentials work at once, old ones stop, and a bad file
// keeps what was loaded.
func TestReload(t *testing.T) {
	s, path := newStore(t, auth.ReadsOpen, dnAgent, ops)
	mustAuth := func(user, pass string, ok bool) {
		t.Helper()
		p, err := s.Authenticate(req(basic(user, pass)))
		if ok && (err != nil || p == nil || p.Name != user) {
			t.Fatalf("%s: %v, want success", user, err)
		}
		if !ok && err == nil {
			t.Fatalf("%s: authenticated, want refusal", user)
		}
	}
	mustAuth("ops", "ops-secret", true) // remembered from now on

	rotated := ops
	rotated.Password = "new-ops-secret"
	authtest.WriteCredentials(t, path, auth.ReadsAuthenticated, dnAgent, rotated)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	mustAuth("ops", "ops-secret", false) // the memory went with the old file
	mustAuth("ops", "new-ops-secret", true)
	if s.Reads() != auth.ReadsAuthenticated {
		t.Errorf("reads = %q after reload", s.Reads())
	}

	for _, bad := range []string{`{"reads":"open","users":[{"name":"ops","roles":["god"],"secrets":["x"]}]}`, `{`, ``} {
		authtest.WriteFile(t, path, []byte(bad))
		if err := s.Load(); err == nil {
			t.Fatalf("bad file %q loaded", bad)
		}
		mustAuth("ops", "new-ops-secret", true)
		mustAuth("dn-agent", "dn-secret", true)
	}
}

// TestWatch: an edited file is picked up without a call to Load.
func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, path, auth.ReadsOpen, ops)
	var logs proctest.Buffer
	s := auth.NewStore(path, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Watch(ctx, 5*time.Millisecond) }()
	defer func() { cancel(); <-done }()

	// A refused file: the old credentials stay.
	authtest.WriteFile(t, path, []byte(`{"reads":"open","users":[{"name":"ops","roles":["nobody"],"secrets":[]}]}`))
	proctest.Eventually(t, 5*time.Second, "the bad edit to be refused", func() bool {
		return strings.Contains(logs.String(), "credentials file refused")
	})
	if _, err := s.Authenticate(req(basic("ops", "ops-secret"))); err != nil {
		t.Fatalf("old credentials lost after a bad edit: %v", err)
	}
	authtest.WriteCredentials(t, path, auth.ReadsOpen, dnAgent)
	proctest.Retry(t, 5*time.Second, "the edit to be picked up", func() error {
		if _, err := s.Authenticate(req(basic("ops", "ops-secret"))); err == nil {
			return errors.New("ops still authenticates")
		}
		p, err := s.Authenticate(req(basic("dn-agent", "dn-secret")))
		if err == nil && p.Name != "dn-agent" {
			err = fmt.Errorf("dn-agent authenticates as %q", p.Name)
		}
		return err
	})
}

// TestVerificationIsRemembered: a bcrypt check is paid once per client
// and password: the checks after the first are answered from memory, and
// a wrong password is checked again each time.
func TestVerificationIsRemembered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	h, err := auth.HashPassword("slow-secret", 4) // the lowest cost: only the count matters
	if err != nil {
		t.Fatal(err)
	}
	authtest.WriteFile(t, path, []byte(`{"reads":"open","users":[{"name":"u","roles":["reader"],"secrets":["`+h+`"]}]}`))
	s := auth.NewStore(path, slog.New(slog.DiscardHandler))
	checks := auth.CountBcrypt(s)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := s.Authenticate(req(basic("u", "slow-secret"))); err != nil {
			t.Fatal(err)
		}
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("100 checks of one password made %d bcrypt comparisons, want 1", n)
	}
	for range 3 {
		if _, err := s.Authenticate(req(basic("u", "wrong"))); err == nil {
			t.Fatal("a wrong password authenticated")
		}
	}
	if n := checks.Load(); n != 4 {
		t.Errorf("after 3 wrong passwords, %d bcrypt comparisons, want 4: a refusal must not be remembered", n)
	}
}

func TestBeforeLoadEverythingIsRefused(t *testing.T) {
	s := auth.NewStore(filepath.Join(t.TempDir(), "missing.json"), nil)
	if err := s.Load(); err == nil {
		t.Fatal("missing file loaded")
	}
	if _, err := s.Authenticate(req()); err == nil {
		t.Fatal("anonymous request accepted with no credentials loaded")
	}
	if _, err := s.Authorize(nil, auth.Request{Action: auth.Read}); err == nil {
		t.Fatal("read authorised with no credentials loaded")
	}
}

func TestAuthorizationHeader(t *testing.T) {
	for in, want := range map[string]string{
		"peer:s3cret\n": "Basic " + base64.StdEncoding.EncodeToString([]byte("peer:s3cret")),
		"  hk_token  ":  "Bearer hk_token",
		"":              "",
		"a\nb":          "",
		"bad user:x":    "",
	} {
		got, err := auth.AuthorizationHeader(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("AuthorizationHeader(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestTokens(t *testing.T) {
	a, b := auth.NewToken(), auth.NewToken()
	if a == b || len(a) != 3+52 || !strings.HasPrefix(a, "hk_") {
		t.Fatalf("tokens %q %q", a, b)
	}
	if h := auth.HashToken("x"); h != "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Fatalf("HashToken = %s", h)
	}
	if _, err := auth.HashPassword("x", 99); err == nil {
		t.Fatal("cost 99 accepted")
	}
}

// FuzzAuthenticate: no Authorization header makes the parser panic, and
// none but the real credentials authenticate.
func FuzzAuthenticate(f *testing.F) {
	path := filepath.Join(f.TempDir(), "c.json")
	ops4 := ops
	authtest.WriteCredentials(f, path, auth.ReadsOpen, ops4, peer)
	s := auth.NewStore(path, slog.New(slog.DiscardHandler))
	if err := s.Load(); err != nil {
		f.Fatal(err)
	}
	for _, h := range []string{basic("ops", "ops-secret"), basic("ops", "x"), "Bearer hk_peertoken", "bearer   hk_peertoken ",
		"Basic", "Basic =", "Basic " + base64.StdEncoding.EncodeToString([]byte("peer-1:hk_peertoken")), "Digest x", "\x00", "Basic \xff"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		p, err := s.Authenticate(req(h))
		if err != nil || p == nil {
			return
		}
		scheme, cred, _ := strings.Cut(strings.TrimSpace(h), " ")
		cred = strings.TrimSpace(cred)
		switch strings.ToLower(scheme) {
		case "bearer":
			if cred != "hk_peertoken" || p.Name != "peer-1" {
				t.Fatalf("%q authenticated as %s", h, p.Name)
			}
		case "basic":
			raw, _ := base64.StdEncoding.DecodeString(cred)
			if want := map[string]string{"ops": "ops:ops-secret", "peer-1": "peer-1:hk_peertoken"}[p.Name]; string(raw) != want {
				t.Fatalf("%q (%q) authenticated as %s", h, raw, p.Name)
			}
		default:
			t.Fatalf("%q authenticated as %s", h, p.Name)
		}
	})
}

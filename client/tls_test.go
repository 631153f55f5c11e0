package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
)

// secureServer is the real HTTP API over TLS, asking for client
// certificates signed by ca, with credentials: an agent for ORDERS (by
// password), a reader (by token) and a peer (by certificate).
func secureServer(t *testing.T, ca *authtest.CA) (base string, reg *registry.Registry) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, path, auth.ReadsAuthenticated,
		authtest.User{User: auth.User{Name: "agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{"ORDERS"}}, Password: "p@ss:word/?"},
		authtest.User{User: auth.User{Name: "reader", Roles: []auth.Role{auth.RoleReader}}, Password: "hk_reader", Token: true},
		authtest.User{User: auth.User{Name: "cert-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{"ORDERS"}, Certificate: true}},
	)
	store := auth.NewStore(path, testLogger(t))
	if err := store.Load(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.DefaultConfig()
	cfg.Auth = store
	api, err := httpapi.New(cfg, reg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(api.Handler())
	serverCert := ca.Issue("server", "registry")
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert.TLS}, ClientCAs: ca.Pool(), ClientAuth: tls.VerifyClientCertIfGiven}
	hs.StartTLS()
	t.Cleanup(func() { api.CloseStreams(); hs.Close() })
	return hs.URL + "/eureka", reg
}

func withUser(base, user, pass string) string {
	u, _ := url.Parse(base)
	u.User = url.UserPassword(user, pass)
	return u.String()
}

// TestTLSAndCredentials runs the calls over TLS with each way of
// authenticating: the URL's user:password (basic auth, as Eureka clients
// send it), a bearer token, and a client certificate.
func TestTLSAndCredentials(t *testing.T) {
	ca := authtest.NewCA(t, "test CA")
	base, reg := secureServer(t, ca)
	ctx := context.Background()
	in := testInstance("ORDERS", "o1", heureka.StatusUp)

	agent := newClientConfig(t, func(c *client.Config) {
		c.URLs = []string{withUser(base, "agent", "p@ss:word/?")}
		c.CAFile = ca.CertFile
	})
	if err := agent.Register(ctx, in); err != nil {
		t.Fatalf("register with basic auth from the URL over TLS: %v", err)
	}
	if err := agent.Renew(ctx, "ORDERS", "o1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Snapshot().Instance("ORDERS", "o1"); !ok {
		t.Fatal("not registered")
	}

	// A token does not replace the URL's credentials, which win.
	both := newClientConfig(t, func(c *client.Config) {
		c.URLs = []string{withUser(base, "agent", "p@ss:word/?")}
		c.CAFile = ca.CertFile
		c.BearerToken = "hk_reader"
	})
	if err := both.Renew(ctx, "ORDERS", "o1"); err != nil {
		t.Fatalf("URL credentials should win over the token: %v", err)
	}

	reader := newClientConfig(t, func(c *client.Config) { c.URLs = []string{base}; c.CAFile = ca.CertFile; c.BearerToken = "hk_reader" })
	apps, err := reader.Apps(ctx)
	if err != nil || len(apps.Apps) != 1 {
		t.Fatalf("read with a bearer token: %v, %v", apps, err)
	}
	err = reader.Cancel(ctx, "ORDERS", "o1")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusForbidden || !errors.Is(err, client.ErrRejected) || !strings.Contains(ce.Message, "may not cancel") {
		t.Fatalf("reader cancelling: %v, want 403 with the server's message", err)
	}

	cert := ca.Issue("cert-agent", "cert-agent")
	byCert := newClientConfig(t, func(c *client.Config) {
		c.URLs = []string{base}
		c.CAFile = ca.CertFile
		c.CertFile = cert.CertFile
		c.KeyFile = cert.KeyFile
	})
	if err := byCert.SetStatus(ctx, "ORDERS", "o1", heureka.StatusOutOfService); err != nil {
		t.Fatalf("write as the certificate's user: %v", err)
	}

	anonymous := newClientConfig(t, func(c *client.Config) { c.URLs = []string{base}; c.CAFile = ca.CertFile })
	if _, err := anonymous.Apps(ctx); !errors.As(err, &ce) || ce.Status != http.StatusUnauthorized || !strings.Contains(ce.Message, "send credentials") {
		t.Fatalf("anonymous read: %v, want 401", err)
	}
	if err := anonymous.Cancel(ctx, "ORDERS", "o1"); err == nil {
		t.Fatal("anonymous cancel succeeded")
	}
	if strings.Contains(err.Error(), "p@ss") {
		t.Fatalf("password in an error: %v", err)
	}

	// Without the CA the server is not trusted; the error says so, once
	// per URL, and is not retried for ever.
	untrusting := newClientConfig(t, func(c *client.Config) { c.URLs = []string{base}; c.BearerToken = "hk_reader"; c.Rounds = 1 })
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := untrusting.Apps(cctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unknown CA: %v, want a certificate error", err)
	}
}

func TestTLSConfigValidate(t *testing.T) {
	ca := authtest.NewCA(t, "test CA")
	cert := ca.Issue("c", "c")
	for _, c := range []struct {
		edit func(*client.Config)
		msg  string
	}{
		{func(c *client.Config) { c.URLs = []string{"https://h/eureka"}; c.CertFile = cert.CertFile }, "KeyFile: is empty while CertFile is set"},
		{func(c *client.Config) {
			c.URLs = []string{"https://h/eureka"}
			c.CAFile = ca.CertFile
			c.Transport = http.DefaultTransport
		}, "Transport"},
		{func(c *client.Config) { c.URLs = []string{"https://h/eureka"}; c.BearerToken = "a\nb" }, "BearerToken"},
		{func(c *client.Config) {
			c.URLs = []string{"https://h/eureka"}
			c.CAFile = filepath.Join(t.TempDir(), "none.pem")
		}, "CAFile"},
		{func(c *client.Config) { c.URLs = []string{"https://h/eureka"}; c.CAFile = cert.KeyFile }, "CAFile \"" + cert.KeyFile + "\": holds no PEM certificate"},
		{func(c *client.Config) {
			c.URLs = []string{"https://h/eureka"}
			c.CertFile = cert.CertFile
			c.KeyFile = ca.CertFile
		}, "CertFile"},
	} {
		cfg := client.DefaultConfig()
		c.edit(&cfg)
		_, err := client.New(cfg)
		if err == nil || !strings.Contains(err.Error(), c.msg) || heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("%+v: %v, want an EINVALID error with %q", cfg, err, c.msg)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/server"
)

// TestCLIReachesASecureRegistry runs operator commands against a server
// that serves TLS and requires credentials for reads and writes: with the
// CA and the token they work; without the CA they fail with exit code 1
// and say why; without the token, 401 says what is missing.
func TestCLIReachesASecureRegistry(t *testing.T) {
	ca := authtest.NewCA(t, "cli CA")
	cert := ca.Issue("server", "heureka")
	creds := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, creds, auth.ReadsAuthenticated, secAgent, secOps)
	s, _ := openSecureServer(t, func(c *server.Config) {
		c.TLSCert, c.TLSKey, c.AuthFile = cert.CertFile, cert.KeyFile, creds
		c.AuthPoll = time.Hour
	})
	c := tlsClient(ca, nil)
	base := "https://" + s.Addr().String()
	agent := []string{"Authorization", basicAuth(secAgent.Name, secAgent.Password)}
	if code, body, _ := authtest.Call(t, c, "POST", base+"/eureka/apps/ORDERS", registerBody, agent...); code != 204 {
		t.Fatalf("register: %d %s", code, body)
	}
	registry := base + "/eureka"
	runCLI := func(token string, args ...string) (int, string, string) {
		t.Setenv(tokenEnv, token)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := runCLI(secOps.Password, "apps", "--registry", registry, "--ca-file", ca.CertFile)
	if code != 0 || !strings.Contains(out, "ORDERS") {
		t.Fatalf("apps with CA and token: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The Hadoop commands take the same connection flags.
	dn := testDataNode("dn1.example.com", "/dc1/rack-a", 10, 1, 300)
	ops := []string{"Authorization", "Bearer " + secOps.Password, "Content-Type", "application/json"}
	if code, body, _ := authtest.Call(t, c, "POST", base+"/eureka/apps/"+dn.App, string(eureka.EncodeInstance(eureka.JSON, dn)), ops...); code != 204 {
		t.Fatalf("register %s: %d %s", dn, code, body)
	}
	for _, args := range [][]string{
		{"hadoop", "hosts", "--cluster", "prod", "--registry", registry, "--ca-file", ca.CertFile},
		{"topology", "--cache", filepath.Join(t.TempDir(), "t.json"), "--registry", registry, "--ca-file", ca.CertFile, "dn1.example.com"},
	} {
		want := map[string]string{"hadoop": "dn1.example.com\n", "topology": "/dc1/rack-a\n"}[args[0]]
		if code, out, errOut := runCLI(secOps.Password, args...); code != 0 || out != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", args, code, out, errOut, want)
		}
	}

	code, _, errOut = runCLI(secOps.Password, "apps", "--registry", registry)
	if code != 1 || !strings.Contains(errOut, "certificate") {
		t.Fatalf("apps without the CA: exit %d, stderr %q; want 1 and a word about the certificate", code, errOut)
	}
	code, _, errOut = runCLI("", "apps", "--registry", registry, "--ca-file", ca.CertFile)
	if code == 0 || !strings.Contains(errOut, "401") && !strings.Contains(strings.ToLower(errOut), "credentials") {
		t.Fatalf("apps without a token: exit %d, stderr %q; want a refusal naming the missing credentials", code, errOut)
	}
}

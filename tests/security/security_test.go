// Package security_test runs `heureka server` as a real process with TLS
// and credentials and checks what only a real process shows: SIGHUP
// reloads the certificate and the credentials file, the Go client speaks
// TLS and basic or bearer auth to it, scoped agents stay in their lane,
// and the header limit holds.
package security_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }

// server is one `heureka server` process.
type server struct {
	*proctest.Proc
	addr string
}

// startServer runs `heureka server` on a free loopback port with args
// (a later --listen wins) and env added to the environment.
func startServer(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(proctest.Bin(t), append([]string{"server", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	p := proctest.StartCmd(t, "server", cmd)
	return &server{Proc: p, addr: p.WaitAddr(15 * time.Second)}
}

func (s *server) logs() string { return s.Output() }

func trusting(ca *authtest.CA) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, DisableKeepAlives: true}}
}

var (
	dnAgent = authtest.User{User: auth.User{Name: "dn-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{`HDFS-DATANODE\..*`}}, Password: "dn-pass"}
	nnAgent = authtest.User{User: auth.User{Name: "nn-agent", Roles: []auth.Role{auth.RoleAgent}, Apps: []string{`HDFS-NAMENODE\..*`}}, Password: "hk_nn_token", Token: true}
	ops     = authtest.User{User: auth.User{Name: "ops", Roles: []auth.Role{auth.RoleOperator}}, Password: "ops-pass"}
)

func instance(app, id string) *heureka.Instance {
	in := &heureka.Instance{ID: id, App: app, HostName: id + ".example", IPAddr: "127.0.0.1",
		Status: heureka.StatusUp, Port: heureka.Port{Number: 9866, Enabled: true}}
	in.Normalize()
	return in
}

// newClient builds a client from the defaults, quick retries and edit.
func newClient(t *testing.T, edit func(*client.Config)) *client.Client {
	t.Helper()
	cfg := client.DefaultConfig()
	cfg.Rounds, cfg.Backoff, cfg.MaxBackoff = 1, 10*time.Millisecond, 20*time.Millisecond
	edit(&cfg)
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func withUser(base, user, pass string) string {
	u, _ := url.Parse(base)
	u.User = url.UserPassword(user, pass)
	return u.String()
}

// TestGoClientOverTLSWithScopedAgents: the Go client registers over TLS
// with basic auth from the URL and with a bearer token; a DataNode agent
// cannot touch the NameNode; an operator can, and is audited.
func TestGoClientOverTLSWithScopedAgents(t *testing.T) {
	ca := authtest.NewCA(t, "test CA")
	cert := ca.Issue("server", "heureka")
	creds := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, creds, auth.ReadsAuthenticated, dnAgent, nnAgent, ops)
	s := startServer(t, nil, "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--auth-file", creds)
	base := "https://" + s.addr + "/eureka"
	ctx := context.Background()

	dn := newClient(t, func(c *client.Config) {
		c.URLs = []string{withUser(base, "dn-agent", "dn-pass")}
		c.CAFile = ca.CertFile
	})
	nn := newClient(t, func(c *client.Config) { c.URLs = []string{base}; c.CAFile = ca.CertFile; c.BearerToken = "hk_nn_token" })
	if err := dn.Register(ctx, instance("HDFS-DATANODE.PROD", "dn1")); err != nil {
		t.Fatalf("DataNode agent registers its own: %v", err)
	}
	if err := nn.Register(ctx, instance("HDFS-NAMENODE.PROD", "nn1")); err != nil {
		t.Fatalf("NameNode agent registers with a token: %v", err)
	}
	var ce *client.Error
	for name, err := range map[string]error{
		"register": dn.Register(ctx, instance("HDFS-NAMENODE.PROD", "evil")),
		"status":   dn.SetStatus(ctx, "HDFS-NAMENODE.PROD", "nn1", heureka.StatusOutOfService),
		"cancel":   dn.Cancel(ctx, "HDFS-NAMENODE.PROD", "nn1"),
		"metadata": dn.UpdateMetadata(ctx, "HDFS-NAMENODE.PROD", "nn1", map[string]string{"haState": "standby"}),
	} {
		if !errors.As(err, &ce) || ce.Status != http.StatusForbidden || !strings.Contains(ce.Message, `"dn-agent"`) {
			t.Errorf("DataNode agent %s on the NameNode: %v, want 403", name, err)
		}
	}
	apps, err := nn.Apps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(len(apps.Apps)); got != "2" {
		t.Fatalf("%s applications after the refused calls, want 2: %+v", got, apps)
	}

	opsClient := newClient(t, func(c *client.Config) { c.URLs = []string{withUser(base, "ops", "ops-pass")}; c.CAFile = ca.CertFile })
	if err := opsClient.SetStatus(ctx, "HDFS-NAMENODE.PROD", "nn1", heureka.StatusOutOfService); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, 15*time.Second, "the audit line", func() bool {
		return strings.Contains(s.logs(), `msg="operator action" subsystem=audit user=ops auth=basic action="set the status of" app=HDFS-NAMENODE.PROD id=nn1`)
	})
	if strings.Contains(s.logs(), "dn-pass") || strings.Contains(s.logs(), "ops-pass") || strings.Contains(s.logs(), "hk_nn_token") {
		t.Fatalf("a secret reached the log:\n%s", s.logs())
	}

	anonymous := newClient(t, func(c *client.Config) { c.URLs = []string{base}; c.CAFile = ca.CertFile })
	if _, err := anonymous.Apps(ctx); !errors.As(err, &ce) || ce.Status != http.StatusUnauthorized {
		t.Fatalf("anonymous read with reads authenticated: %v", err)
	}
	// Headers: under the 64 KiB limit served, over it refused with 431.
	c := trusting(ca)
	if code, _, _ := authtest.Call(t, c, "GET", "https://"+s.addr+"/healthz", "", "X-Pad", strings.Repeat("p", 60<<10)); code != 200 {
		t.Fatalf("60 KiB header: %d", code)
	}
	if code, _, _ := authtest.Call(t, c, "GET", "https://"+s.addr+"/healthz", "", "X-Pad", strings.Repeat("p", 80<<10)); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("80 KiB header: %d, want 431", code)
	}
}

// TestSIGHUPReloads replaces the certificate and the credentials on disk
// and sends SIGHUP: new connections get the new certificate, the new
// password works and the old one stops; a broken file then changes
// nothing and is logged.
func TestSIGHUPReloads(t *testing.T) {
	ca := authtest.NewCA(t, "test CA")
	first := ca.Issue("server", "heureka")
	creds := filepath.Join(t.TempDir(), "credentials.json")
	authtest.WriteCredentials(t, creds, auth.ReadsOpen, dnAgent, ops)
	// A long poll: only the signal may pick up the changes.
	s := startServer(t, nil, "--tls-cert", first.CertFile, "--tls-key", first.KeyFile, "--auth-file", creds, "--auth-poll", "1h")
	c := trusting(ca)
	u := "https://" + s.addr + "/eureka/apps/HDFS-DATANODE.PROD"
	body := `{"instance":{"instanceId":"dn1","hostName":"dn1","app":"HDFS-DATANODE.PROD","ipAddr":"127.0.0.1","status":"UP",
		"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}}}`
	basic := func(user, pass string) []string {
		req, _ := http.NewRequest("GET", "/", nil)
		req.SetBasicAuth(user, pass)
		return []string{"Authorization", req.Header.Get("Authorization")}
	}
	if code, b, serial := authtest.Call(t, c, "POST", u, body, basic("dn-agent", "dn-pass")...); code != 204 || serial.Cmp(first.Serial) != 0 {
		t.Fatalf("before: %d %s with %v", code, b, serial)
	}

	second := ca.Issue("server", "heureka")
	rotated := dnAgent
	rotated.Password = "dn-pass-2"
	authtest.WriteCredentials(t, creds, auth.ReadsOpen, rotated, ops)
	if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, 15*time.Second, "the new certificate and password", func() bool {
		code, _, serial := authtest.Call(t, c, "PUT", u+"/dn1", "", basic("dn-agent", "dn-pass-2")...)
		return code == 200 && serial.Cmp(second.Serial) == 0
	})
	if code, _, _ := authtest.Call(t, c, "PUT", u+"/dn1", "", basic("dn-agent", "dn-pass")...); code != 401 {
		t.Fatalf("old password after SIGHUP: %d, want 401", code)
	}

	authtest.WriteFile(t, creds, []byte(`{"reads":"open","users":[{"name":"dn-agent"}]}`))
	if err := os.WriteFile(second.KeyFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, 15*time.Second, "the failed reload in the log", func() bool { return strings.Contains(s.logs(), "reload incomplete") })
	if code, _, serial := authtest.Call(t, c, "PUT", u+"/dn1", "", basic("dn-agent", "dn-pass-2")...); code != 200 || serial.Cmp(second.Serial) != 0 {
		t.Fatalf("after a broken reload: %d with %v, want 200 with %v", code, serial, second.Serial)
	}
}

// TestPeerCredentialsFromEnvironment: two plain-HTTP peers with auth
// replicate when each sends peer credentials from $HEUREKA_PEER_AUTH, and
// the secret is on no command line.
func TestPeerCredentialsFromEnvironment(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "credentials.json")
	peer := authtest.User{User: auth.User{Name: "peer", Roles: []auth.Role{auth.RolePeer}}, Password: "hk_peer_secret", Token: true}
	authtest.WriteCredentials(t, creds, auth.ReadsAuthenticated, dnAgent, peer)
	addrA, addrB := proctest.FreeAddr(t, "127.0.0.1"), proctest.FreeAddr(t, "127.0.0.1")
	peers := "http://" + addrA + "/eureka,http://" + addrB + "/eureka"
	env := []string{"HEUREKA_PEER_AUTH=hk_peer_secret"}
	a := startServer(t, env, "--listen", addrA, "--auth-file", creds, "--peers", peers, "--sync-timeout", "2s")
	b := startServer(t, env, "--listen", addrB, "--auth-file", creds, "--peers", peers, "--sync-timeout", "2s")
	dn := newClient(t, func(c *client.Config) { c.URLs = []string{withUser("http://"+a.addr+"/eureka", "dn-agent", "dn-pass")} })
	if err := dn.Register(context.Background(), instance("HDFS-DATANODE.PROD", "dn1")); err != nil {
		t.Fatal(err)
	}
	onB := newClient(t, func(c *client.Config) {
		c.URLs = []string{"http://" + b.addr + "/eureka"}
		c.BearerToken = "hk_peer_secret"
	})
	proctest.Eventually(t, 15*time.Second, "the registration on B", func() bool {
		_, err := onB.Instance(context.Background(), "HDFS-DATANODE.PROD", "dn1")
		return err == nil
	})
	if strings.Contains(strings.Join(a.Cmd.Args, " "), "hk_peer_secret") {
		t.Fatal("the peer secret is on the command line")
	}
}

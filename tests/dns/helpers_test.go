// Package dns_test runs `heureka server --dns-listen` as a real process and
// asks it through real resolvers: dig, Go's pure resolver, glibc's resolver
// (getent) and the JVM's InetAddress in a network namespace behind dnsmasq,
// with the cluster's DataNodes and NameNodes simulated by `heureka sim` and
// registered by `heureka agent`. The binary is built once by TestMain (or
// taken from $HEUREKA_BIN).
package dns_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }

var dnsRE = regexp.MustCompile(`heureka server listening.* dns=(\S+)`)

// server is a running `heureka server` with DNS on.
type server struct {
	*proctest.Proc
	http, dns string // HOST:PORT
}

func (s *server) URL() string { return "http://" + s.http + "/eureka" }

// dnsPort is the DNS port alone, as dig -p takes it.
func (s *server) dnsPort() string { return s.dns[strings.LastIndexByte(s.dns, ':')+1:] }

func startServer(t *testing.T, extra ...string) *server {
	t.Helper()
	args := append([]string{"server", "--listen", "127.0.0.1:0", "--dns-listen", "127.0.0.1:0"}, extra...)
	p := proctest.Start(t, "server", args...)
	d := p.WaitFor(dnsRE, 20*time.Second)[1]
	return &server{Proc: p, http: p.WaitAddr(20 * time.Second), dns: d}
}

func newClient(t *testing.T, url string) *client.Client {
	t.Helper()
	cfg := client.DefaultConfig()
	cfg.URLs, cfg.Logger = []string{url}, slog.New(slog.DiscardHandler)
	cfg.ConnectTimeout, cfg.ReadTimeout, cfg.Rounds = 5*time.Second, 10*time.Second, 2
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// instance is an UP instance of app with ID and host name host at ip.
func instance(app, host, ip string, md ...string) *heureka.Instance {
	m := map[string]string{}
	for i := 0; i+1 < len(md); i += 2 {
		m[md[i]] = md[i+1]
	}
	return &heureka.Instance{ID: host, App: app, HostName: host, IPAddr: ip, Status: heureka.StatusUp,
		Port: heureka.Port{Number: 8020, Enabled: true}, Metadata: heureka.MetadataOf(m),
		Lease: heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 600}}
}

func register(t *testing.T, c *client.Client, ins ...*heureka.Instance) {
	t.Helper()
	for _, in := range ins {
		if err := c.Register(ctx(t), in); err != nil {
			t.Fatalf("register %s: %v", in.ID, err)
		}
	}
}

// nameNodes are a 3-NameNode application: nn1 standby, nn2 active, nn3
// observer, at 192.0.2.1-3 (TEST-NET-1: no route, so no resolver reorders
// them by the source address).
const nnApp = "HDFS-NAMENODE.PROD"

func nameNodes() []*heureka.Instance {
	return []*heureka.Instance{
		instance(nnApp, "nn1.example.com", "192.0.2.1", "role_state", "standby"),
		instance(nnApp, "nn2.example.com", "192.0.2.2", "role_state", "active"),
		instance(nnApp, "nn3.example.com", "192.0.2.3", "role_state", "observer"),
	}
}

// failover makes nn1 the active and nn2 a standby, as ZKFC and the agents
// would report it.
func failover(t *testing.T, c *client.Client) {
	t.Helper()
	for id, st := range map[string]string{"nn2.example.com": "standby", "nn1.example.com": "active"} {
		if err := c.UpdateMetadata(ctx(t), nnApp, id, map[string]string{heureka.MetaRoleState: st}); err != nil {
			t.Fatal(err)
		}
	}
}

// need returns the path of tool, or skips the test when it is missing;
// under CI=true (where .ci/run installs it) a missing tool fails.
func need(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing and CI=true: .ci/run installs it (apt-get install -y %s)", tool, pkg)
		}
		t.Skipf("skipping: %s is not installed (apt-get install -y %s); CI=true makes this a failure", tool, pkg)
	}
	return p
}

// run runs a command and returns its standard output; it fails the test
// on a non-zero exit.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func fields(s string) []string { return strings.Fields(s) }

func lines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

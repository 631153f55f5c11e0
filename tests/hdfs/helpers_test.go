// Package hdfs_test runs heureka's HDFS pieces as real processes on
// loopback: `heureka server`, simulated daemons (`heureka sim`) and
// `heureka agent`, and reads the registry through the Go client. The
// binary is built once by TestMain (or taken from $HEUREKA_BIN).
package hdfs_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }

var simRE = regexp.MustCompile(`heureka sim listening.* http=(\S+) port=(\S+) control=(\S+)`)

// server is a running `heureka server`.
type server struct {
	*proctest.Proc
	addr string
}

// URL is the Eureka base URL.
func (s *server) URL() string { return "http://" + s.addr + "/eureka" }

func startServer(t *testing.T) *server {
	t.Helper()
	p := proctest.Start(t, "server", "server", "--listen", "127.0.0.1:0")
	return &server{Proc: p, addr: p.WaitAddr(20 * time.Second)}
}

// simDaemon is a running `heureka sim`.
type simDaemon struct {
	*proctest.Proc
	http, port, control string
}

func startSim(t *testing.T, role string, args ...string) *simDaemon {
	t.Helper()
	p := proctest.Start(t, "sim "+role, append([]string{"sim", role}, args...)...)
	m := p.WaitFor(simRE, 20*time.Second)
	return &simDaemon{Proc: p, http: m[1], port: m[2], control: m[3]}
}

// portNumber is the port of the data/RPC listener.
func (s *simDaemon) portNumber() string { return s.port[strings.LastIndexByte(s.port, ':')+1:] }

// do POSTs to the control API, e.g. do(t, "/sim/stop").
func (s *simDaemon) do(t *testing.T, path string) {
	t.Helper()
	resp, err := http.Post("http://"+s.control+path, "", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
}

// startAgent runs `heureka agent` for sim d.
func startAgent(t *testing.T, reg *server, role string, d *simDaemon, host, rack string, extra ...string) *proctest.Proc {
	t.Helper()
	portFlag := "--data-port"
	if role == "namenode" {
		portFlag = "--rpc-port"
	}
	args := []string{"agent", "--role", role, "--cluster", "prod", "--registry", reg.URL(),
		"--jmx", "http://" + d.http, portFlag, d.portNumber(), "--host", host, "--ip", "127.0.0.1", "--rack", rack}
	return proctest.Start(t, "agent "+host, append(args, extra...)...)
}

func newClient(t *testing.T, reg *server) *client.Client {
	t.Helper()
	// Generous timeouts: the machine may be busy, and a slow answer is
	// not what these tests are about.
	cfg := client.DefaultConfig()
	cfg.URLs, cfg.Logger = []string{reg.URL()}, slog.New(slog.DiscardHandler)
	cfg.ConnectTimeout, cfg.ReadTimeout, cfg.Rounds = 5*time.Second, 10*time.Second, 2
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// statusOf reads an instance's status; "" when it is not registered.
func statusOf(t *testing.T, c *client.Client, app, id string) heureka.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, err := c.Instance(ctx, app, id)
	switch {
	case err == nil:
		return in.Status
	case heureka.ErrorCode(err) == heureka.ENOTFOUND:
		return ""
	}
	t.Fatalf("reading %s/%s: %v", app, id, err)
	return ""
}

// waitStatus polls until the instance has status want ("" =
// gone) and returns when it was first seen; it fails after bound.
func waitStatus(t *testing.T, c *client.Client, app, id string, want heureka.Status, bound time.Duration) time.Time {
	t.Helper()
	var seen time.Time
	proctest.Eventually(t, bound, fmt.Sprintf("%s/%s to be %q", app, id, want), func() bool {
		seen = time.Now()
		return statusOf(t, c, app, id) == want
	})
	return seen
}

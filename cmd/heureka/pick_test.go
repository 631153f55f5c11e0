package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/proctest"
)

func TestPickCommand(t *testing.T) {
	s := openServerWith(t, nil)
	mustRegister(t, s, testDataNode("dn1.test", "/r1", 30, 10, 90))
	mustRegister(t, s, testDataNode("dn2.test", "/r2", 40, 10, 90))
	mustRegister(t, s, testDataNode("dn3.test", "/r2", 50, 10, 90))
	mustRegister(t, s, testDataNode("full.test", "/r1", 95, 10, 90))
	reg := eurekaURL(s)

	code, out, errOut := runCLI(t, "pick", "--cluster", "prod", "-n", "3", "--writer", "dn1.test", "--registry", reg, "-o", "json")
	var res pickResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Nodes) != 3 {
		t.Fatalf("pick -n 3: exit %d, %s %s", code, out, errOut)
	}
	if res.Nodes[0].ID != hdfs.InstanceID("prod", "dn1.test", "/r1") || res.Nodes[1].Rack != "/r2" {
		t.Errorf("placement %+v: want the writer's node first, then the other rack", res.Nodes)
	}
	for _, n := range res.Nodes {
		if strings.HasPrefix(n.Host, "full") {
			t.Errorf("chose %s, which is over 90%% full", n.ID)
		}
	}

	// --exclude leaves two: exit 3, the two printed, the reason on stderr.
	code, out, errOut = runCLI(t, "pick", "--cluster", "prod", "-n", "3", "--exclude", "dn3.test", "--registry", reg)
	if code != 3 || strings.Count(out, "\n") != 3 || !strings.Contains(errOut, "only 2 of 3") || !strings.Contains(errOut, "1 full") || !strings.Contains(errOut, "1 left out with --exclude") {
		t.Errorf("pick with a shortfall: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	for _, args := range [][]string{
		{"pick", "--registry", reg},                                           // no --cluster
		{"pick", "--cluster", "prod", "-n", "0", "--registry", reg},           // -n out of range
		{"pick", "--cluster", "prod", "--writer", "a", "--rack", "/r1"},       // both
		{"pick", "--cluster", "prod", "--fullness", "1.5", "--registry", reg}, // not a fraction
		{"pick", "--cluster", "prod", "--nope"},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, want 2 with a message (%q)", args, code, errOut)
		}
	}
}

func TestGatewayCommandFlags(t *testing.T) {
	for _, args := range [][]string{
		{"gateway"}, // no --cluster
		{"gateway", "--cluster", "prod", "--namenode-scheme", "ftp"},
		{"gateway", "--cluster", "prod", "--tls-cert", "x.pem"},
		{"gateway", "--cluster", "prod", "--failover-wait", "20s", "--request-timeout", "10s"},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, want 2 with a message (%q)", args, code, errOut)
		}
	}
}

// TestGatewayServesTLS runs the gateway's wiring with the server's TLS
// flags and reads a WebHDFS error over HTTPS (no NameNode is registered).
func TestGatewayServesTLS(t *testing.T) {
	s := openServerWith(t, nil)
	ca := authtest.NewCA(t, "gateway CA")
	cert := ca.Issue("gateway", "gateway")
	var logs proctest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runGateway(ctx, []string{"--cluster", "prod", "--listen", "127.0.0.1:0", "--registry", eurekaURL(s),
			"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--failover-wait", "100ms", "--log-format", "json"}, io.Discard, &logs)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway: %v", err)
		}
	}()
	var addr string
	proctest.Eventually(t, 10*time.Second, "the gateway's listening line", func() bool {
		m := regexp.MustCompile(`"msg":"heureka gateway listening".*"addr":"([^"]+)"`).FindStringSubmatch(logs.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	hc := tlsClient(ca, nil)
	resp, err := hc.Get("https://" + addr + "/webhdfs/v1/?op=GETFILESTATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || !strings.Contains(string(b), `"RemoteException"`) || !strings.Contains(string(b), `no NameNode of cluster \"prod\" is registered`) {
		t.Errorf("over TLS with no NameNode: %d %s", resp.StatusCode, b)
	}
}

// TestPickProbeReplacesDeadNodes: with --probe, a chosen DataNode whose
// data port refuses is replaced by asking the registry again, avoiding it.
func TestPickProbeReplacesDeadNodes(t *testing.T) {
	s := openServerWith(t, nil)
	live := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return l.Addr().(*net.TCPAddr).Port
	}
	dead := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		return p
	}
	// The writer is the dead node, so placement chooses it first and the
	// probe must replace it with the spare.
	ports := map[string]int{"dn1.test": live(), "dn2.test": dead(), "dn3.test": live()}
	for host, port := range ports {
		in := testDataNode(host, "/r"+host[2:3], 30, 10, 90)
		in.IPAddr = "127.0.0.1"
		in.Metadata = in.Metadata.With(hdfs.MetaDataPort, strconv.Itoa(port))
		mustRegister(t, s, in)
	}
	reg := eurekaURL(s)
	for range 2 {
		code, out, errOut := runCLI(t, "pick", "--cluster", "prod", "-n", "2", "--writer", "dn2.test", "--probe", "--probe-timeout", "2s", "--registry", reg, "-o", "json")
		var res pickResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Nodes) != 2 {
			t.Fatalf("pick --probe: exit %d, %s %s", code, out, errOut)
		}
		for _, n := range res.Nodes {
			if n.Host == "dn2.test" {
				t.Errorf("pick --probe chose %s, whose data port refuses", n.ID)
			}
		}
	}
	// Without --probe the writer's node comes first, dead or not.
	code, out, errOut := runCLI(t, "pick", "--cluster", "prod", "-n", "2", "--writer", "dn2.test", "--registry", reg, "-o", "json")
	var res pickResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Nodes) != 2 || res.Nodes[0].Host != "dn2.test" {
		t.Errorf("pick --writer dn2.test without --probe: exit %d, %s %s; want dn2 first", code, out, errOut)
	}
}

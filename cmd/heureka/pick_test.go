package main

import (
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/ctl"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server/servertest"
)

// TestPickCommand: the command's flags and exit codes; what pick chooses
// is ctl's test.
func TestPickCommand(t *testing.T) {
	s := servertest.Open(t, nil)
	servertest.Register(t, s, testDataNode("dn1.test", "/r1", 30, 10, 90), testDataNode("dn2.test", "/r2", 40, 10, 90),
		testDataNode("dn3.test", "/r2", 50, 10, 90), testDataNode("full.test", "/r1", 95, 10, 90))
	reg := servertest.URL(s)

	code, out, errOut := runCLI(t, "pick", "--cluster", "prod", "-n", "3", "--writer", "dn1.test", "--registry", reg, "-o", "json")
	var res ctl.PickResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Nodes) != 3 || res.Nodes[0].Host != "dn1.test" {
		t.Fatalf("pick -n 3: exit %d, %s %s", code, out, errOut)
	}
	// --exclude leaves two: exit 3, the two printed, the reason on stderr.
	code, out, errOut = runCLI(t, "pick", "--cluster", "prod", "-n", "3", "--exclude", "dn3.test", "--registry", reg)
	if code != 3 || strings.Count(out, "\n") != 3 || !strings.Contains(errOut, "only 2 of 3") || !strings.Contains(errOut, "1 left out with --exclude") {
		t.Errorf("pick with a shortfall: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"pick", "--registry", reg}, "--cluster"},
		{[]string{"pick", "--cluster", "prod", "-n", "65", "--registry", reg}, "-n 65"},
		{[]string{"pick", "--cluster", "prod", "--role", "hdfs-datanode", "--registry", reg}, "--role"},
		{[]string{"pick", "--cluster", "prod", "--state", "active", "--registry", reg}, "--state"},
		{[]string{"pick", "--cluster", "prod", "--writer", "a", "--rack", "/r1"}, "--writer"},
		{[]string{"pick", "--cluster", "prod", "--fullness", "1.5", "--registry", reg}, "--fullness 1.5"},
		{[]string{"pick", "--cluster", "prod", "--probe-timeout", "0s"}, "--probe-timeout"},
		{[]string{"pick", "--cluster", "prod", "--nope"}, "-nope"},
	} {
		if code, _, errOut := runCLI(t, c.args...); code != 2 || !strings.Contains(errOut, c.flag) {
			t.Errorf("%v: exit %d, %q; want 2 naming %s", c.args, code, errOut, c.flag)
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
	// The TLS files are checked by the server's rule, in the gateway's flags.
	for args, want := range map[string]string{
		"--tls-cert x.pem":                             "--tls-key: is empty while --tls-cert is set: give both or neither",
		"--tls-client-ca ca.pem":                       `--tls-client-ca "ca.pem": needs --tls-cert and --tls-key`,
		"--tls-cert missing.pem --tls-key missing.pem": "--tls-cert: TLS key pair missing.pem, missing.pem: open missing.pem",
	} {
		code, _, errOut := runCLI(t, append([]string{"gateway", "--cluster", "prod"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("gateway %s: exit %d, %q; want 2 saying %q", args, code, errOut, want)
		}
	}
}

// TestGatewayServesTLS runs the gateway's wiring with the server's TLS
// flags and reads a WebHDFS error over HTTPS (no NameNode is registered).
func TestGatewayServesTLS(t *testing.T) {
	s := servertest.Open(t, nil)
	ca := authtest.NewCA(t, "gateway CA")
	cert := ca.Issue("gateway", "gateway")
	var logs proctest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runGateway(ctx, []string{"--cluster", "prod", "--listen", "127.0.0.1:0", "--registry", servertest.URL(s),
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
	// Once it has read the registry it warns that the cluster has no
	// NameNode, and answers so at once.
	proctest.Eventually(t, 10*time.Second, "the warning of no NameNode", func() bool {
		return strings.Contains(logs.String(), `"level":"WARN","msg":"no NameNode of cluster \"prod\" is registered`)
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

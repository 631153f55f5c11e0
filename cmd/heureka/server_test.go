package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/server/servertest"
)

const registerBody = `{"instance":{
  "instanceId":"10.0.0.5:orders:8080","hostName":"10.0.0.5","app":"ORDERS","ipAddr":"10.0.0.5",
  "status":"UP","port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},
  "dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
  "vipAddress":"orders"}}`

func request(t *testing.T, method, url, body string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestServerRegisterReadClose(t *testing.T) {
	s := servertest.Open(t, nil)
	base := "http://" + s.Addr().String()

	if code, body, _ := request(t, "POST", base+"/eureka/apps/ORDERS", registerBody, "Content-Type", "application/json"); code != 204 {
		t.Fatalf("register: %d %s", code, body)
	}
	code, body, h := request(t, "GET", base+"/eureka/v2/apps/ORDERS/10.0.0.5:orders:8080", "", "Accept", "application/json")
	if code != 200 || h.Get("Content-Type") != "application/json" || !strings.Contains(body, `"instanceId":"10.0.0.5:orders:8080"`) {
		t.Fatalf("read back: %d %q %s", code, h.Get("Content-Type"), body)
	}
	if code, body, _ := request(t, "PUT", base+"/eureka/apps/ORDERS/10.0.0.5:orders:8080", ""); code != 200 || body != "" {
		t.Fatalf("renew: %d %q", code, body)
	}
	if code, _, _ := request(t, "GET", base+"/healthz", ""); code != 200 {
		t.Fatalf("healthz: %d", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("server still answers after Close")
	}
}

func TestServerOpenErrors(t *testing.T) {
	s := servertest.Open(t, nil)
	if err := s.Open(); err == nil {
		t.Error("second Open succeeded")
	}

	cfg := server.DefaultConfig()
	cfg.Listen = s.Addr().String() // taken
	busy := server.New(cfg, slog.New(slog.DiscardHandler))
	if err := busy.Open(); err == nil {
		t.Error("Open on a busy port succeeded")
	}
	if err := busy.Close(context.Background()); err != nil {
		t.Errorf("Close after a failed Open: %v", err)
	}

	cfg = server.DefaultConfig()
	cfg.Registry.SelfPreservation = "sometimes"
	if err := server.New(cfg, nil).Open(); err == nil || !strings.Contains(err.Error(), "Registry.SelfPreservation") {
		t.Errorf("bad mode: %v", err)
	}
	if err := server.New(cfg, nil).Close(context.Background()); err != nil {
		t.Errorf("Close before Open: %v", err)
	}
}

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "", "Commands:"},
		{[]string{"help"}, 0, "server", ""},
		{[]string{"--help"}, 0, "Commands:", ""},
		{[]string{"-h"}, 0, "Commands:", ""},
		{[]string{"help", "server"}, 0, "-listen", ""},
		{[]string{"help", "nope"}, 2, "", "unknown command"},
		{[]string{"bogus"}, 2, "", `unknown command "bogus"`},
		{[]string{"version"}, 0, "heureka ", ""},
		{[]string{"server", "-h"}, 0, "", "-delta-retention"},
		{[]string{"server", "--no-such-flag"}, 2, "", "no-such-flag"},
		{[]string{"server", "--self-preservation", "always"}, 2, "", "self-preservation"},
		{[]string{"server", "--log-format", "xml"}, 2, "", "log-format"},
		{[]string{"server", "--response-timeout", "0s"}, 2, "", "--response-timeout 0s: must be a positive duration"},
		{[]string{"server", "--log-level", "loud"}, 2, "", "log-level"},
		{[]string{"server", "extra"}, 2, "", "extra"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("heureka %q: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				c.args, code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
		}
	}
}

// TestBinary runs `heureka server` on port 0, reads the
// address from its log, uses it and stops it with SIGTERM.
func TestBinary(t *testing.T) {
	p := proctest.Start(t, "heureka server", "server", "--listen", "127.0.0.1:0", "--log-level", "debug")
	addr := p.WaitAddr(60 * time.Second)
	base := "http://" + addr
	if code, body, _ := request(t, "POST", base+"/eureka/apps/ORDERS", registerBody); code != 204 {
		t.Fatalf("register: %d %s", code, body)
	}
	if code, body, _ := request(t, "GET", base+"/eureka/apps/", "", "Accept", "application/json"); code != 200 || !strings.Contains(body, "10.0.0.5:orders:8080") {
		t.Fatalf("GET /eureka/apps/: %d %s", code, body)
	}

	p.Signal(syscall.SIGTERM)
	if code := p.Exit(60 * time.Second); code != 0 {
		t.Fatalf("heureka server exited %d after SIGTERM:\n%s", code, p.Output())
	}
	if !strings.Contains(p.Output(), "heureka server stopped") {
		t.Errorf("no clean-stop line in the log:\n%s", p.Output())
	}
}

// TestServerBoundsSlowClients checks the real server's bounds on its
// clients (server.Config.ConnLimits, kept by internal/conntime): a client
// that sends half a request header is cut off once the header timeout
// passes; one that stops reading a large listing is cut off once
// ResponseTimeout passes, and /metrics counts it; and a kept connection
// that asks again later than ResponseTimeout is still answered.
func TestServerBoundsSlowClients(t *testing.T) {
	const answer = 500 * time.Millisecond
	s := servertest.Open(t, func(c *server.Config) { c.ReadTimeout, c.ResponseTimeout = 2*time.Second, answer })
	// ~1.3 KB each: a listing of ~25 MB, more than loopback's socket
	// buffers hold, so that the server's write blocks on a client that
	// stops reading. Registered before the first read, which encodes them
	// all (a later one may be served a listing up to 30 s old).
	padding := strings.Repeat("x", 1000)
	for i := range 20_000 {
		in := testDataNode(fmt.Sprintf("dn%05d.example.com", i), "/rack1", 50, 1000, 3600)
		in.Metadata = in.Metadata.With("note", padding)
		if err := s.Registry.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	// A listing may be served up to 30 s stale (internal/httpapi's
	// encoder); wait until the listing holds them all.
	want := strconv.FormatUint(s.Registry.Snapshot().Version, 10)
	start := time.Now()
	for {
		code, body, h := request(t, "GET", servertest.URL(s)+"/apps", "", "Accept", "application/json")
		if code != http.StatusOK {
			t.Fatalf("GET /apps: %d %s", code, body)
		}
		if h.Get("X-Heureka-Version") == want {
			break
		}
		if time.Since(start) > 40*time.Second {
			t.Fatalf("GET /apps after 40s: version %s, want %s", h.Get("X-Heureka-Version"), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	proctest.ExpectHalfHeaderDropped(t, s.Addr().String(), 30*time.Second)

	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.(*net.TCPConn).SetReadBuffer(16 << 10); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	get := func(path string) *http.Response {
		t.Helper()
		fmt.Fprintf(c, "GET /eureka%s HTTP/1.1\r\nHost: heureka\r\nAccept: application/json\r\n\r\n", path)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp
	}
	resp := get("/apps/NOSUCHAPP")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	time.Sleep(answer + 300*time.Millisecond) // the gap is the input
	resp = get("/apps")
	time.Sleep(4 * answer) // the fault: a client that stops reading
	n, err := io.Copy(io.Discard, resp.Body)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("a client that stopped reading for %v was still connected 30s later, after %d bytes", 4*answer, n)
	}
	if err == nil {
		t.Fatalf("a client that stopped reading for %v got the whole %d-byte listing", 4*answer, n)
	}
	_, metrics, _ := request(t, "GET", "http://"+s.Addr().String()+"/metrics", "")
	if want := `heureka_http_connections_cut_total{reason="answer"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

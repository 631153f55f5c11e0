package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/auth/authtest"
	"github.com/miekg/dns"
)

// TestDNSNeedsAllowWithAuth: with authentication on, DNS (which carries no
// credentials) is refused at start unless DNS.Allow names who may ask.
func TestDNSNeedsAllowWithAuth(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AuthFile = "/nonexistent/credentials.json"
	cfg.DNS.Listen = "127.0.0.1:0"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "DNS.Allow") {
		t.Fatalf("auth on, DNS without an allow list: %v; want an error naming DNS.Allow", err)
	}
	cfg.DNS.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("with an allow list: %v", err)
	}
}

// TestDNSAnswersWhatAnAnonymousReadMaySee: with auth on and reads that
// need credentials, every DNS query is REFUSED; once the credentials file
// opens reads (reloaded), the zone answers. /v1/status and /metrics carry
// the DNS server's part.
func TestDNSAnswersWhatAnAnonymousReadMaySee(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "credentials.json")
	op := authtest.User{User: auth.User{Name: "op", Roles: []auth.Role{auth.RoleOperator}}, Password: "secret-secret"}
	authtest.WriteCredentials(t, creds, auth.ReadsAuthenticated, op)
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.AuthFile = creds
	cfg.DNS.Listen = "127.0.0.1:0"
	cfg.DNS.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	s := New(cfg, slog.New(slog.DiscardHandler))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	in := &heureka.Instance{ID: "nn1", App: "HDFS-NAMENODE.PROD", HostName: "nn1.example.com", IPAddr: "192.0.2.1",
		Status: heureka.StatusUp, Metadata: heureka.NewMetadata("role_state", "active")}
	in.Normalize()
	if err := s.Registry.Register(in, false); err != nil {
		t.Fatal(err)
	}
	ask := func() *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion("hdfs-namenode.prod.service.heureka.", dns.TypeA)
		r, err := dns.Exchange(m, s.DNS.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := ask(); r.Rcode != dns.RcodeRefused {
		t.Errorf("reads need credentials: %s; want REFUSED", dns.RcodeToString[r.Rcode])
	}
	authtest.WriteCredentials(t, creds, auth.ReadsOpen, op)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := ask(); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		t.Errorf("reads open: %s %v; want the NameNode", dns.RcodeToString[r.Rcode], r.Answer)
	}

	base := "http://" + s.ln.Addr().String()
	get := func(path string) string {
		t.Helper()
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if st := get("/v1/status"); !strings.Contains(st, `"dns":{`) || !strings.Contains(st, `"domain":"heureka."`) {
		t.Errorf("/v1/status without the DNS part: %s", st)
	}
	// A query is counted once its answer is written, so the client can
	// read the answer a moment before the count moves: wait for it.
	counted := func(m string) bool {
		return strings.Contains(m, `heureka_dns_queries_total{qtype="A",rcode="REFUSED"} 1`) &&
			strings.Contains(m, `heureka_dns_queries_total{qtype="A",rcode="NOERROR"} 1`)
	}
	m := get("/metrics")
	for deadline := time.Now().Add(5 * time.Second); !counted(m) && time.Now().Before(deadline); m = get("/metrics") {
		time.Sleep(20 * time.Millisecond)
	}
	if !counted(m) {
		t.Errorf("/metrics lacks the DNS queries by type and rcode (one A REFUSED, one A NOERROR) after 5 s")
	}
}

// TestOpenFailingLeavesNothingOpen: when the DNS port is taken, Open fails
// naming it and closes the HTTP listener it had opened, so the same
// addresses serve once the port is free.
func TestOpenFailingLeavesNothingOpen(t *testing.T) {
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpAddr := probe.Addr().String()
	probe.Close()
	cfg := DefaultConfig()
	cfg.Listen, cfg.DNS.Listen = httpAddr, busy.LocalAddr().String()
	s := New(cfg, slog.New(slog.DiscardHandler))
	if err := s.Open(); err == nil || !strings.Contains(err.Error(), busy.LocalAddr().String()) {
		t.Fatalf("Open with the DNS port taken: %v; want an error naming %s", err, busy.LocalAddr())
	}
	busy.Close()
	s = New(cfg, slog.New(slog.DiscardHandler))
	if err := s.Open(); err != nil {
		t.Fatalf("Open once the DNS port is free, on the same HTTP address %s: %v", httpAddr, err)
	}
	_ = s.Close(context.Background())
}

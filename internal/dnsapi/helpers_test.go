package dnsapi

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/miekg/dns"
)

// fixture is a real registry and a real DNS server on a loopback port.
type fixture struct {
	reg  *registry.Registry
	srv  *Server
	addr string
}

func startDNS(t testing.TB, edit func(*Config)) *fixture {
	t.Helper()
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(cfg, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dns server: %v", err)
		}
	})
	return &fixture{reg: reg, srv: srv, addr: srv.Addr()}
}

// register adds in to the registry.
func (f *fixture) register(t testing.TB, ins ...*heureka.Instance) {
	t.Helper()
	for _, in := range ins {
		if err := f.reg.Register(in, false); err != nil {
			t.Fatalf("register %s: %v", in.ID, err)
		}
	}
}

// ask sends one question over network ("udp" or "tcp") with miekg/dns's
// client; edns is the UDP size to announce, 0 for none.
func (f *fixture) ask(t testing.TB, network, name string, qtype uint16, edns uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	if edns > 0 {
		m.SetEdns0(edns, false)
	}
	c := &dns.Client{Net: network, Timeout: 5 * time.Second, UDPSize: 65535}
	r, _, err := c.Exchange(m, f.addr)
	if err != nil {
		t.Fatalf("%s %s %s: %v", network, name, dns.TypeToString[qtype], err)
	}
	if r.Id != m.Id {
		t.Fatalf("%s: reply id %d to query %d", name, r.Id, m.Id)
	}
	return r
}

func (f *fixture) udp(t testing.TB, name string, qtype uint16) *dns.Msg {
	t.Helper()
	return f.ask(t, "udp", name, qtype, 1232)
}

// instance returns an UP instance of app with ID and host id, address ip
// and metadata md (key, value, ...).
func instance(app, id, ip string, md ...string) *heureka.Instance {
	m := map[string]string{}
	for i := 0; i+1 < len(md); i += 2 {
		m[md[i]] = md[i+1]
	}
	in := &heureka.Instance{ID: id, App: app, HostName: id, IPAddr: ip, Status: heureka.StatusUp,
		Port: heureka.Port{Number: 8020, Enabled: true}, Metadata: heureka.MetadataOf(m)}
	in.Normalize()
	return in
}

// addrs returns the addresses of the A and AAAA records in rrs, in order.
func addrs(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.AAAA:
			out = append(out, rr.AAAA.String())
		}
	}
	return out
}

// dataNodes returns n UP DataNodes of app on racks /dc1/rack-0../dc1/rack-9,
// at addresses 10.1.x.y.
func dataNodes(app string, n int) []*heureka.Instance {
	out := make([]*heureka.Instance, n)
	for i := range n {
		out[i] = instance(app, fmt.Sprintf("dn%05d.example.com", i), fmt.Sprintf("10.1.%d.%d", i/250, i%250+1),
			"rack", fmt.Sprintf("/dc1/rack-%d", i%10))
	}
	return out
}

// rawUDP sends b to addr and returns the reply, or nil when none came
// within wait.
func rawUDP(t testing.TB, addr string, b []byte, wait time.Duration) []byte {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// testConfig is the default configuration with DNS on, as the responder
// tests and benchmarks use it.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	return cfg
}

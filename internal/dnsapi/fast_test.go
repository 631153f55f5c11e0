package dnsapi

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// TestFastPathAllocatesNothing: the queries resolvers send for addresses
// (dnsperf's, dig's with a cookie, a stub's without EDNS0, in any case) take
// the fast path, and answering one, rate limit, access list and metrics
// included, allocates nothing.
func TestFastPathAllocatesNothing(t *testing.T) {
	reg, _ := fastFixture(t)
	cfg := testConfig()
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cfg.Rate, cfg.Burst = 1e9, 1e9
	s, err := New(cfg, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := netip.MustParseAddr("10.1.2.3")
	sc := newScratch(cfg.MaxUDPSize)
	for _, c := range []struct {
		what, name string
		qtype      uint16
		edns       uint16
		opt        dns.EDNS0
	}{
		{"dnsperf -e", "hdfs-namenode.prod.service.heureka.", dns.TypeA, 1232, nil},
		{"dig", "dc1.rack-3.rack.hdfs-datanode.prod.service.heureka.", dns.TypeA, 1232,
			&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "24a5ac1223a4b1a6"}},
		{"a stub resolver", "HDFS-NameNode.prod.service.heureka.", dns.TypeAAAA, 0, nil},
		{"cut to size", "hdfs-datanode.prod.service.heureka.", dns.TypeA, 0, nil},
		{"NODATA", "web6.service.heureka.", dns.TypeA, 1232, nil},
	} {
		req := new(dns.Msg)
		req.SetQuestion(c.name, c.qtype)
		if c.edns > 0 {
			req.SetEdns0(c.edns, false)
			if c.opt != nil {
				req.IsEdns0().Option = []dns.EDNS0{c.opt}
			}
		}
		msg, err := req.Pack()
		if err != nil {
			t.Fatal(err)
		}
		q, ok := parseQuery(msg, sc.name)
		if !ok {
			t.Errorf("%s: the query %v is not read by the fast path", c.what, req)
			continue
		}
		if _, ok := s.resp.fast(&q, sc); !ok {
			t.Errorf("%s: %s %s not answered by the fast path", c.what, c.name, dns.TypeToString[c.qtype])
			continue
		}
		allocs := testing.AllocsPerRun(200, func() {
			_, o, _ := s.answerUDP(msg, src, sc)
			s.met.observe(o, "udp", 0)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations a query; want none", c.what, allocs)
		}
	}
}

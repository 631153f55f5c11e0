package dnsapi

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/registry"
	"github.com/miekg/dns"
)

// TestLabels: the label mapping is one to one on components with dots,
// dashes, underscores, case and other bytes, and refuses what it would
// not write.
func TestLabels(t *testing.T) {
	for in, want := range map[string]string{
		"rack-a":     "rack-a",
		"Rack-A":     "_52ack-_41",
		"dc1.east":   "dc1_2eeast",
		"rack_7":     "rack_5f7",
		"r a":        "r_20a",
		"ü":          "_c3_bc",
		"--":         "--",
		"0123456789": "0123456789",
	} {
		got, ok := EncodeLabel(in)
		if !ok || got != want {
			t.Errorf("EncodeLabel(%q) = %q, %v; want %q", in, got, ok, want)
		}
		back, ok := DecodeLabel(got)
		if !ok || back != in {
			t.Errorf("DecodeLabel(%q) = %q, %v; want %q", got, back, ok, in)
		}
	}
	for _, bad := range []string{"", "_", "_4", "_zz", "_61", "_2d", "a.b", "A", "_4G"} {
		if got, ok := DecodeLabel(bad); ok {
			t.Errorf("DecodeLabel(%q) = %q; want refused", bad, got)
		}
	}
	if _, ok := EncodeLabel(strings.Repeat("A", 30)); ok {
		t.Error("a component whose label passes 63 bytes was encoded")
	}
	if _, ok := RackName("/a//b", "X", "heureka."); ok {
		t.Error("a rack path with an empty component has a name")
	}
}

// FuzzLabel: every component that encodes decodes back to itself, and
// every label that decodes encodes back to itself.
func FuzzLabel(f *testing.F) {
	for _, s := range []string{"rack-a", "Rack.A", "_5f", "a_2eb", "ü", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if l, ok := EncodeLabel(s); ok {
			if back, ok := DecodeLabel(l); !ok || back != s {
				t.Fatalf("%q -> %q -> %q, %v", s, l, back, ok)
			}
		}
		if d, ok := DecodeLabel(s); ok {
			if l, ok := EncodeLabel(d); !ok || l != s {
				t.Fatalf("label %q -> %q -> %q, %v", s, d, l, ok)
			}
		}
	})
}

// TestReverseNames reads in-addr.arpa and ip6.arpa names and refuses
// partial or malformed ones.
func TestReverseNames(t *testing.T) {
	for _, a := range []string{"192.0.2.7", "10.0.0.255", "2001:db8::1", "fe80::1:2"} {
		name, _ := dns.ReverseAddr(a)
		got, ok := reverseAddr(name)
		if !ok || got != netip.MustParseAddr(a) {
			t.Errorf("reverseAddr(%s) = %v, %v; want %s", name, got, ok, a)
		}
	}
	for _, bad := range []string{"2.0.192.in-addr.arpa.", "1.2.0.192.10.in-addr.arpa.", "01.2.0.192.in-addr.arpa.",
		"256.2.0.192.in-addr.arpa.", "x.ip6.arpa.", "in-addr.arpa."} {
		if got, ok := reverseAddr(bad); ok {
			t.Errorf("reverseAddr(%s) = %v; want refused", bad, got)
		}
	}
}

// FuzzRespond feeds arbitrary messages to the handler: whatever parses as
// a DNS message gets a reply that packs, fits the client's size, carries
// the query's ID, and leaves the registry as it was.
func FuzzRespond(f *testing.F) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range append(nameNodes(), dataNodes("HDFS-DATANODE.PROD", 300)...) {
		if err := reg.Register(in, false); err != nil {
			f.Fatal(err)
		}
	}
	in := instance("WEB", "web1", "2001:db8::9", "rack", "/A.b/c_d")
	if err := reg.Register(in, false); err != nil {
		f.Fatal(err)
	}
	version := reg.Snapshot().Version
	r := newResponder(testConfig(), reg)

	seed := func(name string, qtype uint16, edns uint16) {
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		if edns > 0 {
			m.SetEdns0(edns, true)
		}
		b, _ := m.Pack()
		f.Add(b, true)
	}
	seed("hdfs-namenode.prod.service.heureka.", dns.TypeA, 0)
	seed("hdfs-datanode.prod.service.heureka.", dns.TypeSRV, 4096)
	seed("dc1.rack-1.rack.hdfs-datanode.prod.service.heureka.", dns.TypeAAAA, 1232)
	seed("web1.id.web.service.heureka.", dns.TypeTXT, 0)
	seed("1.2.0.192.in-addr.arpa.", dns.TypePTR, 0)
	seed("heureka.", dns.TypeANY, 0)
	f.Add([]byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1}, false)

	f.Fuzz(func(t *testing.T, b []byte, udp bool) {
		req := new(dns.Msg)
		if req.Unpack(b) != nil || req.Response {
			return
		}
		resp := r.respond(req, udp)
		out, err := resp.Pack()
		if err != nil {
			t.Fatalf("reply to %v does not pack: %v\n%v", req, err, resp)
		}
		limit := dns.MaxMsgSize
		if udp {
			limit = 1232
		}
		if len(out) > limit {
			t.Fatalf("reply of %d bytes over UDP limit %d", len(out), limit)
		}
		if resp.Id != req.Id || !resp.Response {
			t.Fatalf("reply id %d response %v to query %d", resp.Id, resp.Response, req.Id)
		}
		if v := reg.Snapshot().Version; v != version {
			t.Fatalf("the registry changed: version %d, was %d", v, version)
		}
		var back dns.Msg
		if err := back.Unpack(out); err != nil {
			t.Fatalf("reply does not parse back: %v", err)
		}
	})
}

// fastFixture is a registry for the fast path's tests: NameNodes (a
// ranked answer), DataNodes on racks, an application of 300 (answers cut
// to size), one of IPv6 only (NODATA for A), and one whose ranks are
// split over two blocks.
// It returns the registry and the rank of each NameNode's address, by the
// name of its application's answer.
func fastFixture(t testing.TB) (*registry.Registry, map[string]map[string]int) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ins := append(nameNodes(), dataNodes("HDFS-DATANODE.PROD", 300)...)
	for i := range 40 {
		ins = append(ins, instance("WEB6", fmt.Sprintf("w%d", i), fmt.Sprintf("2001:db8::%x", i+1), "rack", "/A.b/c_d"))
	}
	big, small := map[string]int{}, map[string]int{}
	for i := range 2 * registry.BlockSize {
		ip := fmt.Sprintf("192.0.3.%d", i%250+1)
		if i >= 250 {
			ip = fmt.Sprintf("2001:db8:1::%x", i)
		}
		st := []string{"active", "standby", "observer", "initializing"}[i%4]
		ins = append(ins, instance("HDFS-NAMENODE.BIG", fmt.Sprintf("nn%03d", i), ip, "role_state", st))
		big[ip] = nameNodeRank(st)
	}
	for _, in := range ins {
		if err := reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range nameNodes() {
		small[in.IPAddr] = nameNodeRank(roleState(in))
	}
	return reg, map[string]map[string]int{"hdfs-namenode.big.service.heureka.": big, ServiceName(nnApp, "heureka."): small}
}

// FuzzFast: whatever the fast path answers, miekg/dns reads the same
// query, and the fast answer parsed back is respond's, packed by
// miekg/dns and parsed back: the same header, question, authority and
// additional records, as many answers, within the client's size, each
// one of the name's records and none twice, in rank order where the
// order means something, and all of them when none was left out.
func FuzzFast(f *testing.F) {
	reg, ranks := fastFixture(f)
	r := newResponder(testConfig(), reg)
	sc := newScratch(1232)
	seed := func(name string, qtype uint16, edns uint16, opts ...dns.EDNS0) {
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		if edns > 0 {
			m.SetEdns0(edns, true)
			m.IsEdns0().Option = opts
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, name := range []string{"hdfs-namenode.prod.service.heureka.", "HDFS-NameNode.Prod.Service.HEUREKA.",
		"hdfs-namenode.big.service.heureka.", "standby.hdfs-namenode.big.service.heureka.",
		"hdfs-datanode.prod.service.heureka.", "dc1.rack-1.rack.hdfs-datanode.prod.service.heureka.",
		"web6.service.heureka.", "_41_2eb.c_5fd.rack.web6.service.heureka.", "nope.service.heureka.", "example.org."} {
		for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeSRV} {
			seed(name, qtype, 0)
			seed(name, qtype, 1232, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})
			seed(name, qtype, 600)
		}
	}
	seed("hdfs-datanode.prod.service.heureka.", dns.TypeA, 4096, &dns.EDNS0_NSID{Code: dns.EDNS0NSID}, &dns.EDNS0_PADDING{Padding: make([]byte, 9)})

	f.Fuzz(func(t *testing.T, b []byte) {
		q, ok := parseQuery(b, sc.name)
		if !ok {
			return
		}
		req := new(dns.Msg)
		if err := req.Unpack(b); err != nil {
			t.Fatalf("the fast path reads a query miekg/dns does not: %v", err)
		}
		if len(req.Question) != 1 || !strings.EqualFold(req.Question[0].Name, string(q.name)) || req.Question[0].Qtype != q.qtype ||
			(req.IsEdns0() != nil) != q.edns {
			t.Fatalf("the fast path reads %q %d edns=%v; miekg/dns %v", q.name, q.qtype, q.edns, req)
		}
		out, ok := r.fast(&q, sc)
		if !ok {
			return
		}
		var got dns.Msg
		if err := got.Unpack(out); err != nil {
			t.Fatalf("fast answer does not parse: %v", err)
		}
		want := packed(t, r.respond(req, true))
		size := 512
		if q.edns {
			size = max(512, min(q.udpSize, 1232))
		}
		if len(out) > size {
			t.Fatalf("fast answer of %d bytes; the client's size is %d", len(out), size)
		}
		if got.MsgHdr != want.MsgHdr || !slices.Equal(got.Question, want.Question) || len(got.Answer) != len(want.Answer) ||
			!slices.Equal(rrStrings(got.Ns), rrStrings(want.Ns)) || !slices.Equal(rrStrings(got.Extra), rrStrings(want.Extra)) {
			t.Fatalf("fast answer\n%v\nrespond's\n%v", &got, want)
		}
		all := rrStrings(packed(t, r.respond(req, false)).Answer)
		seen := map[string]bool{}
		for _, s := range rrStrings(got.Answer) {
			if !slices.Contains(all, s) || seen[s] {
				t.Fatalf("fast answer record %s: not one of the name's, or twice", s)
			}
			seen[s] = true
		}
		if !got.Truncated && len(got.Answer) != len(all) {
			t.Fatalf("fast answer of %d records without TC; the name has %d", len(got.Answer), len(all))
		}
		if rank, ok := ranks[string(q.name)]; ok {
			ips := addrs(got.Answer)
			if !slices.IsSortedFunc(ips, func(a, b string) int { return rank[a] - rank[b] }) {
				t.Fatalf("NameNodes out of rank order: %v", ips)
			}
			if !got.Truncated {
				return
			}
			// Cut to size, the answer is every instance of the better
			// ranks and some of the worst one it reaches.
			last := rank[ips[len(ips)-1]]
			for ip, rk := range rank {
				if rk < last && strings.Contains(ip, ":") == (q.qtype == dns.TypeAAAA) && !slices.Contains(ips, ip) {
					t.Fatalf("cut to %d, the answer leaves out %s of rank %d before rank %d", len(ips), ip, rk, last)
				}
			}
		}
	})
}

// packed returns m as miekg/dns packs it, parsed back.
func packed(t testing.TB, m *dns.Msg) *dns.Msg {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatalf("respond's answer does not pack: %v", err)
	}
	var back dns.Msg
	if err := back.Unpack(b); err != nil {
		t.Fatalf("respond's answer does not parse: %v", err)
	}
	return &back
}

func rrStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}

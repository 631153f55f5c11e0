package dnsapi

import (
	"net/netip"
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
	r := &responder{zone: "heureka.", maxUDP: 1232, views: views{reg: reg}}

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

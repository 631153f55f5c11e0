package dnsapi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/registry"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const nnApp = "HDFS-NAMENODE.PROD"

func nameNodes() []*heureka.Instance {
	return []*heureka.Instance{
		instance(nnApp, "nn1.example.com", "192.0.2.1", "role_state", "standby"),
		instance(nnApp, "nn2.example.com", "192.0.2.2", "role_state", "active"),
		instance(nnApp, "nn3.example.com", "192.0.2.3", "role_state", "observer"),
		instance(nnApp, "nn4.example.com", "192.0.2.4", "role_state", "observer"),
		instance(nnApp, "nn5.example.com", "192.0.2.5", "role_state", "standby"),
	}
}

// TestNameNodeOrderIsActiveStandbyObserver: the plain name lists the
// active first, then the standbys, then the observers, every time, over
// UDP and TCP; within a rank the order varies.
func TestNameNodeOrderIsActiveStandbyObserver(t *testing.T) {
	f := startDNS(t, nil)
	f.register(t, nameNodes()...)
	rank := map[string]int{"192.0.2.2": 0, "192.0.2.1": 1, "192.0.2.5": 1, "192.0.2.3": 2, "192.0.2.4": 2}
	seen := map[string]bool{}
	for i := range 40 {
		network := []string{"udp", "tcp"}[i%2]
		r := f.ask(t, network, "hdfs-namenode.prod.service.heureka", dns.TypeA, 0)
		got := addrs(r.Answer)
		if len(got) != 5 || got[0] != "192.0.2.2" {
			t.Fatalf("%s answer %v: want 5 addresses, 192.0.2.2 (the active) first", network, got)
		}
		if !slices.IsSortedFunc(got, func(a, b string) int { return rank[a] - rank[b] }) {
			t.Fatalf("answer %v: not active, standbys, observers", got)
		}
		if !r.Authoritative || r.RecursionAvailable {
			t.Fatalf("flags aa=%v ra=%v: want an authoritative answer without recursion", r.Authoritative, r.RecursionAvailable)
		}
		seen[strings.Join(got, ",")] = true
	}
	if len(seen) < 2 {
		t.Errorf("40 answers all in one order %v: standbys and observers are not shuffled", seen)
	}
}

// TestRoleStateNames: <state>.<app> lists only that state's instances,
// for any state value.
func TestRoleStateNames(t *testing.T) {
	f := startDNS(t, nil)
	f.register(t, nameNodes()...)
	f.register(t, instance("KAFKA.PROD", "k1", "192.0.2.11", "role_state", "controller"),
		instance("KAFKA.PROD", "k2", "192.0.2.12", "role_state", "broker"))
	for name, want := range map[string][]string{
		"active.hdfs-namenode.prod.service.heureka":   {"192.0.2.2"},
		"standby.hdfs-namenode.prod.service.heureka":  {"192.0.2.1", "192.0.2.5"},
		"observer.hdfs-namenode.prod.service.heureka": {"192.0.2.3", "192.0.2.4"},
		"ACTIVE.HDFS-NAMENODE.PROD.SERVICE.HEUREKA":   {"192.0.2.2"},
		"controller.kafka.prod.service.heureka":       {"192.0.2.11"},
	} {
		r := f.udp(t, name, dns.TypeA)
		got := addrs(r.Answer)
		slices.Sort(got)
		if r.Rcode != dns.RcodeSuccess || !slices.Equal(got, want) {
			t.Errorf("%s: %s %v, want NOERROR %v", name, dns.RcodeToString[r.Rcode], got, want)
		}
		if len(r.Answer) > 0 && r.Answer[0].Header().Name != dns.Fqdn(name) {
			t.Errorf("%s: owner %q; want the name as asked (case kept, for 0x20 resolvers)", name, r.Answer[0].Header().Name)
		}
	}
	// NameNodes registered by an agent from before role_state carry
	// ha_state alone, which is read then.
	f.register(t, instance("HDFS-NAMENODE.OLD", "old1", "192.0.2.31", hdfs.MetaHAState, "standby"),
		instance("HDFS-NAMENODE.OLD", "old2", "192.0.2.32", hdfs.MetaHAState, "active"))
	if got := addrs(f.udp(t, "hdfs-namenode.old.service.heureka", dns.TypeA).Answer); !slices.Equal(got, []string{"192.0.2.32", "192.0.2.31"}) {
		t.Errorf("NameNodes with ha_state only: %v; want the active 192.0.2.32 first", got)
	}
	r := f.udp(t, "initializing.hdfs-namenode.prod.service.heureka", dns.TypeA)
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 {
		t.Errorf("a state nobody is in: %s with %d answers, %d authority; want NODATA with the SOA", dns.RcodeToString[r.Rcode], len(r.Answer), len(r.Ns))
	}
}

// TestOnlyUPInstancesAndChangesInTheNextAnswer: DOWN, OUT_OF_SERVICE and
// STARTING instances are never listed, and a status change is in the very
// next answer.
func TestOnlyUPInstancesAndChangesInTheNextAnswer(t *testing.T) {
	f := startDNS(t, nil)
	ins := dataNodes("HDFS-DATANODE.PROD", 4)
	ins[1].Status = heureka.StatusDown
	ins[2].Status = heureka.StatusStarting
	f.register(t, ins...)
	name := "hdfs-datanode.prod.service.heureka"
	got := addrs(f.udp(t, name, dns.TypeA).Answer)
	slices.Sort(got)
	if !slices.Equal(got, []string{"10.1.0.1", "10.1.0.4"}) {
		t.Fatalf("answer %v; want only the UP 10.1.0.1 and 10.1.0.4", got)
	}
	if err := f.reg.SetStatus("HDFS-DATANODE.PROD", ins[3].ID, heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if got := addrs(f.udp(t, name, dns.TypeA).Answer); !slices.Equal(got, []string{"10.1.0.1"}) {
		t.Fatalf("after a drain: %v; want [10.1.0.1]", got)
	}
	if err := f.reg.Cancel(registry.CancelRequest{App: "HDFS-DATANODE.PROD", ID: ins[0].ID}); err != nil {
		t.Fatal(err)
	}
	r := f.udp(t, name, dns.TypeA)
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 {
		t.Fatalf("no UP instance left: %s %v; want NODATA (the application is still registered)", dns.RcodeToString[r.Rcode], addrs(r.Answer))
	}
	f.register(t, instance("HDFS-DATANODE.PROD", "dn-new", "10.1.9.9"))
	if got := addrs(f.udp(t, name, dns.TypeA).Answer); !slices.Equal(got, []string{"10.1.9.9"}) {
		t.Fatalf("after a registration: %v; want [10.1.9.9]", got)
	}
}

// TestRackNames: each rack path, whatever its slashes, dots, dashes,
// underscores and case, has one name, and that name lists its instances.
func TestRackNames(t *testing.T) {
	f := startDNS(t, nil)
	racks := []string{"/dc1/rack-a", "/DC1/Rack-A", "/dc1.rack-a", "/dc1/rack_a", "/dc1/rack/a", "/default-rack", "/a.b/c-d/E_F"}
	for i, rack := range racks {
		f.register(t, instance("HDFS-DATANODE.PROD", fmt.Sprintf("dn%d", i), netip.AddrFrom4([4]byte{10, 2, 0, byte(i + 1)}).String(), "rack", rack))
	}
	f.register(t, instance("HDFS-DATANODE.PROD", "no-rack", "10.2.1.1")) // on /default-rack
	names := map[string]bool{}
	for i, rack := range racks {
		name, ok := RackName(rack, "HDFS-DATANODE.PROD", "heureka.")
		if !ok {
			t.Fatalf("rack %q has no name", rack)
		}
		if names[strings.ToLower(name)] {
			t.Fatalf("rack %q: name %s is another rack's too", rack, name)
		}
		names[strings.ToLower(name)] = true
		got := addrs(f.udp(t, name, dns.TypeA).Answer)
		slices.Sort(got)
		want := []string{netip.AddrFrom4([4]byte{10, 2, 0, byte(i + 1)}).String()}
		if rack == "/default-rack" {
			want = []string{"10.2.0.6", "10.2.1.1"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("rack %q as %s: %v, want %v", rack, name, got, want)
		}
	}
	if n, _ := RackName("/dc1/rack-a", "HDFS-DATANODE.PROD", "heureka."); n != "dc1.rack-a.rack.hdfs-datanode.prod.service.heureka." {
		t.Errorf("the plain rack /dc1/rack-a is %s; want dc1.rack-a.rack.hdfs-datanode.prod.service.heureka.", n)
	}
	for _, bad := range []string{"dc1._zz.rack", "dc1._61.rack", "dc1._4.rack", "_2f.rack"} {
		r := f.udp(t, bad+".hdfs-datanode.prod.service.heureka", dns.TypeA)
		wantRcode := dns.RcodeNameError
		if bad == "_2f.rack" { // "/" inside a component: a valid label, a rack nobody is on
			wantRcode = dns.RcodeSuccess
		}
		if r.Rcode != wantRcode || len(r.Answer) != 0 {
			t.Errorf("%s: %s %v; want %s and no answer", bad, dns.RcodeToString[r.Rcode], addrs(r.Answer), dns.RcodeToString[wantRcode])
		}
	}
}

// TestRecordTypesAndRcodes covers every record type and rcode the zone
// answers with.
func TestRecordTypesAndRcodes(t *testing.T) {
	f := startDNS(t, nil)
	f.register(t, nameNodes()...)
	dn := instance("HDFS-DATANODE.PROD", "dn1.example.com:9866", "2001:db8::7", "rack", "/dc1/rack-a",
		"disk_used", "250", "disk_total", "1000", "version", "3.3.6")
	dn.HostName = "dn1.example.com"
	f.register(t, dn, instance("HDFS-DATANODE.PROD", "by-ip", "10.9.0.1"))
	byIP := instance("WEB", "10.9.0.2", "10.9.0.2")
	byIP.HostName = "10.9.0.2" // a host name that is an address: SRV targets the instance name
	f.register(t, byIP)

	t.Run("AAAA", func(t *testing.T) {
		r := f.udp(t, "hdfs-datanode.prod.service.heureka", dns.TypeAAAA)
		if got := addrs(r.Answer); !slices.Equal(got, []string{"2001:db8::7"}) {
			t.Errorf("AAAA %v; want [2001:db8::7]", got)
		}
		if got := addrs(f.udp(t, "hdfs-datanode.prod.service.heureka", dns.TypeA).Answer); !slices.Equal(got, []string{"10.9.0.1"}) {
			t.Errorf("A %v; want [10.9.0.1] alone", got)
		}
	})
	t.Run("SRV", func(t *testing.T) {
		r := f.udp(t, "hdfs-namenode.prod.service.heureka", dns.TypeSRV)
		if len(r.Answer) != 5 || len(r.Extra) < 5 {
			t.Fatalf("SRV: %d answers, %d additional; want 5 and their addresses", len(r.Answer), len(r.Extra))
		}
		first := r.Answer[0].(*dns.SRV)
		if first.Target != "nn2.example.com." || first.Port != 8020 || first.Priority != 0 {
			t.Errorf("first SRV %v; want the active nn2.example.com. port 8020 priority 0", first)
		}
		glue := map[string]string{}
		for _, rr := range r.Extra {
			if a, ok := rr.(*dns.A); ok {
				glue[a.Hdr.Name] = a.A.String()
			}
		}
		if glue["nn2.example.com."] != "192.0.2.2" {
			t.Errorf("additional %v: want nn2.example.com. A 192.0.2.2", glue)
		}
		r = f.udp(t, "web.service.heureka", dns.TypeSRV)
		want, _ := InstanceName("10.9.0.2", "WEB", "heureka.")
		if len(r.Answer) != 1 || r.Answer[0].(*dns.SRV).Target != want {
			t.Fatalf("SRV of an instance registered by address: %v; want target %s", r.Answer, want)
		}
		if got := addrs(f.udp(t, want, dns.TypeA).Answer); !slices.Equal(got, []string{"10.9.0.2"}) {
			t.Errorf("the SRV target %s resolves to %v; want 10.9.0.2", want, got)
		}
	})
	t.Run("TXT", func(t *testing.T) {
		name, ok := InstanceName(dn.ID, dn.App, "heureka.")
		if !ok || name != "dn1.example.com_3a9866.id.hdfs-datanode.prod.service.heureka." {
			t.Fatalf("instance name %q", name)
		}
		r := f.udp(t, name, dns.TypeTXT)
		if len(r.Answer) != 1 {
			t.Fatalf("TXT: %v", r.Answer)
		}
		txt := r.Answer[0].(*dns.TXT).Txt
		for _, want := range []string{"status=UP", "rack=/dc1/rack-a", "full_percent=25.0", "version=3.3.6", "ip=2001:db8::7", "port=8020"} {
			if !slices.Contains(txt, want) {
				t.Errorf("TXT %q lacks %q", txt, want)
			}
		}
		nn, _ := InstanceName("nn2.example.com", nnApp, "heureka.")
		if txt := f.udp(t, nn, dns.TypeTXT).Answer[0].(*dns.TXT).Txt; !slices.Contains(txt, "role_state=active") {
			t.Errorf("NameNode TXT %q lacks role_state=active", txt)
		}
		if r := f.udp(t, "hdfs-namenode.prod.service.heureka", dns.TypeTXT); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 {
			t.Errorf("TXT of an application: %v; want NODATA", r.Answer)
		}
	})
	t.Run("PTR", func(t *testing.T) {
		r := f.udp(t, "2.2.0.192.in-addr.arpa", dns.TypePTR)
		if len(r.Answer) != 1 || r.Answer[0].(*dns.PTR).Ptr != "nn2.example.com." || !r.Authoritative {
			t.Fatalf("PTR 192.0.2.2: %v; want nn2.example.com.", r.Answer)
		}
		rev, _ := dns.ReverseAddr("2001:db8::7")
		if r := f.udp(t, rev, dns.TypePTR); len(r.Answer) != 1 || r.Answer[0].(*dns.PTR).Ptr != "dn1.example.com." {
			t.Fatalf("PTR 2001:db8::7: %v; want dn1.example.com.", r.Answer)
		}
		if r := f.udp(t, "9.9.9.10.in-addr.arpa", dns.TypePTR); r.Rcode != dns.RcodeRefused {
			t.Errorf("PTR of an address nobody has: %s; want REFUSED (not ours to answer)", dns.RcodeToString[r.Rcode])
		}
	})
	t.Run("SOA", func(t *testing.T) {
		r := f.udp(t, "heureka", dns.TypeSOA)
		if len(r.Answer) != 1 || r.Answer[0].(*dns.SOA).Serial != uint32(f.reg.Snapshot().Version) {
			t.Errorf("SOA %v; want one with the registry's version %d as serial", r.Answer, f.reg.Snapshot().Version)
		}
	})
	for _, c := range []struct {
		name   string
		qtype  uint16
		rcode  int
		answer int
		soa    bool
	}{
		{"nope.service.heureka", dns.TypeA, dns.RcodeNameError, 0, true},
		{"hdfs-namenode.prod.heureka", dns.TypeA, dns.RcodeNameError, 0, true},
		{"x.hdfs-namenode.prod.y.service.heureka", dns.TypeA, dns.RcodeNameError, 0, true},
		{"service.heureka", dns.TypeA, dns.RcodeSuccess, 0, true},
		{"hdfs-namenode.prod.service.heureka", dns.TypeMX, dns.RcodeSuccess, 0, true},
		{"hdfs-namenode.prod.service.heureka", dns.TypeAAAA, dns.RcodeSuccess, 0, true},
		{"heureka", dns.TypeNS, dns.RcodeSuccess, 0, true},
		{"example.com", dns.TypeA, dns.RcodeRefused, 0, false},
		{"heureka", dns.TypeAXFR, dns.RcodeRefused, 0, false},
		{"heureka", dns.TypeIXFR, dns.RcodeRefused, 0, false},
		{"hdfs-namenode.prod.service.heureka", dns.TypeANY, dns.RcodeSuccess, 1, false},
		{"gone.id.hdfs-namenode.prod.service.heureka", dns.TypeA, dns.RcodeNameError, 0, true},
	} {
		r := f.ask(t, "tcp", c.name, c.qtype, 0)
		if r.Rcode != c.rcode || len(r.Answer) != c.answer || (len(r.Ns) == 1) != c.soa {
			t.Errorf("%s %s: %s, %d answers, %d authority; want %s, %d, SOA %v", c.name, dns.TypeToString[c.qtype],
				dns.RcodeToString[r.Rcode], len(r.Answer), len(r.Ns), dns.RcodeToString[c.rcode], c.answer, c.soa)
		}
		if c.qtype == dns.TypeANY && len(r.Answer) == 1 {
			if h, ok := r.Answer[0].(*dns.HINFO); !ok || h.Cpu != "RFC8482" {
				t.Errorf("ANY: %v; want RFC 8482's HINFO", r.Answer[0])
			}
		}
	}
	// A class other than IN.
	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	r, err := dns.Exchange(m, f.addr)
	if err != nil || r.Rcode != dns.RcodeRefused {
		t.Errorf("CHAOS version.bind: %v %v; want REFUSED", r, err)
	}
}

// TestTruncation: 2,000 instances do not fit in UDP: TC is set and the
// answer fits the client's size (512 bytes without EDNS0, its EDNS0 size up
// to 1,232); over TCP all 2,000 come, without TC.
func TestTruncation(t *testing.T) {
	f := startDNS(t, nil)
	f.register(t, dataNodes("BIG", 2000)...)
	for _, c := range []struct {
		edns uint16
		max  int
	}{{0, 512}, {1232, 1232}, {4096, 1232}, {600, 600}} {
		r := f.ask(t, "udp", "big.service.heureka", dns.TypeA, c.edns)
		r.Compress = true // as sent
		b, _ := r.Pack()
		if !r.Truncated || len(b) > c.max || len(r.Answer) < c.max/32 {
			t.Errorf("UDP, EDNS0 %d: tc=%v, %d bytes, %d records; want TC, at most %d bytes, and as many records as fit",
				c.edns, r.Truncated, len(b), len(r.Answer), c.max)
		}
	}
	var v6 []*heureka.Instance
	for i := range 300 {
		v6 = append(v6, instance("BIG6", fmt.Sprintf("v6-%d", i), fmt.Sprintf("2001:db8::%x", i+1)))
	}
	f.register(t, v6...)
	for _, network := range []string{"udp", "tcp"} {
		r := f.ask(t, network, "BIG6.service.heureka", dns.TypeAAAA, 1232)
		r.Compress = true
		b, _ := r.Pack()
		want := 300
		if network == "udp" {
			want = (1232 - 12 - len("BIG6.service.heureka.") - 1 - 4 - 11) / 28
		}
		if len(r.Answer) != want || r.Truncated != (network == "udp") || network == "udp" && len(b) > 1232 {
			t.Errorf("AAAA over %s: %d records, tc=%v, %d bytes; want %d, tc=%v", network, len(r.Answer), r.Truncated, len(b), want, network == "udp")
		}
	}

	r := f.ask(t, "tcp", "big.service.heureka", dns.TypeA, 0)
	got := addrs(r.Answer)
	slices.Sort(got)
	if r.Truncated || len(slices.Compact(got)) != 2000 {
		t.Errorf("TCP: tc=%v, %d distinct addresses; want all 2000 without TC", r.Truncated, len(slices.Compact(got)))
	}
	// The same over UDP with a client that retries over TCP, as dig does.
	c := &dns.Client{Net: "udp"}
	m := new(dns.Msg)
	m.SetQuestion("big.service.heureka.", dns.TypeSRV)
	r, _, err := c.Exchange(m, f.addr)
	if err != nil || !r.Truncated {
		t.Fatalf("SRV over UDP: %v, tc=%v; want TC", err, r != nil && r.Truncated)
	}
	r = f.ask(t, "tcp", "big.service.heureka", dns.TypeSRV, 0)
	if n := len(r.Answer); n < 1000 || !r.Truncated && n != 2000 {
		t.Errorf("SRV over TCP: %d records, tc=%v; want all 2000, or over 1000 with TC at 64 KiB", n, r.Truncated)
	}
}

// TestAccess: sources outside --dns-allow are refused, and so is
// everything while anonymous reads are not allowed.
func TestAccess(t *testing.T) {
	f := startDNS(t, func(c *Config) { c.Allow = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} })
	f.register(t, nameNodes()...)
	if r := f.udp(t, "hdfs-namenode.prod.service.heureka", dns.TypeA); r.Rcode != dns.RcodeRefused || len(r.Answer) != 0 {
		t.Errorf("from 127.0.0.1, allow 10.0.0.0/8: %s %v; want REFUSED", dns.RcodeToString[r.Rcode], addrs(r.Answer))
	}
	var open atomic.Bool
	g := startDNS(t, func(c *Config) {
		c.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		c.Anonymous = open.Load
	})
	g.register(t, nameNodes()...)
	if r := g.udp(t, "hdfs-namenode.prod.service.heureka", dns.TypeA); r.Rcode != dns.RcodeRefused {
		t.Errorf("reads need credentials: %s; want REFUSED", dns.RcodeToString[r.Rcode])
	}
	open.Store(true)
	if r := g.udp(t, "hdfs-namenode.prod.service.heureka", dns.TypeA); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 5 {
		t.Errorf("reads open: %s %v; want the 5 NameNodes", dns.RcodeToString[r.Rcode], addrs(r.Answer))
	}
}

// TestRateLimitSlipsAndDrops: past its burst a source gets every other
// query back as an empty truncated reply and the rest dropped; another
// source and loopback are not affected.
func TestRateLimitSlipsAndDrops(t *testing.T) {
	l := newLimiter(1, 3, 2)
	a, b := netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("198.51.100.2")
	var got []verdict
	for range 7 {
		got = append(got, l.check(a))
	}
	if want := []verdict{answer, answer, answer, slip, drop, slip, drop}; !slices.Equal(got, want) {
		t.Errorf("verdicts %v; want %v", got, want)
	}
	if l.check(b) != answer || l.check(netip.MustParseAddr("127.0.0.1")) != answer {
		t.Error("another source or loopback was limited")
	}
	if l.check(netip.MustParseAddr("198.51.100.3")); len(l.sources) > 2 {
		t.Errorf("%d sources tracked; the bound is 2", len(l.sources))
	}
}

// TestHostileInput: malformed and truncated packets, compression loops,
// oversized labels, many questions, EDNS0 options of every size, and a TCP
// client that sends half a message and stalls neither crash the server nor
// change the registry, and it answers a good query afterwards.
func TestHostileInput(t *testing.T) {
	f := startDNS(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	f.register(t, nameNodes()...)
	before := f.reg.Snapshot().Version

	good := new(dns.Msg)
	good.SetQuestion("hdfs-namenode.prod.service.heureka.", dns.TypeA)
	goodB, _ := good.Pack()
	header := func(qd uint16) []byte {
		h := make([]byte, 12)
		binary.BigEndian.PutUint16(h[0:], 0x1234)
		binary.BigEndian.PutUint16(h[4:], qd)
		return h
	}
	loop := append(header(1), 0xc0, 12, 0, 1, 0, 1) // a name that points at itself
	long := append(header(1), 64)
	long = append(long, []byte(strings.Repeat("a", 64))...)
	long = append(long, 0, 0, 1, 0, 1)
	many := header(3000)
	for range 3000 {
		many = append(many, 1, 'a', 0, 0, 1, 0, 1)
	}
	var packets = [][]byte{nil, {0}, header(1), goodB[:len(goodB)-3], loop, long, many, header(0)}
	for _, size := range []int{0, 1, 255, 1000, 7000, 60000} {
		m := good.Copy()
		m.SetEdns0(4096, false)
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_LOCAL{Code: 65001, Data: make([]byte, size)})
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		packets = append(packets, b)
	}
	for i, p := range packets {
		reply := rawUDP(t, f.addr, p, 300*time.Millisecond)
		if reply == nil {
			continue // unanswered is fine for garbage
		}
		var m dns.Msg
		if err := m.Unpack(reply); err != nil {
			t.Errorf("packet %d: reply does not parse: %v", i, err)
			continue
		}
		if len(reply) > max(len(p), 512) {
			t.Errorf("packet %d of %d bytes: reply of %d bytes amplifies", i, len(p), len(reply))
		}
	}

	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte{0, 100, 1, 2, 3}); err != nil { // 100 bytes announced, 3 sent
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("a stalled TCP client was not cut off by the server: %v", err)
	}

	if got := addrs(f.udp(t, "hdfs-namenode.prod.service.heureka", dns.TypeA).Answer); len(got) != 5 {
		t.Errorf("after hostile input: %v; want the 5 NameNodes", got)
	}
	if v := f.reg.Snapshot().Version; v != before {
		t.Errorf("registry version %d after hostile input, was %d", v, before)
	}
}

// TestMetricsByTypeAndRcode: queries are counted by type and rcode, timed,
// and truncations counted.
func TestMetricsByTypeAndRcode(t *testing.T) {
	f := startDNS(t, nil)
	f.register(t, dataNodes("BIG", 300)...)
	f.udp(t, "big.service.heureka", dns.TypeA)
	f.ask(t, "udp", "big.service.heureka", dns.TypeA, 0)
	f.udp(t, "nope.service.heureka", dns.TypeAAAA)
	f.udp(t, "example.org", dns.TypeSRV)
	m := f.srv.met
	// A query is counted once its answer is sent: the client can have it
	// a moment before.
	for deadline := time.Now().Add(5 * time.Second); m.total.Load() < 4 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for _, c := range []struct {
		qtype, rcode string
		want         float64
	}{{"A", "NOERROR", 2}, {"AAAA", "NXDOMAIN", 1}, {"SRV", "REFUSED", 1}} {
		if got := testutil.ToFloat64(m.queries.WithLabelValues(c.qtype, c.rcode)); got != c.want {
			t.Errorf("queries{%s,%s} = %v; want %v", c.qtype, c.rcode, got, c.want)
		}
	}
	if got := testutil.ToFloat64(m.truncated); got != 2 {
		t.Errorf("truncated = %v; want 2 (300 records fit neither 512 nor 1,232 bytes)", got)
	}
	if n := testutil.CollectAndCount(f.srv.Collector(), "heureka_dns_query_seconds"); n != 1 {
		t.Errorf("%d latency histograms; want 1 (udp)", n)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(f.srv.Collector()); err != nil {
		t.Errorf("the collector does not register: %v", err)
	}
	if st := f.srv.Status(); st["queries"] != uint64(4) || st["domain"] != "heureka." {
		t.Errorf("status %v; want 4 queries in heureka.", st)
	}
}

// TestConfigValidate names the setting at fault.
func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		edit  func(*Config)
		field string
	}{
		{func(c *Config) { c.Domain = "." }, "Domain"},
		{func(c *Config) { c.Domain = "a..b" }, "Domain"},
		{func(c *Config) { c.MaxUDPSize = 100 }, "MaxUDPSize"},
		{func(c *Config) { c.Rate = -1 }, "Rate"},
		{func(c *Config) { c.TTL = -time.Second }, "TTL"},
		{func(c *Config) { c.ReadTimeout = 0 }, "ReadTimeout"},
		{func(c *Config) { c.Allow = []netip.Prefix{{}} }, "Allow[0]"},
	} {
		cfg := DefaultConfig()
		cfg.Listen = "127.0.0.1:0"
		c.edit(&cfg)
		ce, ok := errors.AsType[*heureka.ConfigError](cfg.Validate())
		if !ok || ce.Field != c.field {
			t.Errorf("%+v: error %v; want a ConfigError naming %s", cfg, cfg.Validate(), c.field)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults (DNS off): %v", err)
	}
	got, err := ParseAllow("10.0.0.0/8, 192.0.2.7 ,2001:db8::/32")
	if err != nil || len(got) != 3 || got[1] != netip.MustParsePrefix("192.0.2.7/32") {
		t.Errorf("ParseAllow: %v %v", got, err)
	}
	if _, err := ParseAllow("10.0.0.0/33"); err == nil || !strings.Contains(err.Error(), `"10.0.0.0/33"`) {
		t.Errorf("ParseAllow of a bad network: %v; want an error naming the network", err)
	}
}

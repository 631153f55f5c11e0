package dnsapi

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/registry/registrytest"
	"github.com/miekg/dns"
)

// benchRegistry is 20,000 DataNodes over 400 racks and a 3-NameNode
// application, as bench/dns serves them.
func benchRegistry(b *testing.B) *registry.Registry {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 20000 {
		in := registrytest.DataNode(i)
		in.Metadata = in.Metadata.With("rack", fmt.Sprintf("/dc1/rack%03d", i%400))
		if err := reg.Register(in, false); err != nil {
			b.Fatal(err)
		}
	}
	for _, in := range nameNodes()[:3] {
		if err := reg.Register(in, false); err != nil {
			b.Fatal(err)
		}
	}
	return reg
}

// benchNames are the names bench/dns asks: the NameNodes (3 A records) and
// one rack's DataNodes (50).
var benchNames = []string{"hdfs-namenode.prod.service.heureka.", "dc1.rack007.rack.hdfs-datanode.prod.service.heureka."}

// BenchmarkRespond makes and packs the answer to one question with
// miekg/dns, as TCP queries and the UDP queries the fast path does not
// take are answered, at 20,000 DataNodes over 400 racks and a 3-NameNode
// application.
func BenchmarkRespond(b *testing.B) {
	r := newResponder(testConfig(), benchRegistry(b))
	for _, name := range benchNames {
		b.Run(name[:12], func(b *testing.B) {
			req := new(dns.Msg)
			req.SetQuestion(name, dns.TypeA)
			req.SetEdns0(1232, false)
			r.respond(req, true) // the snapshot and the application's view are built once, after a change
			for b.Loop() {
				m := r.respond(req, true)
				if _, err := m.Pack(); err != nil || len(m.Answer) == 0 {
					b.Fatal(err, m)
				}
			}
		})
	}
}

// BenchmarkAnswerUDP is all a UDP query costs the server but its two
// system calls, on the fast path: reading the query, the rate limit and
// access list, the answer, and its metrics; at 20,000 DataNodes over 400
// racks and a 3-NameNode application.
func BenchmarkAnswerUDP(b *testing.B) {
	cfg := testConfig()
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cfg.Rate, cfg.Burst = 1e9, 1e9 // limited, from a source that stays under its limit
	s, err := New(cfg, benchRegistry(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	src := netip.MustParseAddr("10.9.8.7")
	sc := newScratch(cfg.MaxUDPSize)
	for _, name := range benchNames {
		b.Run(name[:12], func(b *testing.B) {
			req := new(dns.Msg)
			req.SetQuestion(name, dns.TypeA)
			req.SetEdns0(1232, false)
			msg, err := req.Pack()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				reply, o, ok := s.answerUDP(msg, src, sc)
				if !ok || len(reply) < 100 {
					b.Fatalf("reply %x", reply)
				}
				s.met.observe(o, "udp", time.Microsecond)
			}
		})
	}
}

// BenchmarkChangeToAnswer is one DataNode's status change and the answer
// to its rack's name that follows, at 20,000 DataNodes: what a change
// costs the first DNS answer after it (the registry's snapshot, and the
// application's view rebuilt from its blocks).
func BenchmarkChangeToAnswer(b *testing.B) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var rack7 []string
	for i := range 20000 {
		in := registrytest.DataNode(i)
		in.Metadata = in.Metadata.With("rack", fmt.Sprintf("/dc1/rack%03d", i%400))
		if err := reg.Register(in, false); err != nil {
			b.Fatal(err)
		}
		if i%400 == 7 {
			rack7 = append(rack7, in.ID)
		}
	}
	r := newResponder(testConfig(), reg)
	req := new(dns.Msg)
	req.SetQuestion("dc1.rack007.rack.hdfs-datanode.prod.service.heureka.", dns.TypeA)
	req.SetEdns0(1232, false)
	r.respond(req, true)
	i := 0
	for b.Loop() {
		st := heureka.StatusOutOfService
		if i%2 == 1 {
			st = heureka.StatusUp
		}
		if err := reg.SetStatus(registrytest.DataNodeApp, rack7[i/2%len(rack7)], st, 0, false); err != nil {
			b.Fatal(err)
		}
		if m := r.respond(req, true); len(m.Answer) < 49 {
			b.Fatalf("%d answers", len(m.Answer))
		}
		i++
	}
}

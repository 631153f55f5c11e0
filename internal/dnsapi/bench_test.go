package dnsapi

import (
	"fmt"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/registry/registrytest"
	"github.com/miekg/dns"
)

// BenchmarkRespond makes and packs the answer to one question, as the
// server does for each query, at 20,000 DataNodes over 400 racks and a
// 3-NameNode application.
func BenchmarkRespond(b *testing.B) {
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
	r := &responder{zone: "heureka.", maxUDP: 1232, views: views{reg: reg}}
	for _, name := range []string{"hdfs-namenode.prod.service.heureka.", "dc1.rack007.rack.hdfs-datanode.prod.service.heureka."} {
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
	r := &responder{zone: "heureka.", maxUDP: 1232, views: views{reg: reg}}
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

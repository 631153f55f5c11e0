package dnsapi

import (
	"fmt"
	"testing"

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

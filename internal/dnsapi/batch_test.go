package dnsapi

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestBatchRepliesGoToTheirSenders: queries from many sockets at once,
// over IPv4 and IPv6 loopback, are read and answered in batches, and each
// sender gets the reply to its own query (its ID, its question, its
// rack's addresses) and no other.
func TestBatchRepliesGoToTheirSenders(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1"} {
		t.Run(host, func(t *testing.T) {
			if host == "::1" {
				if c, err := net.ListenPacket("udp6", "[::1]:0"); err != nil {
					t.Skipf("no IPv6 loopback here: %v", err)
				} else {
					c.Close()
				}
			}
			f := startDNS(t, func(c *Config) { c.Listen = net.JoinHostPort(host, "0") })
			f.register(t, dataNodes("HDFS-DATANODE.PROD", 100)...)
			const senders = 3 * batchSize
			conns := make([]net.Conn, senders)
			for i := range conns {
				c, err := net.Dial("udp", f.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				conns[i] = c
			}
			for i, c := range conns {
				m := new(dns.Msg)
				m.SetQuestion(fmt.Sprintf("dc1.rack-%d.rack.hdfs-datanode.prod.service.heureka.", i%10), dns.TypeA)
				m.Id = uint16(1000 + i)
				b, _ := m.Pack()
				if _, err := c.Write(b); err != nil {
					t.Fatal(err)
				}
			}
			buf := make([]byte, 2048)
			for i, c := range conns {
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, err := c.Read(buf)
				if err != nil {
					t.Fatalf("sender %d: no reply: %v", i, err)
				}
				var r dns.Msg
				if err := r.Unpack(buf[:n]); err != nil {
					t.Fatalf("sender %d: reply does not parse: %v", i, err)
				}
				got := addrs(r.Answer)
				slices.Sort(got)
				var want []string
				for j := i % 10; j < 100; j += 10 {
					want = append(want, fmt.Sprintf("10.1.0.%d", j+1))
				}
				slices.Sort(want)
				if r.Id != uint16(1000+i) || !slices.Equal(got, want) {
					t.Fatalf("sender %d (rack-%d, id %d): reply id %d with %v; want its own rack's %v", i, i%10, 1000+i, r.Id, got, want)
				}
			}
		})
	}
}

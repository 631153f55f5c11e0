package dns_test

import (
	"context"
	"fmt"

	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/heureka-project/heureka"
)

// digger runs dig against one server.
type digger struct {
	t    *testing.T
	bin  string
	port string
}

// ask runs dig @127.0.0.1 -p PORT with args and returns its whole output.
func (d digger) ask(args ...string) string {
	d.t.Helper()
	return run(d.t, d.bin, append([]string{"@127.0.0.1", "-p", d.port, "+tries=1", "+time=5"}, args...)...)
}

// short returns dig +short's lines.
func (d digger) short(args ...string) []string {
	d.t.Helper()
	return lines(d.ask(append(args, "+short")...))
}

var statusRE = regexp.MustCompile(`status: (\w+)`)

// status returns the rcode dig printed.
func (d digger) status(args ...string) string {
	d.t.Helper()
	out := d.ask(args...)
	m := statusRE.FindStringSubmatch(out)
	if m == nil {
		d.t.Fatalf("dig %v printed no status:\n%s", args, out)
	}
	return m[1]
}

// TestDig asks with dig (Debian's bind9-dnsutils) for every record type
// and rcode the zone answers with, and for an application of 2,000
// instances: truncated over UDP, whole over TCP.
func TestDig(t *testing.T) {
	bin := need(t, "dig", "bind9-dnsutils")
	s := startServer(t)
	c := newClient(t, s.URL())
	register(t, c, nameNodes()...)
	dn := instance("HDFS-DATANODE.PROD", "dn1.example.com", "2001:db8::1", "rack", "/DC1/Rack.A",
		"disk_used", "300", "disk_total", "1000", "version", "3.4.0")
	dn.ID = "dn1.example.com:9866"
	down := instance("HDFS-DATANODE.PROD", "dn2.example.com", "2001:db8::2", "rack", "/DC1/Rack.A")
	down.Status = heureka.StatusDown
	register(t, c, dn, down)
	d := digger{t: t, bin: bin, port: s.dnsPort()}

	if got := d.short("hdfs-namenode.prod.service.heureka"); !slices.Equal(got, []string{"192.0.2.2", "192.0.2.1", "192.0.2.3"}) {
		t.Errorf("A: %v; want the active, the standby, the observer", got)
	}
	if got := d.short("active.hdfs-namenode.prod.service.heureka"); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Errorf("active.: %v", got)
	}
	if got := d.short("hdfs-datanode.prod.service.heureka", "AAAA"); !slices.Equal(got, []string{"2001:db8::1"}) {
		t.Errorf("AAAA: %v; want only the UP 2001:db8::1", got)
	}
	if got := d.short("_44_431._52ack_2e_41.rack.hdfs-datanode.prod.service.heureka", "AAAA"); !slices.Equal(got, []string{"2001:db8::1"}) {
		t.Errorf("rack /DC1/Rack.A: %v", got)
	}
	srv := d.short("hdfs-namenode.prod.service.heureka", "SRV")
	if len(srv) != 3 || srv[0] != "0 1 8020 nn2.example.com." {
		t.Errorf("SRV: %v; want the active first: 0 1 8020 nn2.example.com.", srv)
	}
	if add := d.ask("hdfs-namenode.prod.service.heureka", "SRV", "+noall", "+additional"); !strings.Contains(add, "nn2.example.com.\t0\tIN\tA\t192.0.2.2") {
		t.Errorf("SRV additional section:\n%s\nwant nn2.example.com.'s A record", add)
	}
	txt := strings.Join(d.short("dn1.example.com_3a9866.id.hdfs-datanode.prod.service.heureka", "TXT"), " ")
	for _, want := range []string{`"rack=/DC1/Rack.A"`, `"full_percent=30.0"`, `"version=3.4.0"`, `"status=UP"`} {
		if !strings.Contains(txt, want) {
			t.Errorf("TXT %s lacks %s", txt, want)
		}
	}
	if got := d.short("-x", "192.0.2.2"); !slices.Equal(got, []string{"nn2.example.com."}) {
		t.Errorf("PTR 192.0.2.2: %v", got)
	}
	if got := d.short("-x", "2001:db8::1"); !slices.Equal(got, []string{"dn1.example.com."}) {
		t.Errorf("PTR 2001:db8::1: %v", got)
	}
	if got := d.short("heureka", "SOA"); len(got) != 1 || !strings.HasPrefix(got[0], "ns.heureka. hostmaster.heureka. ") {
		t.Errorf("SOA: %v", got)
	}
	if got := d.short("hdfs-namenode.prod.service.heureka", "ANY"); !slices.Equal(got, []string{`"RFC8482" ""`}) {
		t.Errorf("ANY: %v; want RFC 8482's HINFO", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nope.service.heureka"}, "NXDOMAIN"},
		{[]string{"hdfs-namenode.prod.service.heureka", "MX"}, "NOERROR"},
		{[]string{"example.com"}, "REFUSED"},
		{[]string{"-x", "198.51.100.9"}, "REFUSED"},
		{[]string{"version.bind", "TXT", "CH"}, "REFUSED"},
		{[]string{"+opcode=status", "heureka"}, "NOTIMP"},
		{[]string{"+edns=1", "+noednsneg", "heureka"}, "BADVERS"},
	} {
		if got := d.status(c.args...); got != c.want {
			t.Errorf("dig %v: %s, want %s", c.args, got, c.want)
		}
	}
	if out := d.ask("nope.service.heureka"); !strings.Contains(out, "AUTHORITY SECTION:\nheureka.\t\t0\tIN\tSOA") {
		t.Errorf("NXDOMAIN without the zone's SOA:\n%s", out)
	}
	if out := d.ask("hdfs-namenode.prod.service.heureka", "MX"); !strings.Contains(out, "ANSWER: 0, AUTHORITY: 1") {
		t.Errorf("NODATA:\n%s", out)
	}
	if out := d.ask("heureka", "AXFR"); !strings.Contains(out, "Transfer failed") {
		t.Errorf("AXFR:\n%s\nwant it refused", out)
	}

	// 2,000 instances: TC over UDP (dig +ignore shows the truncated reply
	// instead of retrying), all of them over TCP, and dig's own retry
	// over TCP when it sees TC.
	big := make([]*heureka.Instance, 2000)
	for i := range big {
		big[i] = instance("BIG", fmt.Sprintf("big%04d.example.com", i), fmt.Sprintf("10.7.%d.%d", i/250, i%250+1))
	}
	registerMany(t, c, big)
	if out := d.ask("big.service.heureka", "+ignore", "+bufsize=1232"); !tcRE.MatchString(out) {
		t.Errorf("UDP answer of 2,000 without TC:\n%.600s", out)
	}
	if out := d.ask("big.service.heureka", "+ignore", "+noedns"); !tcRE.MatchString(out) || !strings.Contains(out, "MSG SIZE  rcvd: ") {
		t.Errorf("UDP answer without EDNS0 and without TC:\n%.600s", out)
	} else if size := msgSize(out); size > 512 {
		t.Errorf("UDP answer of %d bytes to a client without EDNS0; want at most 512", size)
	}
	for _, mode := range [][]string{{"+tcp"}, {}} { // TCP at once; UDP, then TCP on TC
		got := d.short(append([]string{"big.service.heureka"}, mode...)...)
		slices.Sort(got)
		if len(slices.Compact(got)) != 2000 {
			t.Errorf("dig %v: %d distinct addresses; want all 2,000", mode, len(slices.Compact(got)))
		}
	}
}

var tcRE = regexp.MustCompile(`flags: qr aa tc rd;`)

var sizeRE = regexp.MustCompile(`MSG SIZE  rcvd: (\d+)`)

func msgSize(out string) int {
	var n int
	if m := sizeRE.FindStringSubmatch(out); m != nil {
		fmt.Sscan(m[1], &n)
	}
	return n
}

// registerMany registers ins over a few connections at once.
func registerMany(t *testing.T, c interface {
	Register(context.Context, *heureka.Instance) error
}, ins []*heureka.Instance) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(ins))
	work := make(chan *heureka.Instance)
	for range 8 {
		wg.Go(func() {
			for in := range work {
				if err := c.Register(ctx(t), in); err != nil {
					errs <- fmt.Errorf("register %s: %w", in.ID, err)
				}
			}
		})
	}
	for _, in := range ins {
		work <- in
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

package dnsapi

import (
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/registry"
	"github.com/miekg/dns"
)

// responder makes a reply from a request. It does no I/O, so the tests
// and the fuzz target call it directly; the Server adds the transport,
// the access list, the rate limit and the metrics.
type responder struct {
	zone      string // lower case, fully qualified
	zoneWire  []byte // zone in wire form
	ttl       uint32
	maxUDP    int
	views     views
	anonymous func() bool
}

// newResponder returns a responder for cfg's zone, TTL, UDP size and
// anonymous check, answering from reg.
func newResponder(cfg Config, reg *registry.Registry) *responder {
	zone := cfg.zone()
	wire := make([]byte, len(zone)+1)
	n, _ := dns.PackDomainName(zone, wire, 0, nil, false) // Validate checked it
	return &responder{zone: zone, zoneWire: wire[:n], ttl: uint32(cfg.TTL / time.Second), maxUDP: cfg.MaxUDPSize,
		views: views{reg: reg}, anonymous: cfg.Anonymous}
}

// minRRSize is the least an answer record can take in a compressed
// message (a name pointer, the fixed fields, four bytes of address): no
// more records than size/minRRSize can fit, so no more are made.
const minRRSize = aAnswerSize

// respond returns the reply to req, received over UDP when udp is set.
// The reply fits the client's size: over UDP, 512 bytes or what its
// EDNS0 option announces up to maxUDP; over TCP, 65,535 bytes. Records
// that do not fit are left out and the TC flag is set.
func (r *responder) respond(req *dns.Msg, udp bool) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Compress = true
	if req.Opcode != dns.OpcodeQuery {
		m.Rcode = dns.RcodeNotImplemented
		m.Question = nil
		return m
	}
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		m.Question = nil
		return m
	}
	size := dns.MinMsgSize
	opts := 0
	for _, rr := range req.Extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			opts++
		}
	}
	if opts > 1 {
		m.Rcode = dns.RcodeFormatError // RFC 6891 6.1.1
		return m
	}
	if opt := req.IsEdns0(); opt != nil {
		m.SetEdns0(uint16(r.maxUDP), opt.Do())
		if opt.Version() != 0 {
			m.Rcode = dns.RcodeBadVers
			return m
		}
		size = max(dns.MinMsgSize, min(int(opt.UDPSize()), r.maxUDP))
	}
	if !udp {
		size = dns.MaxMsgSize
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	inZone := name == r.zone || strings.HasSuffix(name, "."+r.zone)
	switch {
	case q.Qclass != dns.ClassINET,
		!inZone && !isReverse(name),
		q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR,
		r.anonymous != nil && !r.anonymous():
		m.Rcode = dns.RcodeRefused
		return m
	}
	sized := false
	if inZone {
		sized = r.zoneAnswer(m, q, name, size)
	} else {
		r.reverseAnswer(m, q, name)
	}
	if !sized {
		m.Truncate(size)
	}
	return m
}

// node is what a name in the zone stands for.
type node struct {
	apex  bool
	group *group            // a group of instances (possibly empty)
	one   *heureka.Instance // an instance name
}

// zoneAnswer answers a name in the zone. sized is true when it has cut the
// answer to size itself, as it does for address records, whose size it
// knows: the general Truncate then need not measure the message.
func (r *responder) zoneAnswer(m *dns.Msg, q dns.Question, name string, size int) (sized bool) {
	m.Authoritative = true
	v := r.views.current()
	n, ok := r.lookup(v, name)
	if !ok {
		m.Rcode = dns.RcodeNameError
		m.Ns = []dns.RR{r.soa(v)}
		return false
	}
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: q.Name, Rrtype: t, Class: dns.ClassINET, Ttl: r.ttl}
	}
	switch {
	case q.Qtype == dns.TypeANY:
		// RFC 8482 4.2: one synthesised HINFO instead of everything.
		m.Answer = []dns.RR{&dns.HINFO{Hdr: hdr(dns.TypeHINFO), Cpu: "RFC8482"}}
	case n.apex && q.Qtype == dns.TypeSOA:
		m.Answer = []dns.RR{r.soa(v)}
	case n.group != nil && (q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA):
		g, v6 := n.group, q.Qtype == dns.TypeAAAA
		rrSize := aAnswerSize
		if v6 {
			rrSize = aaaaAnswerSize
		}
		total := g.count(v6)
		if total == 0 {
			break
		}
		fixed := fixedSize(m)
		idx := pick(total, func(i int) int { return g.entry(v6, i).rank }, g.ranked, (size-fixed)/rrSize)
		m.Answer = make([]dns.RR, len(idx))
		for j, i := range idx {
			m.Answer[j] = withOwner(g.record(v6, i, name, r.ttl), q.Name)
		}
		m.Truncated = len(idx) < total
		// A small answer fits without compression, which saves the
		// compression table an answer of thousands needs.
		m.Compress = fixed+len(idx)*(rrSize-2+len(q.Name)+1) > size
		return true
	case n.group != nil && q.Qtype == dns.TypeSRV:
		g, n4 := n.group, n.group.count(false)
		at := func(i int) entry {
			if i < n4 {
				return g.entry(false, i)
			}
			return g.entry(true, i-n4)
		}
		for _, i := range pick(n4+g.count(true), func(i int) int { return at(i).rank }, g.ranked, size/minRRSize) {
			r.srv(m, hdr(dns.TypeSRV), g.app, at(i), g.ranked)
		}
	case n.one != nil:
		r.instanceAnswer(m, q, hdr, n.one)
	}
	if len(m.Answer) == 0 {
		m.Ns = []dns.RR{r.soa(v)}
	}
	return false
}

// The wire size of an A and an AAAA record in an answer whose owner is
// the question's name: a compression pointer, type, class, TTL, length
// and address.
const (
	aAnswerSize    = 2 + 10 + 4
	aaaaAnswerSize = 2 + 10 + 16
)

// fixedSize bounds the wire size of m without answers: the header, the
// question (a name's wire form is at most its text's length plus one) and
// an OPT record without options.
func fixedSize(m *dns.Msg) int {
	n := 12
	for _, q := range m.Question {
		n += len(q.Name) + 1 + 4
	}
	if m.IsEdns0() != nil {
		n += 11
	}
	return n
}

// withOwner returns rr with owner name, a copy when its own differs (a
// question asked in mixed case gets its case back, as resolvers that
// randomise case check).
func withOwner(rr dns.RR, owner string) dns.RR {
	if rr.Header().Name == owner {
		return rr
	}
	switch rr := rr.(type) {
	case *dns.A:
		c := *rr
		c.Hdr.Name = owner
		return &c
	case *dns.AAAA:
		c := *rr
		c.Hdr.Name = owner
		return &c
	}
	return rr
}

// lookup finds what name (lower case, in the zone) stands for; ok is false
// when it names nothing (NXDOMAIN).
func (r *responder) lookup(v *view, name string) (node, bool) {
	if name == r.zone {
		return node{apex: true}, true
	}
	labels := strings.Split(strings.TrimSuffix(name, "."+r.zone), ".")
	if labels[len(labels)-1] != serviceTag {
		return node{}, false
	}
	labels = labels[:len(labels)-1]
	if len(labels) == 0 {
		return node{}, true // service.<zone>: a name with no records of its own
	}
	a, app, qual := v.find(labels)
	switch {
	case a == nil:
		return node{}, false
	case len(qual) == 0:
		return node{group: a.group(groupKey{kindAll, ""})}, true
	case len(qual) == 1:
		return node{group: a.group(groupKey{kindState, qual[0]})}, true
	}
	last := len(qual) - 1
	switch qual[last] {
	case rackMarker:
		rack, ok := decodeParts(qual[:last], "/")
		if !ok {
			return node{}, false
		}
		return node{group: a.group(groupKey{kindRack, "/" + rack})}, true
	case idMarker:
		id, ok := decodeParts(qual[:last], ".")
		if !ok {
			return node{}, false
		}
		in, ok := v.snap.Instance(app, id)
		if !ok {
			return node{}, false
		}
		return node{one: in}, true
	}
	return node{}, false
}

// pick returns the indices of up to limit of n instances, in answer order:
// shuffled, or for a ranked list (a NameNode application's) in rank order
// and shuffled within each rank. Drawing few of many costs the few, not
// the many, except in a ranked list, which is small.
func pick(n int, rank func(i int) int, ranked bool, limit int) []int {
	k := max(0, min(n, limit))
	if ranked {
		idx := rand.Perm(n)
		slices.SortStableFunc(idx, func(a, b int) int { return rank(a) - rank(b) })
		return idx[:k]
	}
	if k > n/2 {
		return rand.Perm(n)[:k]
	}
	seen := make([]uint64, (n+63)/64)
	out := make([]int, 0, k)
	for len(out) < k {
		i := rand.IntN(n)
		if seen[i/64]&(1<<(i%64)) == 0 {
			seen[i/64] |= 1 << (i % 64)
			out = append(out, i)
		}
	}
	return out
}

func addrRR(h dns.RR_Header, a netip.Addr) dns.RR {
	if a.Is4() {
		h.Rrtype = dns.TypeA
		return &dns.A{Hdr: h, A: net.IP(a.AsSlice())}
	}
	h.Rrtype = dns.TypeAAAA
	return &dns.AAAA{Hdr: h, AAAA: net.IP(a.AsSlice())}
}

// srv adds e's SRV record to m, and its address to the additional section.
// The target is the registered host name when it is a domain name, else
// the instance's name in the zone. In a NameNode application the priority
// is the rank (active 0, standby 1, observer 2).
func (r *responder) srv(m *dns.Msg, h dns.RR_Header, app string, e entry, ranked bool) {
	target, ok := hostTarget(e.host)
	if !ok {
		target, ok = InstanceName(e.id, app, r.zone)
		if !ok {
			return
		}
	}
	prio := uint16(0)
	if ranked {
		prio = uint16(e.rank)
	}
	m.Answer = append(m.Answer, &dns.SRV{Hdr: h, Priority: prio, Weight: 1, Port: e.port, Target: target})
	m.Extra = append(m.Extra, addrRR(dns.RR_Header{Name: target, Class: dns.ClassINET, Ttl: h.Ttl}, e.addr))
}

// hostTarget returns host as a fully qualified name when it is a host
// name: labels of letters, digits, '-' and '_' (not an address, not a
// host:port).
func hostTarget(host string) (string, bool) {
	if host == "" {
		return "", false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return "", false
	}
	if len(host) > 253 {
		return "", false
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(host, "."), ".") {
		if l == "" || len(l) > 63 || strings.ContainsFunc(l, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		}) {
			return "", false
		}
	}
	return dns.Fqdn(strings.ToLower(host)), true
}

// instanceAnswer answers a name of one instance: its address (whatever
// its status), its SRV record, and its TXT record.
func (r *responder) instanceAnswer(m *dns.Msg, q dns.Question, hdr func(uint16) dns.RR_Header, in *heureka.Instance) {
	role, _, _ := hdfs.ParseAppName(in.App)
	e := newEntry(in, role == hdfs.RoleNameNode)
	switch q.Qtype {
	case dns.TypeA, dns.TypeAAAA:
		if e.addr.IsValid() && e.addr.Is4() == (q.Qtype == dns.TypeA) {
			m.Answer = []dns.RR{addrRR(hdr(q.Qtype), e.addr)}
		}
	case dns.TypeSRV:
		if e.addr.IsValid() {
			target, ok := hostTarget(e.host)
			if !ok {
				target = dns.Fqdn(strings.ToLower(q.Name))
			}
			h := hdr(dns.TypeSRV)
			m.Answer = []dns.RR{&dns.SRV{Hdr: h, Priority: 0, Weight: 1, Port: e.port, Target: target}}
			m.Extra = append(m.Extra, addrRR(dns.RR_Header{Name: target, Class: dns.ClassINET, Ttl: h.Ttl}, e.addr))
		}
	case dns.TypeTXT:
		m.Answer = []dns.RR{&dns.TXT{Hdr: hdr(dns.TypeTXT), Txt: txtOf(in, e)}}
	}
}

// txtOf returns what a router needs of an instance as key=value strings:
// its identity, status, rack, role state, fullness and version. A string
// that would pass TXT's 255 bytes is left out.
func txtOf(in *heureka.Instance, e entry) []string {
	kv := [][2]string{
		{"app", strings.ToLower(in.App)}, {"id", in.ID}, {"host", in.HostName}, {"ip", in.IPAddr},
		{"port", strconv.Itoa(int(e.port))}, {"status", string(in.Status)}, {heureka.MetaRack, e.rack},
		{roleStateKey, e.state},
		{heureka.MetaVersion, in.Metadata.Get(heureka.MetaVersion)},
		{hdfs.MetaDiskUsed, in.Metadata.Get(hdfs.MetaDiskUsed)},
		{hdfs.MetaDiskTotal, in.Metadata.Get(hdfs.MetaDiskTotal)},
		{"admin_state", in.Metadata.Get(hdfs.MetaStatus)},
	}
	used, err1 := strconv.ParseFloat(in.Metadata.Get(hdfs.MetaDiskUsed), 64)
	total, err2 := strconv.ParseFloat(in.Metadata.Get(hdfs.MetaDiskTotal), 64)
	if err1 == nil && err2 == nil && total > 0 {
		kv = append(kv, [2]string{"full_percent", strconv.FormatFloat(100*used/total, 'f', 1, 64)})
	}
	out := make([]string, 0, len(kv))
	for _, p := range kv {
		if p[1] == "" || len(p[0])+1+len(p[1]) > 255 {
			continue
		}
		out = append(out, p[0]+"="+p[1])
	}
	return out
}

// reverseAnswer answers a reverse-lookup name: the registered host names
// of the instances whose IP address it is. An address no instance has,
// or a partial reverse name, is not heureka's to answer: REFUSED, so a
// stub resolver asks its next nameserver.
func (r *responder) reverseAnswer(m *dns.Msg, q dns.Question, name string) {
	a, ok := reverseAddr(name)
	if !ok {
		m.Rcode = dns.RcodeRefused
		return
	}
	hosts := r.hostsOf(a)
	if len(hosts) == 0 {
		m.Rcode = dns.RcodeRefused
		return
	}
	m.Authoritative = true
	if q.Qtype != dns.TypePTR {
		return // NODATA
	}
	for _, h := range hosts {
		m.Answer = append(m.Answer, &dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: r.ttl}, Ptr: h})
	}
}

// hostsOf returns the distinct host names registered with address a.
func (r *responder) hostsOf(a netip.Addr) []string {
	var out []string
	matches, _ := r.views.reg.ByHost([]string{a.String()}, "", 64)
	for _, m := range matches {
		for _, in := range m.Instances {
			ip, err := netip.ParseAddr(in.IPAddr)
			if err != nil || ip.Unmap() != a {
				continue
			}
			if h, ok := hostTarget(in.HostName); ok && !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

// soa is the zone's SOA record. Its serial is the registry's version (as
// 32 bits), and its minimum, the TTL of negative answers, is the TTL.
func (r *responder) soa(v *view) dns.RR {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: r.zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: r.ttl},
		Ns:      "ns." + r.zone,
		Mbox:    "hostmaster." + r.zone,
		Serial:  uint32(v.snap.Version),
		Refresh: soaRefresh, Retry: soaRetry, Expire: soaExpire,
		Minttl: r.ttl,
	}
}

// The SOA's timers. Secondaries are refused transfers; these only need to
// be sane.
const (
	soaRefresh = 3600
	soaRetry   = 600
	soaExpire  = 86400
)

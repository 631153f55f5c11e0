package dnsapi

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"

	"github.com/miekg/dns"
)

// scratch is the storage one goroutine answers UDP queries with, so that
// an answer on the fast path allocates nothing.
type scratch struct {
	name  []byte   // the question's name as text
	out   []byte   // the reply
	seen  []uint64 // a bit per instance of a draw (appendDrawn), all clear between draws
	drawn []int
	rng   *rand.Rand // for shuffles and draws: one per goroutine, so no lock and no shared state
}

func newScratch(maxUDP int) *scratch {
	return &scratch{name: make([]byte, 0, 255), out: make([]byte, 0, max(maxUDP, 2048)),
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

// fast answers the commonest question, the addresses of a group's name (an
// application, a role state, a rack) over UDP, and returns false for any
// other, which respond answers. Its reply is respond's, packed (FuzzFast
// checks it): per query it copies the question, the records of the
// group's sets, packed once per set, shuffles them in place or draws as
// many as fit, and sets the header; a name is looked up once per view.
// The reply is in sc.out, valid until sc's next use.
func (r *responder) fast(q *query, sc *scratch) ([]byte, bool) {
	if q.qclass != dns.ClassINET || q.qtype != dns.TypeA && q.qtype != dns.TypeAAAA || !r.inZone(q.name) ||
		r.anonymous != nil && !r.anonymous() {
		return nil, false
	}
	v := r.views.current()
	g := r.groupOf(v, q.name)
	if g == nil {
		return nil, false
	}
	size := dns.MinMsgSize
	if q.edns {
		size = max(dns.MinMsgSize, min(q.udpSize, r.maxUDP))
	}
	fixed := q.qend
	if q.edns {
		fixed += optLen
	}
	v6 := q.qtype == dns.TypeAAAA
	rrSize := aAnswerSize
	if v6 {
		rrSize = aaaaAnswerSize
	}
	out := startReply(sc.out, q)
	total, an, ns := g.count(v6), 0, 0
	if total == 0 {
		out, ns = r.appendSOA(out, q, v), 1
		if len(out)+fixed-q.qend > size {
			return nil, false // respond cuts it to size
		}
	} else {
		out, an = g.appendRecords(out, v6, r.ttl, (size-fixed)/rrSize, sc)
	}
	ar := 0
	if q.edns {
		out, ar = appendOPT(out, r.maxUDP, q.do), 1
	}
	finishReply(out, true, an < total, dns.RcodeSuccess, an, ns, ar)
	sc.out = out
	return out, true
}

// inZone reports whether name (lower case, fully qualified) is below the
// zone.
func (r *responder) inZone(name []byte) bool {
	n := len(name) - len(r.zone)
	return n > 0 && name[n-1] == '.' && string(name[n:]) == r.zone
}

// groupOf returns the group name (lower case, in the zone) answers, nil
// when it is no group's name or its group is empty (respond answers
// those). A name is looked up once per view.
func (r *responder) groupOf(v *view, name []byte) *group {
	v.namesMu.RLock()
	g, ok := v.names[string(name)]
	v.namesMu.RUnlock()
	if ok {
		return g
	}
	n, found := r.lookup(v, string(name))
	if !found || n.group == nil || n.group.count(false)+n.group.count(true) == 0 {
		return nil
	}
	v.namesMu.Lock()
	v.names[string(name)] = n.group
	v.namesMu.Unlock()
	return n.group
}

// appendSOA appends the zone's SOA record (soa's) as miekg/dns packs it
// compressed: its names point at the zone's labels in the question when
// they are there in the same case, else at its owner, written out.
func (r *responder) appendSOA(out []byte, q *query, v *view) []byte {
	at := q.qend - 4 - len(r.zoneWire)
	if bytes.Equal(q.msg[at:q.qend-4], r.zoneWire) {
		out = append(out, 0xc0|byte(at>>8), byte(at))
	} else {
		at = len(out)
		out = append(out, r.zoneWire...)
	}
	ptr := [2]byte{0xc0 | byte(at>>8), byte(at)}
	out = append(out, 0, byte(dns.TypeSOA), 0, dns.ClassINET)
	out = binary.BigEndian.AppendUint32(out, r.ttl)
	out = append(out, 0, 3+2+11+2+20, 2, 'n', 's')
	out = append(out, ptr[:]...)
	out = append(out, 10, 'h', 'o', 's', 't', 'm', 'a', 's', 't', 'e', 'r')
	out = append(out, ptr[:]...)
	for _, n := range [...]uint32{uint32(v.snap.Version), soaRefresh, soaRetry, soaExpire, r.ttl} {
		out = binary.BigEndian.AppendUint32(out, n)
	}
	return out
}

// appendRecords appends up to limit of g's address records of a family in
// answer order, packed, and returns out and how many it appended. It takes
// each rank's run in turn (an unranked group is one run): whole and
// shuffled while it fits, then as many as fit, drawn at random.
func (g *group) appendRecords(out []byte, v6 bool, ttl uint32, limit int, sc *scratch) ([]byte, int) {
	size := aAnswerSize
	if v6 {
		size = aaaaAnswerSize
	}
	runs := g.runs4
	if v6 {
		runs = g.runs6
	}
	if !g.ranked {
		runs = []int{g.count(v6)}
	}
	start, k := 0, 0
	for _, end := range runs {
		if k >= limit {
			break
		}
		if n := end - start; n <= limit-k {
			from := len(out)
			out = g.appendRange(out, v6, ttl, start, end)
			shuffleRecords(out[from:], size, sc.rng)
			k += n
		} else {
			out = g.appendDrawn(out, v6, ttl, start, n, limit-k, sc)
			k = limit
		}
		start = end
	}
	return out, k
}

// appendRange appends the packed records of g's instances [start, end) of
// a family, in order.
func (g *group) appendRange(out []byte, v6 bool, ttl uint32, start, end int) []byte {
	base := 0
	for _, s := range g.sets {
		w := s.packed(v6, ttl)
		size := aAnswerSize
		if v6 {
			size = aaaaAnswerSize
		}
		n := len(w) / size
		if lo, hi := max(start-base, 0), min(end-base, n); lo < hi {
			out = append(out, w[lo*size:hi*size]...)
		}
		if base += n; base >= end {
			break
		}
	}
	return out
}

// appendDrawn appends k of the n packed records of g's instances from
// start on of a family, drawn at random without repeats, in the order
// drawn. The cost is k's, not n's.
func (g *group) appendDrawn(out []byte, v6 bool, ttl uint32, start, n, k int, sc *scratch) []byte {
	size := aAnswerSize
	if v6 {
		size = aaaaAnswerSize
	}
	if words := (n + 63) / 64; len(sc.seen) < words {
		sc.seen = make([]uint64, words)
	}
	for len(sc.drawn) < k {
		i := sc.rng.IntN(n)
		if sc.seen[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		sc.seen[i/64] |= 1 << (i % 64)
		sc.drawn = append(sc.drawn, i)
		s, j := g.at(v6, start+i)
		w := s.packed(v6, ttl)
		out = append(out, w[j*size:(j+1)*size]...)
	}
	for _, i := range sc.drawn {
		sc.seen[i/64] = 0
	}
	sc.drawn = sc.drawn[:0]
	return out
}

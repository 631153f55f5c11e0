package dnsapi

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"

	"github.com/miekg/dns"
)

// The fast path reads and writes DNS messages itself, in the one form
// most queries take; wire.go holds the reading and the writing, fast.go
// what is answered. Everything it does not read is read by miekg/dns.

// Header bits of a message's third and fourth bytes (RFC 1035 4.1.1).
const (
	bitQR     = 0x80 // byte 2: a response
	maskOp    = 0x78 // byte 2: the opcode
	bitAA     = 0x04 // byte 2: authoritative
	bitTC     = 0x02 // byte 2: truncated
	bitRD     = 0x01 // byte 2: recursion desired
	bitCD     = 0x10 // byte 3: checking disabled
	headerLen = 12
	optLen    = 11 // an OPT record without options
)

// query is a UDP query in the form the fast path reads: a standard query
// (QR clear, opcode QUERY) of one question whose name is plain labels of
// letters, digits, '-' and '_', no other record but at most one OPT of
// version 0 whose options are NSID, COOKIE or PADDING (which miekg/dns
// reads without a check that could fail), and nothing after it. It is
// what most resolvers and stub resolvers send.
type query struct {
	msg     []byte // the whole message
	qend    int    // where the question ends
	name    []byte // the question's name as text, lower case, fully qualified
	qtype   uint16
	qclass  uint16
	edns    bool
	udpSize int  // the EDNS0 payload size, with edns
	do      bool // the EDNS0 DO bit, with edns
}

// parseQuery reads msg as a query of the fast path's form, the name's text
// into name's storage (give it 255 bytes of capacity and it allocates
// nothing). ok is false for any other message, which miekg/dns reads then;
// every message it accepts, miekg/dns reads to the same question and OPT.
func parseQuery(msg, name []byte) (q query, ok bool) {
	be := binary.BigEndian
	if len(msg) < headerLen || msg[2]&(bitQR|maskOp) != 0 ||
		be.Uint16(msg[4:]) != 1 || be.Uint16(msg[6:]) != 0 || be.Uint16(msg[8:]) != 0 || be.Uint16(msg[10:]) > 1 {
		return q, false
	}
	off := headerLen
	name = name[:0]
	for {
		if off >= len(msg) {
			return q, false
		}
		l := int(msg[off])
		off++
		if l == 0 {
			break
		}
		// A length over 63 is a compression pointer or a reserved form; a
		// name's labels and their lengths stay under 255 bytes, as
		// miekg/dns requires.
		if l > 63 || off+l > len(msg) || off-headerLen+l >= 255 {
			return q, false
		}
		for _, c := range msg[off : off+l] {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
				name = append(name, c)
			case c >= 'A' && c <= 'Z':
				name = append(name, c+'a'-'A')
			default:
				return q, false
			}
		}
		name = append(name, '.')
		off += l
	}
	if len(name) == 0 || off+4 > len(msg) {
		return q, false
	}
	q.msg, q.name = msg, name
	q.qtype, q.qclass = be.Uint16(msg[off:]), be.Uint16(msg[off+2:])
	off += 4
	q.qend = off
	if be.Uint16(msg[10:]) == 1 {
		// OPT: the root, TYPE 41, CLASS the payload size, TTL the extended
		// rcode, version and flags; RDATA its options.
		if off+optLen > len(msg) || msg[off] != 0 || be.Uint16(msg[off+1:]) != dns.TypeOPT || msg[off+6] != 0 {
			return q, false
		}
		q.edns, q.udpSize, q.do = true, int(be.Uint16(msg[off+3:])), msg[off+7]&0x80 != 0
		end := off + optLen + int(be.Uint16(msg[off+9:]))
		if end != len(msg) {
			return q, false
		}
		for off += optLen; off < end; {
			if off+4 > end {
				return q, false
			}
			code, n := be.Uint16(msg[off:]), int(be.Uint16(msg[off+2:]))
			if code != dns.EDNS0NSID && code != dns.EDNS0COOKIE && code != dns.EDNS0PADDING || off+4+n > end {
				return q, false
			}
			off += 4 + n
		}
	}
	return q, off == len(msg)
}

// startReply writes the reply's header and question into out (whose
// storage is reused): the query's ID, RD and CD bits and question, as
// miekg/dns's SetReply keeps them; the rest of the header is finished by
// finishReply.
func startReply(out []byte, q *query) []byte {
	out = append(out[:0], q.msg[:q.qend]...)
	out[2] = bitQR | q.msg[2]&bitRD
	out[3] = q.msg[3] & bitCD
	clear(out[6:headerLen])
	return out
}

// finishReply sets the reply's flags, rcode and section counts.
func finishReply(out []byte, aa, tc bool, rcode int, an, ns, ar int) {
	if aa {
		out[2] |= bitAA
	}
	if tc {
		out[2] |= bitTC
	}
	out[3] |= byte(rcode & 0xf)
	binary.BigEndian.PutUint16(out[6:], uint16(an))
	binary.BigEndian.PutUint16(out[8:], uint16(ns))
	binary.BigEndian.PutUint16(out[10:], uint16(ar))
}

// appendOPT appends an OPT record without options announcing size, with
// the DO bit when do is set, as miekg/dns's SetEdns0 makes it.
func appendOPT(out []byte, size int, do bool) []byte {
	flags := byte(0)
	if do {
		flags = 0x80
	}
	return append(out, 0, byte(dns.TypeOPT>>8), byte(dns.TypeOPT), byte(size>>8), byte(size), 0, 0, flags, 0, 0, 0)
}

// appendAddrRecord appends an A (IPv4) or AAAA record of a with TTL ttl,
// owned by the question's name: a compression pointer to offset 12, where
// a reply's question name always is.
func appendAddrRecord(out []byte, a netip.Addr, ttl uint32) []byte {
	t := dns.TypeA
	if a.Is6() {
		t = dns.TypeAAAA
	}
	out = append(out, 0xc0, headerLen, byte(t>>8), byte(t), 0, dns.ClassINET)
	out = binary.BigEndian.AppendUint32(out, ttl)
	ab := a.AsSlice()
	out = append(out, 0, byte(len(ab)))
	return append(out, ab...)
}

// shuffleRecords shuffles the records of b, each size bytes (an A or an
// AAAA record's), in place.
func shuffleRecords(b []byte, size int, rng *rand.Rand) {
	n := len(b) / size
	switch size {
	case aAnswerSize:
		for i := n - 1; i > 0; i-- {
			j := rng.IntN(i + 1)
			x, y := (*[aAnswerSize]byte)(b[i*size:]), (*[aAnswerSize]byte)(b[j*size:])
			*x, *y = *y, *x
		}
	case aaaaAnswerSize:
		for i := n - 1; i > 0; i-- {
			j := rng.IntN(i + 1)
			x, y := (*[aaaaAnswerSize]byte)(b[i*size:]), (*[aaaaAnswerSize]byte)(b[j*size:])
			*x, *y = *y, *x
		}
	default:
		panic("dnsapi: shuffleRecords of records that are not addresses")
	}
}

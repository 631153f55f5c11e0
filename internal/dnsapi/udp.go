package dnsapi

import (
	"encoding/binary"
	"net/netip"

	"github.com/miekg/dns"
)

// answerUDP answers one UDP query msg from src, and returns the reply (nil
// for none) and what to count of it (ok false: nothing). A query in the
// fast path's form (parseQuery) that the fast path answers costs no
// allocation; any other is read and answered by miekg/dns as its server
// would, malformed messages included. The reply is in sc.out or a buffer
// of its own, valid until sc's next use.
func (s *Server) answerUDP(msg []byte, src netip.Addr, sc *scratch) (reply []byte, o observation, ok bool) {
	q, isFast := parseQuery(msg, sc.name)
	var req *dns.Msg
	if !isFast {
		if req, reply = s.readSlow(msg); req == nil {
			return reply, o, false
		}
	}
	switch s.admit(src, true) {
	case drop:
		return nil, o, false
	case slip:
		// An empty truncated reply: the client retries over TCP.
		if isFast {
			out := startReply(sc.out, &q)
			finishReply(out, false, true, dns.RcodeSuccess, 0, 0, 0)
			return out, o, false
		}
		m := new(dns.Msg)
		m.SetReply(req)
		m.Truncated = true
		return s.pack(m, sc), o, false
	case refuse:
		if isFast {
			out := startReply(sc.out, &q)
			finishReply(out, false, false, dns.RcodeRefused, 0, 0, 0)
			return out, observation{qtype: q.qtype, question: true, rcode: dns.RcodeRefused}, true
		}
		m := new(dns.Msg)
		m.SetRcode(req, dns.RcodeRefused)
		return s.pack(m, sc), observeMsg(req, m), true
	}
	if isFast {
		if out, ok := s.resp.fast(&q, sc); ok {
			return out, observation{qtype: q.qtype, question: true, rcode: int(out[3] & 0xf), truncated: out[2]&bitTC != 0}, true
		}
		if req, reply = s.readSlow(msg); req == nil {
			return reply, o, false
		}
	}
	m := s.resp.respond(req, true)
	return s.pack(m, sc), observeMsg(req, m), true
}

// readSlow reads msg with miekg/dns as its server does: a message without
// a whole header gets nothing, a response nothing, a message of another
// form than one question of a standard query FORMERR (NOTIMP for an
// opcode other than QUERY and NOTIFY), and one that does not parse
// FORMERR and is counted malformed. req is nil then, and reply what to
// send.
func (s *Server) readSlow(msg []byte) (req *dns.Msg, reply []byte) {
	if len(msg) < headerLen {
		s.met.malformed.Inc()
		return nil, nil
	}
	be := binary.BigEndian
	dh := dns.Header{Id: be.Uint16(msg), Bits: be.Uint16(msg[2:]), Qdcount: be.Uint16(msg[4:]),
		Ancount: be.Uint16(msg[6:]), Nscount: be.Uint16(msg[8:]), Arcount: be.Uint16(msg[10:])}
	action := dns.DefaultMsgAcceptFunc(dh)
	req = new(dns.Msg)
	switch action {
	case dns.MsgIgnore:
		return nil, nil
	case dns.MsgAccept:
		err := req.Unpack(msg)
		if err == nil {
			return req, nil
		}
		s.met.malformed.Inc()
	}
	// miekg/dns's server replies with the query's own header turned into
	// a reply (Server.serveDNS), sections dropped.
	setHeader(req, dh)
	opcode := req.Opcode
	req.SetRcodeFormatError(req)
	req.Zero = false
	if action == dns.MsgRejectNotImplemented {
		req.Opcode, req.Rcode = opcode, dns.RcodeNotImplemented
	}
	req.Answer, req.Ns, req.Extra = nil, nil, nil
	b, err := req.Pack()
	if err != nil {
		return nil, nil
	}
	return nil, b
}

// setHeader sets m's header fields from dh, as miekg/dns reads them.
func setHeader(m *dns.Msg, dh dns.Header) {
	bit := func(b uint16) bool { return dh.Bits&b != 0 }
	m.Id = dh.Id
	m.Response = bit(1 << 15)
	m.Opcode = int(dh.Bits>>11) & 0xf
	m.Authoritative = bit(1 << 10)
	m.Truncated = bit(1 << 9)
	m.RecursionDesired = bit(1 << 8)
	m.RecursionAvailable = bit(1 << 7)
	m.Zero = bit(1 << 6)
	m.AuthenticatedData = bit(1 << 5)
	m.CheckingDisabled = bit(1 << 4)
	m.Rcode = int(dh.Bits & 0xf)
}

// pack packs m into sc.out's storage when it fits.
func (s *Server) pack(m *dns.Msg, sc *scratch) []byte {
	b, err := m.PackBuffer(sc.out[:cap(sc.out)])
	if err != nil {
		s.logger.Debug("dns answer does not pack", "err", err, "answer", m.String())
		return nil
	}
	return b
}

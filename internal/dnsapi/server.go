package dnsapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/heureka-project/heureka/registry"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"
)

// readSize is the largest UDP query read: enough for any honest query with
// EDNS0 options; a larger datagram is cut, fails to parse and is answered
// FORMERR.
const readSize = 8192

// Server serves the zone over UDP and TCP on one port. New has no side
// effects; Open listens; Run serves until its context ends.
type Server struct {
	cfg    Config
	logger *slog.Logger
	resp   *responder
	lim    *limiter
	met    *metrics

	pc       net.PacketConn
	ln       net.Listener
	udp, tcp *dns.Server
}

// New returns a server for cfg answering from reg. cfg.Listen must be set.
func New(cfg Config, reg *registry.Registry, logger *slog.Logger) (*Server, error) {
	if cfg.Listen == "" {
		return nil, errors.New("dns-listen: empty; DNS is off")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Server{
		cfg:    cfg,
		logger: logger.With("subsystem", "dns"),
		resp: &responder{zone: cfg.zone(), ttl: uint32(cfg.TTL / time.Second), maxUDP: cfg.MaxUDPSize,
			views: views{reg: reg}, anonymous: cfg.Anonymous},
		lim: newLimiter(cfg.Rate, cfg.Burst, cfg.MaxSources),
		met: newMetrics(),
	}, nil
}

// Open listens on UDP and TCP at the same port (with port 0, a free port
// both have free).
func (s *Server) Open() error {
	var err error
	for range 10 {
		s.pc, err = net.ListenPacket("udp", s.cfg.Listen)
		if err != nil {
			return fmt.Errorf("dns-listen %s: %w", s.cfg.Listen, err)
		}
		s.ln, err = net.Listen("tcp", s.pc.LocalAddr().String())
		if err == nil {
			break
		}
		s.pc.Close()
		if _, port, _ := net.SplitHostPort(s.cfg.Listen); port != "0" {
			return fmt.Errorf("dns-listen %s (tcp): %w", s.cfg.Listen, err)
		}
	}
	if err != nil {
		return fmt.Errorf("dns-listen %s (tcp): %w", s.cfg.Listen, err)
	}
	invalid := func([]byte, error) { s.met.malformed.Inc() }
	s.udp = &dns.Server{PacketConn: s.pc, Handler: dns.HandlerFunc(s.serve("udp")), UDPSize: readSize,
		MsgInvalidFunc: invalid}
	s.tcp = &dns.Server{Listener: netutil.LimitListener(s.ln, s.cfg.MaxTCPConns), Handler: dns.HandlerFunc(s.serve("tcp")),
		ReadTimeout: s.cfg.ReadTimeout, WriteTimeout: s.cfg.ReadTimeout, IdleTimeout: func() time.Duration { return s.cfg.IdleTimeout },
		MsgInvalidFunc: invalid}
	return nil
}

// Addr returns the address served, HOST:PORT (UDP and TCP alike).
func (s *Server) Addr() string { return s.pc.LocalAddr().String() }

// Run serves until ctx ends, then stops both listeners; the first serving
// error ends it too.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 2)
	go func() { errc <- s.udp.ActivateAndServe() }()
	go func() { errc <- s.tcp.ActivateAndServe() }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("dns: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.udp.ShutdownContext(sctx)
	_ = s.tcp.ShutdownContext(sctx)
	return err
}

// Collector returns the DNS metrics, for GET /metrics.
func (s *Server) Collector() prometheus.Collector { return s.met }

// Status is the DNS server's part of GET /v1/status, which the dashboard
// shows: where it listens, its zone and the queries answered.
func (s *Server) Status() map[string]any {
	return map[string]any{"listen": s.Addr(), "domain": s.resp.zone, "queries": s.met.total.Load()}
}

// serve is the handler for one transport: the access list, the rate
// limit (UDP), the answer, and its metrics.
func (s *Server) serve(transport string) func(dns.ResponseWriter, *dns.Msg) {
	return func(w dns.ResponseWriter, req *dns.Msg) {
		start := time.Now()
		src := remoteAddr(w.RemoteAddr())
		if transport == "udp" {
			switch s.lim.check(src) {
			case slip:
				s.met.limited.WithLabelValues("slip").Inc()
				m := new(dns.Msg)
				m.SetReply(req)
				m.Truncated = true
				_ = w.WriteMsg(m)
				return
			case drop:
				s.met.limited.WithLabelValues("drop").Inc()
				return
			}
		}
		var m *dns.Msg
		if len(s.cfg.Allow) > 0 && !slices.ContainsFunc(s.cfg.Allow, func(p netip.Prefix) bool { return p.Contains(src) }) {
			m = new(dns.Msg)
			m.SetRcode(req, dns.RcodeRefused)
		} else {
			m = s.resp.respond(req, transport == "udp")
		}
		if err := w.WriteMsg(m); err != nil {
			s.logger.Debug("dns answer not sent", "to", w.RemoteAddr().String(), "err", err)
		}
		s.met.observe(req, m, transport, time.Since(start))
	}
}

func remoteAddr(a net.Addr) netip.Addr {
	switch a := a.(type) {
	case *net.UDPAddr:
		return a.AddrPort().Addr().Unmap()
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

package dnsapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"sync"
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

	pc  *net.UDPConn
	ln  net.Listener
	tcp *dns.Server
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
		resp:   newResponder(cfg, reg),
		lim:    newLimiter(cfg.Rate, cfg.Burst, cfg.MaxSources),
		met:    newMetrics(),
	}, nil
}

// Open listens on UDP and TCP at the same port (with port 0, a free port
// both have free).
func (s *Server) Open() error {
	var err error
	for range 10 {
		var pc net.PacketConn
		pc, err = net.ListenPacket("udp", s.cfg.Listen)
		if err != nil {
			return fmt.Errorf("dns-listen %s: %w", s.cfg.Listen, err)
		}
		s.pc = pc.(*net.UDPConn)
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
	s.tcp = &dns.Server{Listener: netutil.LimitListener(s.ln, s.cfg.MaxTCPConns), Handler: dns.HandlerFunc(s.serveTCP),
		ReadTimeout: s.cfg.ReadTimeout, WriteTimeout: s.cfg.ReadTimeout, IdleTimeout: func() time.Duration { return s.cfg.IdleTimeout },
		MsgInvalidFunc: func([]byte, error) { s.met.malformed.Inc() }}
	return nil
}

// Addr returns the address served, HOST:PORT (UDP and TCP alike).
func (s *Server) Addr() string { return s.pc.LocalAddr().String() }

// Run serves until ctx ends, then stops both listeners; the first serving
// error ends it too. UDP is served by udpWorkers goroutines, each reading
// and answering on its own; TCP by miekg/dns's server.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, udpWorkers()+1)
	var wg sync.WaitGroup
	for range udpWorkers() {
		wg.Go(func() { errc <- s.serveUDP() })
	}
	go func() { errc <- s.tcp.ActivateAndServe() }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("dns: %w", err)
	}
	s.pc.Close()
	wg.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.tcp.ShutdownContext(sctx)
	return err
}

// udpWorkers is how many goroutines serve UDP: one per CPU the process
// may use. The socket reads one batch at a time whatever their number, so
// more would only take turns.
func udpWorkers() int { return runtime.GOMAXPROCS(0) }

// serveUDP reads and answers UDP queries until the socket is closed: a
// batch of the datagrams waiting at a time, their replies sent together.
func (s *Server) serveUDP() error {
	b := newBatch(batchSize, s.cfg.MaxUDPSize)
	bc, err := newBatchConn(s.pc, b)
	if err != nil {
		return err
	}
	sc := newScratch(s.cfg.MaxUDPSize)
	obs := make([]observation, len(b.in))
	counted := make([]bool, len(b.in))
	for {
		n, err := bc.readBatch()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				continue
			}
			return fmt.Errorf("udp read: %w", err)
		}
		start := time.Now()
		for i := range n {
			sc.out = b.buf[i]
			b.out[i], obs[i], counted[i] = s.answerUDP(b.in[i][:b.n[i]], b.from[i].Addr().Unmap(), sc)
			b.buf[i] = sc.out[:0]
		}
		if err := bc.writeBatch(n); err != nil {
			s.logger.Debug("dns answer not sent", "err", err)
		}
		end := time.Now()
		for i := range n {
			if !counted[i] {
				continue
			}
			// From the query's arrival where the kernel told it, so the
			// time it waited to be read counts too.
			from := start
			if at := b.at[i]; !at.IsZero() && at.Before(start) {
				from = at
			}
			s.met.observe(obs[i], "udp", end.Sub(from))
		}
	}
}

// Collector returns the DNS metrics, for GET /metrics.
func (s *Server) Collector() prometheus.Collector { return s.met }

// Status is the DNS server's part of GET /v1/status, which the dashboard
// shows: where it listens, its zone and the queries answered.
func (s *Server) Status() map[string]any {
	return map[string]any{"listen": s.Addr(), "domain": s.resp.zone, "queries": s.met.total.Load()}
}

// admit applies the rate limit (to UDP) and the access list to a query
// from src.
func (s *Server) admit(src netip.Addr, udp bool) verdict {
	if udp {
		switch v := s.lim.check(src); v {
		case slip:
			s.met.limited.WithLabelValues("slip").Inc()
			return v
		case drop:
			s.met.limited.WithLabelValues("drop").Inc()
			return v
		}
	}
	if len(s.cfg.Allow) > 0 && !slices.ContainsFunc(s.cfg.Allow, func(p netip.Prefix) bool { return p.Contains(src) }) {
		return refuse
	}
	return answer
}

// serveTCP is miekg/dns's handler for TCP: the access list, the answer,
// and its metrics.
func (s *Server) serveTCP(w dns.ResponseWriter, req *dns.Msg) {
	start := time.Now()
	var m *dns.Msg
	if s.admit(remoteAddr(w.RemoteAddr()), false) == refuse {
		m = new(dns.Msg)
		m.SetRcode(req, dns.RcodeRefused)
	} else {
		m = s.resp.respond(req, false)
	}
	if err := w.WriteMsg(m); err != nil {
		s.logger.Debug("dns answer not sent", "to", w.RemoteAddr().String(), "err", err)
	}
	s.met.observe(observeMsg(req, m), "tcp", time.Since(start))
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

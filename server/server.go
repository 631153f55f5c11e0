package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/conntime"
	"github.com/heureka-project/heureka/internal/dnsapi"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/internal/rungroup"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

// Server is the heureka server program: a registry, its replication, its
// HTTP API and the actors that run them. Tests run the real wiring through
// it on port 0.
//
// New has no side effects; Open listens and starts the actors; Close stops
// them. Once Open has returned, Registry, API and Replicator are set.
type Server struct {
	Config Config
	Logger *slog.Logger

	Registry   *registry.Registry
	API        *httpapi.Server
	Replicator *replication.Replicator
	// DNS is the DNS server, nil when Config.DNS.Listen is empty.
	DNS    *dnsapi.Server
	NodeID string

	// Auth is the credentials store, nil when authentication is off.
	Auth *auth.Store

	ln       net.Listener // watched by conns
	http     *http.Server
	conns    *conntime.Watchdog
	run      *rungroup.Running // the actors; nil before Open
	opened   bool
	cert     *auth.KeyPair // nil without TLS
	peerCert *auth.KeyPair // nil without a client certificate for peers
	peerAuth atomic.Value  // string: the Authorization header for peers
	reloadMu sync.Mutex
}

// New returns a Server for cfg that logs to logger (slog.Default when nil).
// It starts nothing.
func New(cfg Config, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	return &Server{Config: cfg, Logger: logger}
}

// Open validates the config, builds the registry, replication and the HTTP
// API, listens (so a busy port is an error here, not later), logs the one
// line `heureka server listening addr=HOST:PORT` and starts the actors.
func (s *Server) Open() error {
	if s.opened {
		return errors.New("server: already opened")
	}
	if err := s.Config.Validate(); err != nil {
		return err
	}
	sec, err := s.loadSecurity()
	if err != nil {
		return err
	}
	rcfg := s.Config.Registry
	rcfg.Logger = s.Logger // the registry adds subsystem=registry
	reg, err := registry.New(rcfg)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	ln, err := net.Listen("tcp", s.Config.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer func() {
		if !s.opened {
			ln.Close()
		}
	}()
	s.NodeID = newNodeID()
	rep, err := s.newReplication(reg, ln.Addr(), sec)
	if err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	dnsSrv, err := s.newDNS(reg, sec.store)
	if err != nil {
		return err
	}
	api, conns, err := s.newAPI(reg, rep, dnsSrv, sec.store)
	if err != nil {
		return err
	}
	if dnsSrv != nil {
		if err := dnsSrv.Open(); err != nil { // last, so nothing after it can fail and leave it open
			return err
		}
	}
	s.Registry, s.API, s.Replicator, s.Auth, s.ln, s.conns, s.DNS = reg, api, rep, sec.store, conns.Listener(ln), conns, dnsSrv
	s.http = &http.Server{
		Handler:        api.Handler(),
		MaxHeaderBytes: 64 << 10,
		TLSConfig:      sec.serverTLS,
		ErrorLog:       slog.NewLogLogger(s.Logger.With("subsystem", "http").Handler(), slog.LevelWarn),
	}
	conns.Guard(s.http)
	s.opened = true
	attrs := []any{"addr", ln.Addr().String(), "node", s.NodeID, "peers", len(s.Config.Replication.Peers),
		"tls", sec.serverTLS != nil, "auth", sec.store != nil}
	if dnsSrv != nil {
		attrs = append(attrs, "dns", dnsSrv.Addr(), "dns_domain", s.Config.DNS.Domain)
	}
	s.Logger.Info("heureka server listening", attrs...)
	s.warnIfExposed(ln.Addr(), sec.store != nil, sec.serverTLS != nil)
	s.start(sec.store, sec.serverTLS != nil)
	return nil
}

// security is what the server reads from its credential and certificate
// files at Open.
type security struct {
	store              *auth.Store // nil: no authentication
	serverTLS, peerTLS *tls.Config // nil: plain HTTP; the system's roots
}

// loadSecurity reads the credentials, the server's and the peers' TLS
// files, and the secret sent to peers.
func (s *Server) loadSecurity() (security, error) {
	var sec security
	if s.Config.AuthFile != "" {
		sec.store = auth.NewStore(s.Config.AuthFile, s.Logger)
		if err := sec.store.Load(); err != nil {
			return sec, heureka.InvalidConfig("AuthFile", nil, "%v", err)
		}
	}
	var err error
	if sec.serverTLS, err = s.loadTLS(); err != nil {
		return sec, err
	}
	if sec.peerTLS, err = s.loadPeerTLS(); err != nil {
		return sec, err
	}
	s.peerAuth.Store("")
	return sec, s.loadPeerAuth()
}

// newReplication builds replication over reg, this server's own URL the
// listener's address unless the config names one, and makes it reg's
// forwarder.
func (s *Server) newReplication(reg *registry.Registry, addr net.Addr, sec security) (*replication.Replicator, error) {
	pcfg := s.Config.Replication
	if pcfg.SelfURL == "" {
		scheme := "http"
		if sec.serverTLS != nil {
			scheme = "https"
		}
		pcfg.SelfURL = scheme + "://" + addr.String() + "/eureka"
	}
	pcfg.NodeID = s.NodeID
	pcfg.TLS = sec.peerTLS
	pcfg.Authorization = func() string { return s.peerAuth.Load().(string) }
	pcfg.Logger = s.Logger
	rep, err := replication.New(pcfg, reg)
	if err != nil {
		return nil, err
	}
	reg.SetForwarder(rep.Forward)
	return rep, nil
}

// newDNS builds the DNS server, nil when DNS.Listen is empty. With
// credentials, it answers only what an anonymous read may see.
func (s *Server) newDNS(reg *registry.Registry, store *auth.Store) (*dnsapi.Server, error) {
	if s.Config.DNS.Listen == "" {
		return nil, nil
	}
	dcfg := s.Config.DNS
	if store != nil {
		dcfg.Anonymous = func() bool {
			_, err := store.Authorize(nil, auth.Request{Action: auth.Read, Verb: "read the registry"})
			return err == nil
		}
	}
	return dnsapi.New(dcfg, reg, s.Logger)
}

// newAPI builds the HTTP API over reg, with replication's and DNS's
// status and metrics, and the connections' bounds.
func (s *Server) newAPI(reg *registry.Registry, rep *replication.Replicator, dnsSrv *dnsapi.Server, store *auth.Store) (*httpapi.Server, *conntime.Watchdog, error) {
	hcfg := s.Config.HTTP
	hcfg.Limits = s.Config.Registry.Limits
	hcfg.NodeID = s.NodeID
	hcfg.Ready = rep.Ready
	hcfg.Status = func() map[string]any {
		st := map[string]any{"peers": rep.Status(), "startupSync": rep.SyncResult()}
		if dnsSrv != nil {
			st["dns"] = dnsSrv.Status()
		}
		return st
	}
	hcfg.Collectors = append(hcfg.Collectors[:len(hcfg.Collectors):len(hcfg.Collectors)], rep.Collector())
	if dnsSrv != nil {
		hcfg.Collectors = append(hcfg.Collectors, dnsSrv.Collector())
	}
	hcfg.Auth = store
	conns, err := conntime.New(s.Config.ConnLimits(), s.Logger.With("subsystem", "http"))
	if err != nil {
		return nil, nil, err
	}
	hcfg.Collectors = append(hcfg.Collectors, conns.Collector())
	api, err := httpapi.New(hcfg, reg, s.Logger)
	return api, conns, err
}

// start runs the actors in a rungroup. The first to return, with or
// without an error, stops the others: a server missing its registry loop
// or its listener is not a server.
func (s *Server) start(store *auth.Store, tlsOn bool) {
	g := rungroup.New(context.Background())
	g.Go("registry", s.Registry.Run)
	g.Go("replication", s.Replicator.Run)
	g.Go("connections", s.conns.Run)
	if s.DNS != nil {
		g.Go("dns", s.DNS.Run)
	}
	// Watchers would otherwise hold Shutdown up.
	g.HTTP(s.http, s.ln, tlsOn, s.Config.ShutdownTimeout, s.Logger, s.API.CloseStreams)
	if p := s.Config.StormGCPercent; p > 0 {
		g.Go("collector", func(ctx context.Context) error {
			collectLessInStorms(ctx, s.Registry.Storming, p, stormCheck, stormCalmChecks, debug.SetGCPercent, s.Logger)
			return nil
		})
	}
	if store != nil {
		g.Go("credentials", func(ctx context.Context) error { return store.Watch(ctx, s.Config.AuthPoll) })
	}
	s.run = g.Start()
}

// loadTLS builds the server's TLS configuration, nil without TLSCert.
func (s *Server) loadTLS() (*tls.Config, error) {
	tc, kp, err := auth.ServerTLS(s.Config.TLSCert, s.Config.TLSKey, s.Config.TLSClientCA)
	s.cert = kp
	return tc, err
}

// loadPeerTLS builds the TLS configuration for calls to peers, nil when
// nothing is configured (system roots, no client certificate).
func (s *Server) loadPeerTLS() (*tls.Config, error) {
	if s.Config.PeerCA == "" && s.Config.PeerCert == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.Config.PeerCA != "" {
		pool, err := auth.LoadCertPool(s.Config.PeerCA)
		if err != nil {
			return nil, heureka.InvalidConfig("PeerCA", nil, "%v", err)
		}
		tc.RootCAs = pool
	}
	if s.Config.PeerCert != "" {
		kp, err := auth.LoadKeyPair(s.Config.PeerCert, s.Config.PeerKey)
		if err != nil {
			return nil, heureka.InvalidConfig("PeerCert", nil, "%v", err)
		}
		s.peerCert = kp
		tc.GetClientCertificate = kp.GetClientCertificate
	}
	return tc, nil
}

// loadPeerAuth reads the credentials sent to peers; on error the ones in
// use stay.
func (s *Server) loadPeerAuth() error {
	secret := s.Config.PeerAuth
	if s.Config.PeerAuthFile != "" {
		b, err := os.ReadFile(s.Config.PeerAuthFile)
		if err != nil {
			return heureka.InvalidConfig("PeerAuthFile", nil, "%v", err)
		}
		secret = string(b)
	}
	if secret == "" {
		return nil
	}
	h, err := auth.AuthorizationHeader(secret)
	if err != nil {
		return heureka.InvalidConfig("PeerAuthFile", s.Config.PeerAuthFile, "%v", err)
	}
	s.peerAuth.Store(h)
	return nil
}

// Reload reads the credentials file, the TLS key pairs and the peer
// credentials again, as `heureka server` does on SIGHUP. What fails to load keeps its old value;
// every failure is logged and returned.
func (s *Server) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if !s.opened {
		return errors.New("server: not open")
	}
	var errs []error
	if s.Auth != nil {
		errs = append(errs, s.Auth.Load())
	}
	if s.cert != nil {
		errs = append(errs, s.cert.Reload())
	}
	if s.peerCert != nil {
		errs = append(errs, s.peerCert.Reload())
	}
	errs = append(errs, s.loadPeerAuth())
	err := errors.Join(errs...)
	if err != nil {
		s.Logger.Error("reload incomplete; what failed keeps its previous value", "err", err)
	} else {
		s.Logger.Info("reloaded credentials and certificates")
	}
	return err
}

// warnIfExposed says, loudly, when the registry can be written by anyone
// who reaches it, or when credentials cross the network in clear.
func (s *Server) warnIfExposed(addr net.Addr, authOn, tlsOn bool) {
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return
	}
	if !authOn {
		s.Logger.Warn("INSECURE: listening on a non-loopback address without authentication: anyone who reaches " +
			addr.String() + " can register instances, deregister them and take them out of service, and so steer " +
			"where HDFS writes data. Give --auth-file (and --tls-cert/--tls-key), or listen on 127.0.0.1.")
		return
	}
	if !tlsOn {
		s.Logger.Warn("INSECURE: authentication is on but TLS is off: passwords and tokens cross the network in clear. " +
			"Give --tls-cert and --tls-key.")
	}
}

// Addr is the address the server listens on, nil before Open.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Done is closed when the server has begun to stop: Close was called or an
// actor returned (the first failure stops the rest). Before Open it is nil.
func (s *Server) Done() <-chan struct{} { return s.run.Done() }

// Close stops the server and returns the first actor failure, if any. Its
// steps: stop accepting connections and let in-flight requests finish
// (bounded by Config.ShutdownTimeout), stop the registry's loop, and wait for
// every actor. If ctx ends first, connections are closed at once and ctx's
// error is returned. Close is idempotent; calling it before Open is a no-op.
func (s *Server) Close(ctx context.Context) error {
	return s.run.Close(ctx, func() { _ = s.http.Close() })
}

// newNodeID returns a random identifier for this server process.
func newNodeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

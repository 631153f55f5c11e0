package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

func init() {
	addCommand(&command{
		name:    "server",
		summary: "run the Eureka-compatible registry server",
		run:     runServer,
	})
}

// ServerConfig is what `heureka server` is told on its command line.
type ServerConfig struct {
	// Listen is the TCP address to serve on; port 0 picks a free port.
	Listen string
	// SelfPreservation is the registry's protection mode.
	SelfPreservation registry.Mode
	// DeltaRetention is how long a change stays in /apps/delta.
	DeltaRetention time.Duration
	// ShutdownTimeout bounds the graceful part of a stop: in-flight requests
	// get this long to finish before connections are closed.
	ShutdownTimeout time.Duration
	// Peers are the other registry servers' Eureka base URLs; this server's
	// own URL may be among them.
	Peers []string
	// SelfURL is this server's base URL as its peers know it; by default
	// http://LISTEN/eureka.
	SelfURL string
	// SyncTimeout bounds the wait at start for a peer to copy from.
	SyncTimeout time.Duration

	// AuthFile is the credentials file (JSON, see internal/auth); empty
	// turns authentication off. AuthPoll is how often it is checked for
	// changes; it is also read again on SIGHUP (Server.Reload).
	AuthFile string
	AuthPoll time.Duration
	// TLSCert and TLSKey are PEM files to serve HTTPS with, read again on
	// SIGHUP. TLSClientCA, when set, verifies the client certificates that
	// clients offer (mutual TLS); a verified certificate authenticates as
	// the user named by its subject CN if that user has "certificate": true.
	TLSCert, TLSKey, TLSClientCA string
	// PeerCA verifies https peers (default: the system's roots); PeerCert
	// and PeerKey are the client certificate shown to peers, read again on
	// SIGHUP.
	PeerCA, PeerCert, PeerKey string
	// PeerAuthFile holds the credentials sent to peers, one line:
	// user:password or a token; read again on SIGHUP. PeerAuth is the same
	// given directly (runServer takes it from $HEUREKA_PEER_AUTH, never
	// from a flag, to keep it out of process listings).
	PeerAuthFile, PeerAuth string
	// ReadTimeout bounds reading a whole request, body included, against
	// slow senders; watch streams lift it once their request is read.
	ReadTimeout time.Duration
	// WriteRate (writes a second, 0 for no limit), WriteBurst and
	// MaxWatchersPerClient (0 for no per-client bound) are the per-client
	// limits of httpapi.Config.
	WriteRate            float64
	WriteBurst           int
	MaxWatchersPerClient int
}

// DefaultServerConfig returns the defaults, each with its reason.
func DefaultServerConfig() ServerConfig {
	reg := registry.DefaultConfig()
	return ServerConfig{
		// Eureka's customary port; loopback so that a bare `heureka server`
		// exposes nothing by accident.
		Listen:           "127.0.0.1:8761",
		SelfPreservation: reg.SelfPreservation,
		DeltaRetention:   reg.DeltaRetention,
		// Requests are short; a stop should not hang a deploy.
		ShutdownTimeout: 10 * time.Second,
		SyncTimeout:     replication.DefaultConfig().SyncTimeout,
		// An edited credentials file is in force within seconds, without
		// a signal; a stat every 5 s costs nothing.
		AuthPoll: 5 * time.Second,
		// Bodies are at most 1 MiB: 30 s is 35 KB/s, slower than any
		// honest client on a data-centre network.
		ReadTimeout:          30 * time.Second,
		WriteRate:            httpapi.DefaultConfig().WriteRate,
		WriteBurst:           httpapi.DefaultConfig().WriteBurst,
		MaxWatchersPerClient: httpapi.DefaultConfig().MaxWatchersPerClient,
	}
}

// Validate checks c, naming the field at fault.
func (c ServerConfig) Validate() error {
	switch {
	case c.Listen == "":
		return errors.New("listen: address is empty")
	case c.SelfPreservation != registry.ModeOff && c.SelfPreservation != registry.ModeEureka &&
		c.SelfPreservation != registry.ModeSmart:
		return fmt.Errorf("self-preservation: %q is not one of off, eureka, smart", c.SelfPreservation)
	case c.DeltaRetention <= 0:
		return fmt.Errorf("delta-retention: %v must be positive", c.DeltaRetention)
	case c.ShutdownTimeout <= 0:
		return fmt.Errorf("shutdown-timeout: %v must be positive", c.ShutdownTimeout)
	case c.SyncTimeout <= 0:
		return fmt.Errorf("sync-timeout: %v must be positive", c.SyncTimeout)
	case c.AuthFile != "" && c.AuthPoll <= 0:
		return fmt.Errorf("auth-poll: %v must be positive", c.AuthPoll)
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("tls-cert, tls-key: give both or neither")
	case c.TLSClientCA != "" && c.TLSCert == "":
		return errors.New("tls-client-ca: needs tls-cert and tls-key (mutual TLS is TLS first)")
	case (c.PeerCert == "") != (c.PeerKey == ""):
		return errors.New("peer-cert, peer-key: give both or neither")
	case c.PeerAuthFile != "" && c.PeerAuth != "":
		return errors.New("peer-auth-file: $HEUREKA_PEER_AUTH is set too; give one")
	case c.ReadTimeout <= 0:
		return fmt.Errorf("read-timeout: %v must be positive", c.ReadTimeout)
	case c.WriteRate < 0:
		return fmt.Errorf("write-rate: %v must not be negative (0 turns the limit off)", c.WriteRate)
	case c.WriteRate > 0 && c.WriteBurst < 1:
		return fmt.Errorf("write-burst: %d must be at least 1", c.WriteBurst)
	case c.MaxWatchersPerClient < 0:
		return fmt.Errorf("max-watchers-per-client: %d must not be negative (0: no per-client bound)", c.MaxWatchersPerClient)
	}
	for _, p := range c.Peers {
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("peers: %q is not a URL like http://HOST:PORT/eureka", p)
		}
		if u.User != nil {
			return fmt.Errorf("peers: %q carries credentials; put them in --peer-auth-file or $HEUREKA_PEER_AUTH", u.Redacted())
		}
	}
	if c.PeerAuth != "" {
		if _, err := auth.AuthorizationHeader(c.PeerAuth); err != nil {
			return fmt.Errorf("HEUREKA_PEER_AUTH: %v", err)
		}
	}
	return nil
}

// Server is the heureka server program: a registry, its HTTP API and the
// actors that run them. Tests run the real wiring through it on port 0.
//
// New has no side effects; Open listens and starts the actors; Close stops
// them. Once Open has returned, Registry and API are set.
type Server struct {
	Config ServerConfig
	Logger *slog.Logger

	Registry   *registry.Registry
	API        *httpapi.Server
	Replicator *replication.Replicator
	NodeID     string

	// Auth is the credentials store, nil when authentication is off.
	Auth *auth.Store

	ln       net.Listener
	http     *http.Server
	group    *group
	opened   bool
	cert     *auth.KeyPair // nil without TLS
	peerCert *auth.KeyPair // nil without a client certificate for peers
	peerAuth atomic.Value  // string: the Authorization header for peers
	reloadMu sync.Mutex

	closeOnce sync.Once
	closeErr  error
}

// NewServer returns a Server for cfg that logs to logger (slog.Default when
// nil). It starts nothing.
func NewServer(cfg ServerConfig, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	return &Server{Config: cfg, Logger: logger}
}

// Open validates the config, builds the registry and the HTTP API, listens
// (so a busy port is an error here, not later), logs the one line
// `heureka server listening addr=HOST:PORT` and starts the actors.
func (s *Server) Open() error {
	if s.opened {
		return errors.New("server: already opened")
	}
	if err := s.Config.Validate(); err != nil {
		return err
	}

	var store *auth.Store
	if s.Config.AuthFile != "" {
		store = auth.NewStore(s.Config.AuthFile, s.Logger)
		if err := store.Load(); err != nil {
			return fmt.Errorf("auth-file: %w", err)
		}
	}
	serverTLS, err := s.loadTLS()
	if err != nil {
		return err
	}
	peerTLS, err := s.loadPeerTLS()
	if err != nil {
		return err
	}
	s.peerAuth.Store("")
	if err := s.loadPeerAuth(); err != nil {
		return err
	}

	rcfg := registry.DefaultConfig()
	rcfg.SelfPreservation = s.Config.SelfPreservation
	rcfg.DeltaRetention = s.Config.DeltaRetention
	rcfg.Logger = s.Logger // the registry adds subsystem=registry
	reg, err := registry.New(rcfg)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}

	ln, err := net.Listen("tcp", s.Config.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s.NodeID = newNodeID()
	pcfg := replication.DefaultConfig()
	pcfg.Peers = s.Config.Peers
	pcfg.SelfURL = s.Config.SelfURL
	if pcfg.SelfURL == "" {
		scheme := "http"
		if serverTLS != nil {
			scheme = "https"
		}
		pcfg.SelfURL = scheme + "://" + ln.Addr().String() + "/eureka"
	}
	pcfg.NodeID = s.NodeID
	pcfg.SyncTimeout = s.Config.SyncTimeout
	pcfg.TLS = peerTLS
	pcfg.Authorization = func() string { return s.peerAuth.Load().(string) }
	pcfg.Logger = s.Logger
	rep, err := replication.New(pcfg, reg)
	if err != nil {
		ln.Close()
		return fmt.Errorf("replication: %w", err)
	}
	reg.SetForwarder(rep.Forward)

	hcfg := httpapi.DefaultConfig()
	hcfg.Limits = rcfg.Limits
	hcfg.NodeID = s.NodeID
	hcfg.Ready = rep.Ready
	hcfg.Status = func() map[string]any {
		return map[string]any{"peers": rep.Status(), "startupSync": rep.SyncResult()}
	}
	hcfg.Auth = store
	hcfg.WriteRate = s.Config.WriteRate
	if hcfg.WriteRate == 0 {
		hcfg.WriteRate = -1 // off
	}
	hcfg.WriteBurst = s.Config.WriteBurst
	hcfg.MaxWatchersPerClient = s.Config.MaxWatchersPerClient
	if hcfg.MaxWatchersPerClient == 0 {
		hcfg.MaxWatchersPerClient = -1 // no per-client bound
	}
	api := httpapi.New(hcfg, reg, s.Logger)
	s.Registry, s.API, s.Replicator, s.Auth, s.ln = reg, api, rep, store, ln
	s.http = &http.Server{
		Handler: api.Handler(),
		// Slow clients: headers within 10 s, a whole request within
		// ReadTimeout. Watch streams lift the read deadline once their
		// request is read. There is no WriteTimeout, which would cut every
		// stream: httpapi sets a deadline on each answer and on each write
		// to a stream instead.
		ReadHeaderTimeout: min(10*time.Second, s.Config.ReadTimeout),
		ReadTimeout:       s.Config.ReadTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         serverTLS,
		ErrorLog:          slog.NewLogLogger(s.Logger.With("subsystem", "http").Handler(), slog.LevelWarn),
	}
	s.opened = true
	s.Logger.Info("heureka server listening", "addr", ln.Addr().String(), "node", s.NodeID, "peers", len(s.Config.Peers),
		"tls", serverTLS != nil, "auth", store != nil)
	s.warnIfExposed(ln.Addr(), store != nil, serverTLS != nil)

	s.group = newGroup(context.Background())
	s.group.Go("registry", reg.Run)
	s.group.Go("replication", rep.Run)
	s.group.Go("http", func(context.Context) error {
		var err error
		if serverTLS != nil {
			err = s.http.ServeTLS(ln, "", "") // the certificate comes from TLSConfig
		} else {
			err = s.http.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if store != nil {
		s.group.Go("credentials", func(ctx context.Context) error { return store.Watch(ctx, s.Config.AuthPoll) })
	}
	s.group.Go("stopper", func(ctx context.Context) error {
		<-ctx.Done()
		api.CloseStreams() // watchers would otherwise hold Shutdown up
		sctx, cancel := context.WithTimeout(context.Background(), s.Config.ShutdownTimeout)
		defer cancel()
		if err := s.http.Shutdown(sctx); err != nil {
			s.Logger.Warn("graceful shutdown cut short; closing connections", "err", err)
			return s.http.Close()
		}
		return nil
	})
	s.group.seal()
	return nil
}

// loadTLS builds the server's TLS configuration, nil without TLSCert.
func (s *Server) loadTLS() (*tls.Config, error) {
	if s.Config.TLSCert == "" {
		return nil, nil
	}
	kp, err := auth.LoadKeyPair(s.Config.TLSCert, s.Config.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("tls-cert: %w", err)
	}
	s.cert = kp
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.GetCertificate}
	if s.Config.TLSClientCA != "" {
		pool, err := auth.LoadCertPool(s.Config.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("tls-client-ca: %w", err)
		}
		// Agents and Eureka clients without certificates still connect
		// and authenticate otherwise; a certificate offered must verify.
		tc.ClientCAs, tc.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return tc, nil
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
			return nil, fmt.Errorf("peer-ca: %w", err)
		}
		tc.RootCAs = pool
	}
	if s.Config.PeerCert != "" {
		kp, err := auth.LoadKeyPair(s.Config.PeerCert, s.Config.PeerKey)
		if err != nil {
			return nil, fmt.Errorf("peer-cert: %w", err)
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
			return fmt.Errorf("peer-auth-file: %w", err)
		}
		secret = string(b)
	}
	if secret == "" {
		return nil
	}
	h, err := auth.AuthorizationHeader(secret)
	if err != nil {
		return fmt.Errorf("peer-auth-file %s: %w", s.Config.PeerAuthFile, err)
	}
	s.peerAuth.Store(h)
	return nil
}

// Reload reads the credentials file, the TLS key pairs and the peer
// credentials again, as on SIGHUP. What fails to load keeps its old value;
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
func (s *Server) Done() <-chan struct{} {
	if s.group == nil {
		return nil
	}
	return s.group.ctx.Done()
}

// Close stops the server and returns the first actor failure, if any. Its
// steps: stop accepting connections and let in-flight requests finish
// (bounded by Config.ShutdownTimeout), stop the registry's loop, and wait for
// every actor. If ctx ends first, connections are closed at once and ctx's
// error is returned. Close is idempotent; calling it before Open is a no-op.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.group == nil {
			return
		}
		s.group.stop()
		select {
		case <-s.group.done:
			s.closeErr = s.group.firstErr()
		case <-ctx.Done():
			_ = s.http.Close()
			s.closeErr = ctx.Err()
		}
	})
	return s.closeErr
}

// runServer is `heureka server`: parse flags, open, wait for SIGINT/SIGTERM
// or an actor's failure, and stop gracefully.
func runServer(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg := DefaultServerConfig()
	fs := flag.NewFlagSet("heureka server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "TCP `address` to serve the Eureka API on")
	logFormat := fs.String("log-format", "text", "log format: text or json (logs go to stderr)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	mode := fs.String("self-preservation", string(cfg.SelfPreservation), "self-preservation mode: off, eureka or smart")
	fs.DurationVar(&cfg.DeltaRetention, "delta-retention", cfg.DeltaRetention, "how long a change stays in /apps/delta")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long in-flight requests may take to finish on stop")
	peers := fs.String("peers", "", "comma-separated Eureka base `URLs` of the other registry servers (this server's own may be listed)")
	fs.StringVar(&cfg.SelfURL, "self-url", "", "this server's base `URL` as peers know it (default http://LISTEN/eureka)")
	fs.DurationVar(&cfg.SyncTimeout, "sync-timeout", cfg.SyncTimeout, "how long to wait at start for a peer to copy the registry from")
	fs.StringVar(&cfg.AuthFile, "auth-file", "", "credentials `file` (JSON; see 'heureka auth'): turns authentication on; reloaded on change and on SIGHUP")
	fs.DurationVar(&cfg.AuthPoll, "auth-poll", cfg.AuthPoll, "how often to check the credentials file for changes")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate `file` to serve HTTPS with (reloaded on SIGHUP)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "PEM private key `file` for --tls-cert")
	fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", "", "PEM CA `file`: verify client certificates (mutual TLS); a verified certificate whose CN names a user with \"certificate\": true authenticates as that user")
	fs.StringVar(&cfg.PeerCA, "peer-ca", "", "PEM CA `file` that signs the peers' certificates (default: the system's roots)")
	fs.StringVar(&cfg.PeerCert, "peer-cert", "", "PEM client certificate `file` to show peers (mutual TLS; reloaded on SIGHUP)")
	fs.StringVar(&cfg.PeerKey, "peer-key", "", "PEM private key `file` for --peer-cert")
	fs.StringVar(&cfg.PeerAuthFile, "peer-auth-file", "", "`file` holding the credentials sent to peers, user:password or a token (or set $HEUREKA_PEER_AUTH); reloaded on SIGHUP")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", cfg.ReadTimeout, "how long a client may take to send a whole request (watch streams are not cut by it)")
	fs.Float64Var(&cfg.WriteRate, "write-rate", cfg.WriteRate, "writes per second allowed to each client (user@address, or address); 0 turns the limit off")
	fs.IntVar(&cfg.WriteBurst, "write-burst", cfg.WriteBurst, "writes a client may send at once above --write-rate")
	fs.IntVar(&cfg.MaxWatchersPerClient, "max-watchers-per-client", cfg.MaxWatchersPerClient, "watch and event streams one client may hold open; 0 for no per-client bound")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: heureka server [flags]\n\n")
		fmt.Fprintf(fs.Output(), "Runs the registry and serves the Eureka REST API under /eureka/v2, /eureka and /,\n")
		fmt.Fprintf(fs.Output(), "plus /healthz, /readyz and /metrics. Request bodies are limited to 1 MiB.\n")
		fmt.Fprintf(fs.Output(), "Authentication is off unless --auth-file is given; SIGHUP reloads credentials and certificates.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Sprintf("server: unexpected argument %q", fs.Arg(0))}
	}
	cfg.SelfPreservation = registry.Mode(*mode)
	cfg.PeerAuth = os.Getenv("HEUREKA_PEER_AUTH")
	for p := range strings.SplitSeq(*peers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.Peers = append(cfg.Peers, p)
		}
	}
	if err := cfg.Validate(); err != nil {
		return &usageError{"server: " + err.Error()}
	}
	logger, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		return &usageError{"server: " + err.Error()}
	}

	// The registry's live state is most of this process's heap, so the
	// default GC target (heap may grow to twice the live data) costs more
	// memory than it saves CPU: at 100k instances GOGC=50 cuts resident
	// memory from ~3.1 to ~2.7 KB per instance (BenchmarkServerMemory100k).
	// An explicit GOGC still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	srv := NewServer(cfg, logger)
	if err := srv.Open(); err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				logger.Info("SIGHUP: reloading credentials and certificates")
				_ = srv.Reload() // logged
			case <-srv.Done():
				return
			}
		}
	}()
	select {
	case <-ctx.Done():
		logger.Info("heureka server stopping", "reason", context.Cause(ctx))
	case <-srv.Done():
	}
	stop() // a second signal now kills the process the default way

	cctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout+5*time.Second)
	defer cancel()
	if err := srv.Close(cctx); err != nil {
		return err
	}
	logger.Info("heureka server stopped")
	return nil
}

// newNodeID returns a random identifier for this server process.
func newNodeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newLogger builds the process's logger on w.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log-level: %q is not one of debug, info, warn, error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log-format: %q is not one of text, json", format)
}

// group runs actors until the first one returns; then its context is
// cancelled so the others return too. err is the first actor's error, if
// any; done is closed, after seal, when every actor has returned.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}

	mu  sync.Mutex
	err error
}

func newGroup(parent context.Context) *group {
	ctx, cancel := context.WithCancel(parent)
	return &group{ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Go starts fn as the actor called name. Call it only before seal.
func (g *group) Go(name string, fn func(ctx context.Context) error) {
	g.wg.Go(func() {
		defer g.cancel()
		if err := fn(g.ctx); err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = fmt.Errorf("%s: %w", name, err)
			}
			g.mu.Unlock()
		}
	})
}

// seal closes done once every actor started so far has returned.
func (g *group) seal() {
	go func() {
		g.wg.Wait()
		close(g.done)
	}()
}

// stop asks every actor to return.
func (g *group) stop() { g.cancel() }

// firstErr is the first actor's error; read it after done is closed.
func (g *group) firstErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

package main

import (
	"context"
	"crypto/rand"
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
	"syscall"
	"time"

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
	}
	for _, p := range c.Peers {
		if u, err := url.Parse(p); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("peers: %q is not a URL like http://HOST:PORT/eureka", p)
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

	ln     net.Listener
	http   *http.Server
	group  *group
	opened bool

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
		pcfg.SelfURL = "http://" + ln.Addr().String() + "/eureka"
	}
	pcfg.NodeID = s.NodeID
	pcfg.SyncTimeout = s.Config.SyncTimeout
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
	api := httpapi.New(hcfg, reg, s.Logger)
	s.Registry, s.API, s.Replicator, s.ln = reg, api, rep, ln
	s.http = &http.Server{
		Handler:           api.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.Logger.With("subsystem", "http").Handler(), slog.LevelWarn),
	}
	s.opened = true
	s.Logger.Info("heureka server listening", "addr", ln.Addr().String(), "node", s.NodeID, "peers", len(s.Config.Peers))

	s.group = newGroup(context.Background())
	s.group.Go("registry", reg.Run)
	s.group.Go("replication", rep.Run)
	s.group.Go("http", func(context.Context) error {
		if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
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
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: heureka server [flags]\n\n")
		fmt.Fprintf(fs.Output(), "Runs the registry and serves the Eureka REST API under /eureka/v2, /eureka and /,\n")
		fmt.Fprintf(fs.Output(), "plus /healthz, /readyz and /metrics. Request bodies are limited to 1 MiB.\n\nFlags:\n")
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

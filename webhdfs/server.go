package webhdfs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/rungroup"
)

// ServerConfig is the gateway program: a Gateway over a watching cache of
// the registry, served over HTTP or HTTPS with its metrics.
type ServerConfig struct {
	// Gateway is the gateway's own configuration. The Server sets its
	// NameNodes, DataNodes (from the cache), Registerer and Logger;
	// Gateway.Auth, when set, is also reloaded every AuthPoll.
	Gateway Config
	// Registry reads the registry the cluster's agents register in.
	Registry client.Config
	// Listen is the TCP address to serve on.
	Listen string
	// TLS, when set, serves HTTPS with it (its certificates come from its
	// GetCertificate or Certificates).
	TLS *tls.Config
	// AuthPoll is how often Gateway.Auth's file is checked for changes.
	AuthPoll time.Duration
	// ReadHeaderTimeout bounds a request's header, and IdleTimeout a kept
	// connection between requests. A request's body and its answer each
	// get Gateway.RequestTimeout plus TransferSlack.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	TransferSlack     time.Duration
	// ShutdownTimeout bounds how long requests in flight may take to
	// finish once the server is closed.
	ShutdownTimeout time.Duration
}

// DefaultServerConfig returns the defaults, each with its reason.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		Gateway:  DefaultConfig(),
		Registry: client.DefaultConfig(),
		// HttpFS's port, on loopback: a gateway reachable from elsewhere
		// is the operator's choice, made on purpose.
		Listen: "127.0.0.1:14000",
		// The server's default: a changed credentials file is in force
		// within seconds, for a stat call each time.
		AuthPoll: 5 * time.Second,
		// A client that has not sent its header in 10 s is gone or hostile.
		ReadHeaderTimeout: 10 * time.Second,
		// Clients come back in bursts; two minutes keeps their
		// connections across a pause without holding dead ones for long.
		IdleTimeout: 2 * time.Minute,
		// A request's own bound is RequestTimeout (to the NameNode); 10 s
		// more lets the caller send its (small) body and read the answer
		// on a slow link.
		TransferSlack: 10 * time.Second,
		// Requests in flight are metadata calls of milliseconds, bounded
		// by RequestTimeout; 10 s lets nearly every one finish.
		ShutdownTimeout: 10 * time.Second,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError (the Gateway's own as Gateway.FIELD).
func (c ServerConfig) Validate() error {
	if c.Listen == "" {
		return heureka.InvalidConfig("Listen", nil, "is empty; give a TCP address such as 127.0.0.1:14000")
	}
	if err := c.Registry.Validate(); err != nil {
		return heureka.ConfigIn("Registry", err)
	}
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "AuthPoll", Value: c.AuthPoll},
		heureka.NamedDuration{Field: "ReadHeaderTimeout", Value: c.ReadHeaderTimeout},
		heureka.NamedDuration{Field: "IdleTimeout", Value: c.IdleTimeout},
		heureka.NamedDuration{Field: "TransferSlack", Value: c.TransferSlack},
		heureka.NamedDuration{Field: "ShutdownTimeout", Value: c.ShutdownTimeout},
	); err != nil {
		return err
	}
	g := c.Gateway
	g.NameNodes, g.DataNodes = noInstances, noInstances // the Server's to set
	return heureka.ConfigIn("Gateway", g.Validate())
}

func noInstances() []*heureka.Instance { return nil }

// Server is the gateway program: a Gateway, the registry cache it reads,
// its HTTP server and the actors that run them. NewServer has no side effects;
// Open listens and starts the actors; Close stops them.
type Server struct {
	Config ServerConfig
	Logger *slog.Logger
	// Gateway is set by Open.
	Gateway *Gateway

	client *client.Client
	cache  *client.Cache
	nnApp  string
	ln     net.Listener
	http   *http.Server
	run    *rungroup.Running // the actors; nil before Open

	closeOnce sync.Once // the cache and the client are closed once
}

// NewServer returns a Server for cfg that logs to logger (slog.Default
// when nil). It starts nothing.
func NewServer(cfg ServerConfig, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	return &Server{Config: cfg, Logger: logger}
}

// Open validates the config, builds the registry cache and the gateway,
// listens (a busy port is an error here, not later), starts reading the
// registry, logs the one line `heureka gateway listening addr=HOST:PORT`
// and starts the actors. A failed Open leaves nothing running.
func (s *Server) Open() error {
	if s.run != nil {
		return errors.New("webhdfs server: already opened")
	}
	if err := s.Config.Validate(); err != nil {
		return err
	}
	cluster := s.Config.Gateway.Cluster
	s.nnApp = hdfs.AppName(hdfs.RoleNameNode, cluster)
	dnApp := hdfs.AppName(hdfs.RoleDataNode, cluster)
	ccfg := s.Config.Registry
	ccfg.Logger = s.Logger
	c, err := client.New(ccfg)
	if err != nil {
		return heureka.ConfigIn("Registry", err)
	}
	cacheCfg := client.DefaultCacheConfig()
	cacheCfg.Apps = []string{s.nnApp, dnApp}
	cache, err := client.NewCache(c, cacheCfg)
	if err != nil {
		_ = c.Close()
		return err
	}
	metrics := prometheus.NewRegistry()
	gcfg := s.Config.Gateway
	gcfg.NameNodes = func() []*heureka.Instance { return cache.Instances(s.nnApp) }
	gcfg.DataNodes = func() []*heureka.Instance { return cache.Instances(dnApp) }
	gcfg.Synced = cache.Synced()
	gcfg.Registerer, gcfg.Logger = metrics, s.Logger
	gw, err := New(gcfg)
	if err != nil {
		_ = c.Close()
		return err
	}
	cache.OnChange(func(_, _ *client.Snapshot, _ []client.Change) { gw.Notify() })
	ln, err := net.Listen("tcp", s.Config.Listen)
	if err != nil {
		_ = c.Close()
		return err
	}
	if err := cache.Start(context.Background()); err != nil {
		ln.Close()
		_ = c.Close()
		return err
	}
	s.Gateway, s.client, s.cache, s.ln = gw, c, cache, ln
	s.http = &http.Server{Handler: s.routes(promhttp.HandlerFor(metrics, promhttp.HandlerOpts{})), TLSConfig: s.Config.TLS,
		ReadHeaderTimeout: s.Config.ReadHeaderTimeout, IdleTimeout: s.Config.IdleTimeout, MaxHeaderBytes: 64 << 10,
		ReadTimeout:  gcfg.RequestTimeout + s.Config.TransferSlack,
		WriteTimeout: gcfg.RequestTimeout + s.Config.TransferSlack,
		ErrorLog:     slog.NewLogLogger(s.Logger.With("subsystem", "http").Handler(), slog.LevelWarn)}
	s.Logger.Info("heureka gateway listening", "cluster", cluster, "addr", ln.Addr().String(),
		"tls", s.Config.TLS != nil, "auth", gcfg.Auth != nil, "pid", os.Getpid())
	s.start()
	return nil
}

// routes is the whole route table: /metrics, /healthz and /readyz, and
// everything else WebHDFS. Not a ServeMux: it would "clean" /a/../b into a
// redirect, and the gateway answers such paths itself, as WebHDFS errors.
func (s *Server) routes(metrics http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			switch r.URL.Path {
			case "/metrics":
				metrics.ServeHTTP(w, r)
				return
			case "/healthz":
				fmt.Fprintln(w, "ok")
				return
			case "/readyz":
				if err := s.Ready(); err != nil {
					http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
					return
				}
				fmt.Fprintln(w, "ok")
				return
			}
		}
		s.Gateway.ServeHTTP(w, r)
	})
}

// start runs the actors in a rungroup (the HTTP server, its stopper and
// the credentials watcher); the first to return stops the others.
func (s *Server) start() {
	g := rungroup.New(context.Background())
	g.HTTP(s.http, s.ln, s.Config.TLS != nil, s.Config.ShutdownTimeout, s.Logger, nil)
	if store := s.Config.Gateway.Auth; store != nil {
		g.Go("credentials", func(ctx context.Context) error { return store.Watch(ctx, s.Config.AuthPoll) })
	}
	g.Go("cluster check", s.warnWithoutNameNodes)
	s.run = g.Start()
}

// warnWithoutNameNodes logs a warning once the registry has been read if
// it has no NameNode of the cluster (a mistyped cluster name, or agents not
// running), since every request then fails; it returns when ctx ends.
func (s *Server) warnWithoutNameNodes(ctx context.Context) error {
	select {
	case <-s.cache.Synced():
		if len(s.cache.Instances(s.nnApp)) == 0 {
			s.Logger.Warn(noNameNodes(s.Config.Gateway.Cluster) + "; every request is answered 503 until one registers")
		}
	case <-ctx.Done():
	}
	<-ctx.Done()
	return nil
}

// Ready reports why the gateway cannot forward requests yet, or nil: it
// has read the registry in full, and the registry names an active
// NameNode of the cluster.
func (s *Server) Ready() error {
	if s.cache == nil {
		return errors.New("not open")
	}
	select {
	case <-s.cache.Synced():
	default:
		return errors.New("the registry has not been read yet")
	}
	_, err := hdfs.ResolveNameNodes(s.cache.Instances(s.nnApp))
	return err
}

// Addr is the address the server listens on, nil before Open.
func (s *Server) Addr() net.Addr {
	if s.ln != nil {
		return s.ln.Addr()
	}
	return nil
}

// Done is closed when the server has begun to stop: Close was called or an
// actor returned. Before Open it is nil.
func (s *Server) Done() <-chan struct{} { return s.run.Done() }

// Close stops the server and returns the first actor failure, if any. Its
// steps: stop accepting connections and let requests in flight finish
// (bounded by ShutdownTimeout), stop watching the credentials file, wait
// for every actor, then stop reading the registry. If ctx ends first,
// connections are closed at once and ctx's error is returned. Close is
// idempotent; before Open it does nothing.
func (s *Server) Close(ctx context.Context) error {
	if s.run == nil {
		return nil
	}
	err := s.run.Close(ctx, func() { _ = s.http.Close() })
	s.closeOnce.Do(func() { err = errors.Join(err, s.cache.Close(ctx), s.client.Close()) })
	return err
}

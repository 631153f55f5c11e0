package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only with --debug-listen
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/debugclock"
	"github.com/heureka-project/heureka/internal/dnsapi"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/server"
)

const serverHelp = `
Runs the registry and serves the Eureka REST API under /eureka/v2, /eureka and /,
plus /healthz, /readyz and /metrics. Request bodies are limited to 1 MiB.
With --dns-listen it also serves DNS for --dns-domain: <app>.service.heureka and more.
Authentication is off unless --auth-file is given; SIGHUP reloads credentials and certificates.`

// serverFlags are `heureka server`'s flags that are not a Config field
// as they stand.
type serverFlags struct {
	mode, peers, debugListen, dnsAllow string
	newLog                             func() (*slog.Logger, error)
}

// runServer is `heureka server`: parse flags, open, wait for SIGINT/SIGTERM
// or an actor's failure, and stop gracefully.
func runServer(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg := server.DefaultConfig()
	var f serverFlags
	if err := noArgs(f.define(&cfg, stderr), args); err != nil {
		return err
	}
	cfg.Registry.SelfPreservation = registry.Mode(f.mode)
	var clock *debugclock.Clock
	if f.debugListen != "" {
		clock = debugclock.New()
		cfg.Registry.Clock, cfg.Replication.Clock = clock.Now, clock
	}
	cfg.PeerAuth = os.Getenv("HEUREKA_PEER_AUTH")
	cfg.Replication.Peers = append(cfg.Replication.Peers, commaList(f.peers)...)
	allow, err := dnsapi.ParseAllow(f.dnsAllow)
	if err != nil {
		return &usageError{"--dns-allow: " + err.Error()}
	}
	cfg.DNS.Allow = allow
	if err := cfg.Validate(); err != nil {
		return flagError(err, serverFields)
	}
	logger, err := f.newLog()
	if err != nil {
		return &usageError{"server: " + err.Error()}
	}
	serverGC(&cfg)

	ctx, stop := untilSignal(ctx)
	defer stop()
	srv := server.New(cfg, logger)
	if err := srv.Open(); err != nil {
		return heureka.ConfigNamed(err, serverFields) // a file that cannot be read: a failure, named by its flag
	}
	if f.debugListen != "" {
		http.Handle("/debug/clock", clock)
		if err := serveProfiler(f.debugListen, logger); err != nil {
			return &usageError{"server: --debug-listen: " + err.Error()}
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP) // before any SIGHUP can end the process
	defer signal.Stop(hup)
	go reloadOnHUP(hup, srv, logger)
	return closeOnSignal(ctx, stop, srv, cfg.ShutdownTimeout, logger, "heureka server")
}

// serverFields maps server.Config's fields to the flags (or the
// environment variable) that set them, for flagError.
var serverFields = map[string]string{
	"Listen": "--listen", "ShutdownTimeout": "--shutdown-timeout", "ReadTimeout": "--read-timeout", "ResponseTimeout": "--response-timeout",
	"Registry.SelfPreservation": "--self-preservation", "Registry.DeltaRetention": "--delta-retention",
	"Registry.StormRate": "--storm-rate", "Registry.StormHold": "--storm-hold",
	"Replication.Peers": "--peers", "Replication.SelfURL": "--self-url", "Replication.SyncTimeout": "--sync-timeout",
	"AuthFile": "--auth-file", "AuthPoll": "--auth-poll", "TLSCert": "--tls-cert", "TLSKey": "--tls-key", "TLSClientCA": "--tls-client-ca",
	"PeerCA": "--peer-ca", "PeerCert": "--peer-cert", "PeerKey": "--peer-key", "PeerAuthFile": "--peer-auth-file", "PeerAuth": "$HEUREKA_PEER_AUTH",
	"HTTP.WriteRate": "--write-rate", "HTTP.WriteBurst": "--write-burst", "HTTP.MaxWatchersPerClient": "--max-watchers-per-client",
	"DNS.Listen": "--dns-listen", "DNS.Domain": "--dns-domain", "DNS.Allow": "--dns-allow", "DNS.Rate": "--dns-rate",
}

// define defines the flags, into cfg where a flag is a Config field.
func (f *serverFlags) define(cfg *server.Config, stderr io.Writer) *flag.FlagSet {
	fs := commandFlags("server", stderr)
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "TCP `address` to serve the Eureka API on")
	f.newLog = logFlags(fs, stderr)
	fs.StringVar(&f.mode, "self-preservation", string(cfg.Registry.SelfPreservation), "self-preservation mode: off, eureka or smart")
	fs.DurationVar(&cfg.Registry.DeltaRetention, "delta-retention", cfg.Registry.DeltaRetention, "how long a change stays in /apps/delta")
	fs.Float64Var(&cfg.Registry.StormRate, "storm-rate", cfg.Registry.StormRate, "registrations a second at or above which the registry is in a storm, as after a restart: the lease clock stands still (smart self-preservation), since heartbeats may wait behind it, reads wait longer before asking for listings to be encoded afresh, and the collector runs at GOGC=100 unless GOGC is set; 0: never")
	fs.DurationVar(&cfg.Registry.StormHold, "storm-hold", cfg.Registry.StormHold, "the longest one registration storm stands the lease clock still")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long in-flight requests may take to finish on stop")
	fs.StringVar(&f.peers, "peers", "", "comma-separated Eureka base `URLs` of the other registry servers (this server's own may be listed)")
	fs.StringVar(&cfg.Replication.SelfURL, "self-url", "", "this server's base `URL` as peers know it (default http://LISTEN/eureka)")
	fs.DurationVar(&cfg.Replication.SyncTimeout, "sync-timeout", cfg.Replication.SyncTimeout, "how long to wait at start for a peer to copy the registry from")
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
	fs.DurationVar(&cfg.ResponseTimeout, "response-timeout", cfg.ResponseTimeout, "how long a client may take to read an answer before its connection is cut (watch streams bound each write instead)")
	fs.Float64Var(&cfg.HTTP.WriteRate, "write-rate", cfg.HTTP.WriteRate, "writes per second allowed to each client (user@address, or address); 0 turns the limit off")
	fs.IntVar(&cfg.HTTP.WriteBurst, "write-burst", cfg.HTTP.WriteBurst, "writes a client may send at once above --write-rate")
	fs.IntVar(&cfg.HTTP.MaxWatchersPerClient, "max-watchers-per-client", cfg.HTTP.MaxWatchersPerClient, "watch and event streams one client may hold open; 0 for no per-client bound")
	fs.StringVar(&cfg.DNS.Listen, "dns-listen", "", "serve DNS (UDP and TCP) for --dns-domain on this `address`, e.g. :8600; off by default")
	fs.StringVar(&cfg.DNS.Domain, "dns-domain", cfg.DNS.Domain, "the DNS `zone` served: <app>.service.ZONE and the names docs/deployment.md lists")
	fs.StringVar(&f.dnsAllow, "dns-allow", "", "comma-separated `networks` (CIDR) or addresses that may ask DNS; required with --auth-file (DNS carries no credentials); default: anyone")
	fs.Float64Var(&cfg.DNS.Rate, "dns-rate", cfg.DNS.Rate, "UDP DNS queries a second allowed to each source address (loopback exempt); past it half get an empty truncated reply and half are dropped; 0 turns the limit off")
	fs.StringVar(&f.debugListen, "debug-listen", "", "serve Go's profiler (/debug/pprof/) on this loopback `address`, for diagnosing CPU and lock waits, and a clock that tests can step and skew (/debug/clock), which the registry and replication then read; off by default")
	setUsage(fs, "server [flags]", serverHelp, exitsProgram)
	return fs
}

// serverGC sets the collector's target for a registry. The registry's live
// state is most of this process's heap, so the default GC target (heap may
// grow to twice the live data) costs more memory than it saves CPU: at
// 100k instances the soak's resident memory is 2.6 KiB per instance at
// GOGC=50 and 3.0 KiB already at 75 (docs/benchmarks.md). An explicit GOGC
// still wins. In a registration storm (a restart's refill) the target is
// Go's default, 100, until it passes (server/gc.go).
func serverGC(cfg *server.Config) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
		cfg.StormGCPercent = 100
	}
}

// reloadOnHUP reloads the server's credentials and certificates on every
// SIGHUP that hup delivers, until the server stops.
func reloadOnHUP(hup <-chan os.Signal, srv *server.Server, logger *slog.Logger) {
	for {
		select {
		case <-hup:
			logger.Info("SIGHUP: reloading credentials and certificates")
			_ = srv.Reload() // logged
		case <-srv.Done():
			return
		}
	}
}

// serveProfiler serves net/http/pprof on addr, which must be a loopback
// address: profiles show the registry's contents and cost CPU to take.
func serveProfiler(addr string, logger *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	runtime.SetMutexProfileFraction(100)
	runtime.SetBlockProfileRate(int(time.Millisecond))
	logger.Info("profiler serving", "at", ln.Addr().String())
	go func() { _ = http.Serve(ln, http.DefaultServeMux) }() // net/http/pprof and the clock register there
	return nil
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

package server

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/conntime"
	"github.com/heureka-project/heureka/internal/dnsapi"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
	"github.com/heureka-project/heureka/urlcheck"
)

// Config is everything a heureka server is told: the settings of the
// registry, of replication and of the HTTP layer, each in its own package's
// Config, and the process's own (where to listen, TLS, credentials).
//
// Start from DefaultConfig. Zero is a value, as in each part's Config. The
// fields the wiring owns are overwritten by Open and need not be set:
// Registry.Logger; Replication.NodeID, TLS, Authorization and Logger (and
// SelfURL when empty); HTTP.NodeID, Limits, Ready, Status and Auth;
// DNS.Anonymous.
type Config struct {
	// Listen is the TCP address to serve on; port 0 picks a free port.
	Listen string
	// ShutdownTimeout bounds the graceful part of a stop: in-flight requests
	// get this long to finish before connections are closed.
	ShutdownTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included, against
	// slow senders; watch streams lift it once their request is read.
	ReadTimeout time.Duration
	// ResponseTimeout bounds writing an answer, so that a client that stops
	// reading cannot hold a large listing (and its goroutine) forever.
	// Watch streams bound each write instead (HTTP.WriteTimeout).
	ResponseTimeout time.Duration

	// Registry is the engine's configuration (self-preservation, delta
	// retention, limits, clock).
	Registry registry.Config
	// Replication is the peers' configuration: Peers are the other
	// registry servers' Eureka base URLs (this server's own URL may be
	// among them); SelfURL is this server's base URL as its peers know it,
	// by default http://LISTEN/eureka.
	Replication replication.Config
	// HTTP is the HTTP layer's configuration (per-client limits, stream
	// bounds and deadlines).
	HTTP httpapi.Config
	// DNS is the DNS server's configuration; DNS is off while DNS.Listen
	// is empty. With authentication on it needs DNS.Allow, and answers
	// only while anonymous reads are allowed.
	DNS dnsapi.Config

	// AuthFile is the credentials file (JSON, see internal/auth); empty
	// turns authentication off. AuthPoll is how often it is checked for
	// changes; it is also read again on Reload.
	AuthFile string
	AuthPoll time.Duration
	// TLSCert and TLSKey are PEM files to serve HTTPS with, read again on
	// Reload. TLSClientCA, when set, verifies the client certificates that
	// clients offer (mutual TLS); a verified certificate authenticates as
	// the user named by its subject CN if that user has "certificate": true.
	TLSCert, TLSKey, TLSClientCA string
	// PeerCA verifies https peers (default: the system's roots); PeerCert
	// and PeerKey are the client certificate shown to peers, read again on
	// Reload.
	PeerCA, PeerCert, PeerKey string
	// PeerAuthFile holds the credentials sent to peers, one line:
	// user:password or a token; read again on Reload. PeerAuth is the same
	// given directly (the command takes it from $HEUREKA_PEER_AUTH, never
	// from a flag, to keep it out of process listings).
	PeerAuthFile, PeerAuth string

	// StormGCPercent is the garbage collector's target (as GOGC) while the
	// registry takes a registration storm (registry.Config.StormRate); the
	// target before the storm is put back when it passes. 0 leaves the
	// collector alone, as tests running many servers in one process want;
	// the command sets it (gc.go says why).
	StormGCPercent int
}

// ConnLimits are the bounds heureka's server keeps on its clients'
// connections (internal/conntime): a header within 10 s (ReadTimeout if
// shorter), a body within ReadTimeout, a kept connection idle for at most
// 2 minutes, and an answer the client stops reading cut off after
// ResponseTimeout. Watch streams set a deadline on each write instead.
// bench/soak gives a bare handler the same, to measure what they cost.
func (c Config) ConnLimits() conntime.Limits {
	return conntime.Limits{
		Header: min(10*time.Second, c.ReadTimeout),
		Body:   c.ReadTimeout,
		Idle:   2 * time.Minute,
		Answer: c.ResponseTimeout,
	}
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		// Eureka's customary port; loopback so that a bare `heureka server`
		// exposes nothing by accident.
		Listen: "127.0.0.1:8761",
		// Requests are short; a stop should not hang a deploy.
		ShutdownTimeout: 10 * time.Second,
		// Bodies are at most 1 MiB: 30 s is 35 KB/s, slower than any
		// honest client on a data-centre network.
		ReadTimeout: 30 * time.Second,
		// A full listing of 10,000 instances is ~10 MB uncompressed: a
		// minute allows 170 KB/s; a client slower than that is stuck.
		ResponseTimeout: time.Minute,
		Registry:        serverRegistryConfig(),
		Replication:     replication.DefaultConfig(),
		HTTP:            httpapi.DefaultConfig(),
		DNS:             dnsapi.DefaultConfig(),
		// An edited credentials file is in force within seconds, without
		// a signal; a stat every 5 s costs nothing.
		AuthPoll: 5 * time.Second,
	}
}

// serverRegistryConfig is the registry's defaults with the process's
// monotonic clock as Elapsed, so that a step of the wall clock (or of the
// debug clock a fault harness moves) is not taken for time in which no
// client renewed.
func serverRegistryConfig() registry.Config {
	c := registry.DefaultConfig()
	start := time.Now()
	c.Elapsed = func() time.Duration { return time.Since(start) }
	return c
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field, a part's as Registry.FIELD,
// Replication.FIELD, HTTP.FIELD or DNS.FIELD. The fields Open sets (see
// Config) are not checked.
func (c Config) Validate() error {
	if c.Listen == "" {
		return heureka.InvalidConfig("Listen", nil, "is empty; give a TCP address such as 127.0.0.1:8761")
	}
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "ShutdownTimeout", Value: c.ShutdownTimeout},
		heureka.NamedDuration{Field: "ReadTimeout", Value: c.ReadTimeout},
		heureka.NamedDuration{Field: "ResponseTimeout", Value: c.ResponseTimeout},
		// Zero would start every server empty without asking its peers.
		heureka.NamedDuration{Field: "Replication.SyncTimeout", Value: c.Replication.SyncTimeout},
	); err != nil {
		return err
	}
	if err := c.checkFiles(); err != nil {
		return err
	}
	if c.StormGCPercent < 0 {
		return heureka.InvalidConfig("StormGCPercent", c.StormGCPercent, "want 0 (leave the collector alone) or a positive percentage")
	}
	if err := heureka.ConfigIn("Registry", c.Registry.Validate()); err != nil {
		return err
	}
	for i, p := range c.Replication.Peers {
		if u, err := urlcheck.Parse(p); err == nil && u.User != nil {
			return heureka.InvalidConfig(fmt.Sprintf("Replication.Peers[%d]", i), u.Redacted(),
				"carries credentials, which status pages and logs would show; give the peers' credentials in PeerAuthFile or PeerAuth")
		}
	}
	rep := c.Replication
	rep.NodeID = "set by Open" // and the Logger
	if rep.Logger == nil {
		rep.Logger = slog.Default()
	}
	if err := heureka.ConfigIn("Replication", rep.Validate()); err != nil {
		return err
	}
	api := c.HTTP
	api.Limits = c.Registry.Limits // as Open sets them
	if err := heureka.ConfigIn("HTTP", api.Validate()); err != nil {
		return err
	}
	if err := heureka.ConfigIn("DNS", c.DNS.Validate()); err != nil {
		return err
	}
	if c.DNS.Listen != "" && c.AuthFile != "" && len(c.DNS.Allow) == 0 {
		return heureka.InvalidConfig("DNS.Allow", nil, "is empty while AuthFile turns authentication on: DNS carries no credentials, so name the networks that may ask")
	}
	return nil
}

// checkFiles checks the credential and certificate settings: pairs given
// whole, and each needing what it builds on.
func (c Config) checkFiles() error {
	if err := auth.CheckServerTLS(c.TLSCert, c.TLSKey, c.TLSClientCA); err != nil {
		return err
	}
	switch {
	case c.AuthFile != "" && c.AuthPoll <= 0:
		return heureka.InvalidConfig("AuthPoll", c.AuthPoll, "must be a positive duration while AuthFile is set")
	case c.PeerCert == "" && c.PeerKey != "":
		return heureka.InvalidConfig("PeerCert", nil, "is empty while PeerKey is set: give both or neither")
	case c.PeerCert != "" && c.PeerKey == "":
		return heureka.InvalidConfig("PeerKey", nil, "is empty while PeerCert is set: give both or neither")
	case c.PeerAuthFile != "" && c.PeerAuth != "":
		return heureka.InvalidConfig("PeerAuth", nil, "is set as well as PeerAuthFile; give one")
	}
	if c.PeerAuth != "" {
		if _, err := auth.AuthorizationHeader(c.PeerAuth); err != nil {
			return heureka.InvalidConfig("PeerAuth", nil, "%v", err) // the value is a secret
		}
	}
	return nil
}

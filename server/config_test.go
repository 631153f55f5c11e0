package server

import (
	"net/netip"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/configtest"
)

// TestConfigRefusesByField: every setting that cannot work is refused
// with a *heureka.ConfigError naming its field, a part's dotted; the
// fields Open sets need not be set.
func TestConfigRefusesByField(t *testing.T) {
	configtest.Refuses(t, DefaultConfig(), configtest.Cases[Config]{
		"Listen":                    func(c *Config) { c.Listen = "" },
		"ShutdownTimeout":           func(c *Config) { c.ShutdownTimeout = 0 },
		"ReadTimeout":               func(c *Config) { c.ReadTimeout = -time.Second },
		"ResponseTimeout":           func(c *Config) { c.ResponseTimeout = 0 },
		"Replication.SyncTimeout":   func(c *Config) { c.Replication.SyncTimeout = 0 },
		"AuthPoll":                  func(c *Config) { c.AuthFile, c.AuthPoll = "auth.json", 0 },
		"TLSCert":                   func(c *Config) { c.TLSKey = "key.pem" },
		"TLSKey":                    func(c *Config) { c.TLSCert = "cert.pem" },
		"TLSClientCA":               func(c *Config) { c.TLSClientCA = "ca.pem" },
		"PeerCert":                  func(c *Config) { c.PeerKey = "key.pem" },
		"PeerKey":                   func(c *Config) { c.PeerCert = "cert.pem" },
		"PeerAuth":                  func(c *Config) { c.PeerAuthFile, c.PeerAuth = "peer", "u:p" },
		"PeerAuth two lines":        func(c *Config) { c.PeerAuth = "u:p\nv:q" },
		"StormGCPercent":            func(c *Config) { c.StormGCPercent = -1 },
		"Registry.SelfPreservation": func(c *Config) { c.Registry.SelfPreservation = "always" },
		"Registry.DeltaRetention":   func(c *Config) { c.Registry.DeltaRetention = 0 },
		"Replication.Peers[0]":      func(c *Config) { c.Replication.Peers = []string{"10.0.0.2:8761"} },
		"Replication.Peers[1]": func(c *Config) {
			c.Replication.Peers = []string{"http://10.0.0.2:8761/eureka", "http://u:p@10.0.0.3:8761/eureka"}
		},
		"Replication.BatchSize":           func(c *Config) { c.Replication.BatchSize = 0 },
		"HTTP.WriteRate":                  func(c *Config) { c.HTTP.WriteRate = -1 },
		"HTTP.MaxWatchersPerClient":       func(c *Config) { c.HTTP.MaxWatchersPerClient = -1 },
		"DNS.Domain":                      func(c *Config) { c.DNS.Listen, c.DNS.Domain = "127.0.0.1:0", "." },
		"DNS.Allow":                       func(c *Config) { c.DNS.Listen, c.AuthFile = "127.0.0.1:0", "auth.json" },
		"Registry.Limits.MaxIDLength":     func(c *Config) { c.Registry.Limits.MaxIDLength = 0 },
		"Registry.ChangeLogSize":          func(c *Config) { c.Registry.ChangeLogSize = 0 },
		"Replication.AntiEntropyInterval": func(c *Config) { c.Replication.AntiEntropyInterval = 0 },
	})
	withAllow := DefaultConfig()
	withAllow.DNS.Listen, withAllow.AuthFile = "127.0.0.1:0", "auth.json"
	withAllow.DNS.Allow = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	if err := withAllow.Validate(); err != nil {
		t.Errorf("DNS with authentication and an allow list: %v", err)
	}
}

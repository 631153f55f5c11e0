package dnsapi

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/miekg/dns"
)

// Config is the DNS server's configuration. Start from DefaultConfig.
type Config struct {
	// Listen is the address to serve DNS on, UDP and TCP on one port; empty
	// turns DNS off. Port 0 picks a free port (the same for both).
	Listen string
	// Domain is the zone answered, e.g. "heureka." (a trailing dot is
	// added when missing; case does not matter).
	Domain string
	// Allow lists the networks that may ask; empty allows everyone. The
	// server wiring requires it when authentication is on.
	Allow []netip.Prefix
	// TTL is the time to live of every answer and of negative answers
	// (the SOA's minimum).
	TTL time.Duration
	// MaxUDPSize caps the UDP payload size a client may announce in EDNS0,
	// and is the size this server announces.
	MaxUDPSize int
	// Rate and Burst bound the UDP queries each source address may send a
	// second; 0 turns the limit off. Loopback sources are exempt, and so is
	// TCP, whose source is proven and whose connections are bounded.
	Rate  float64
	Burst int
	// MaxSources bounds the sources whose rate is tracked at once.
	MaxSources int
	// MaxTCPConns bounds the TCP connections open at once.
	MaxTCPConns int
	// ReadTimeout bounds reading one message over TCP (a client that sends
	// half a message and stalls); IdleTimeout bounds an idle TCP
	// connection between messages.
	ReadTimeout, IdleTimeout time.Duration

	// Anonymous reports whether an anonymous read may see the registry
	// now. The server wiring sets it when authentication is on; nil means
	// yes. When it says no, every query in the zone is REFUSED.
	Anonymous func() bool
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		// Off unless asked for: a DNS port is one more thing exposed.
		Listen: "",
		// The zone the issue and the docs use; forwarded by operators.
		Domain: "heureka.",
		// The answer changes with the registry: a cached answer is a stale
		// one. Clients that resolve once (Hadoop's proxy providers) are not
		// helped by a TTL, and resolvers in between must ask again.
		TTL: 0,
		// DNS Flag Day 2020's figure: fits in one packet on any path, so
		// answers are never fragmented (fragments are what spoofing and
		// lost-packet trouble ride on); larger answers go over TCP.
		MaxUDPSize: 1232,
		// A forwarding resolver puts a whole cluster's lookups behind one
		// address: 2,000 a second is a busy cluster with TTL 0, and far
		// more than one honest host sends. Past it, half the UDP queries
		// get an empty truncated reply and half nothing (limit.go), so the
		// server is no amplifier.
		Rate:  2000,
		Burst: 4000,
		// A limiter is ~100 bytes: 65,536 sources are ~6 MB at most.
		MaxSources: 1 << 16,
		// TCP is for truncated answers; a client holds one for a moment.
		MaxTCPConns: 256,
		// miekg/dns's own defaults: a message is small and arrives at once.
		ReadTimeout: 2 * time.Second,
		IdleTimeout: 8 * time.Second,
	}
}

// Validate checks c; its errors are *heureka.ConfigError naming the
// field. A Config without Listen (DNS off) is valid whatever else it holds.
func (c Config) Validate() error {
	if c.Listen == "" {
		return nil
	}
	d := dns.Fqdn(strings.ToLower(c.Domain))
	if _, ok := dns.IsDomainName(d); !ok || strings.Trim(c.Domain, ".") == "" || len(d) > 200 {
		return heureka.InvalidConfig("Domain", c.Domain, "want a domain name of at most 200 bytes, such as heureka.")
	}
	switch {
	case c.TTL < 0 || c.TTL > 24*time.Hour:
		return heureka.InvalidConfig("TTL", c.TTL, "want 0 to 24h")
	case c.MaxUDPSize < dns.MinMsgSize || c.MaxUDPSize > dns.MaxMsgSize:
		return heureka.InvalidConfig("MaxUDPSize", c.MaxUDPSize, "want %d to %d bytes", dns.MinMsgSize, dns.MaxMsgSize)
	case c.Rate < 0:
		return heureka.InvalidConfig("Rate", c.Rate, "want 0 (no limit) or more queries a second")
	case c.Rate > 0 && c.Burst < 1:
		return heureka.InvalidConfig("Burst", c.Burst, "want at least 1 with a rate")
	case c.Rate > 0 && c.MaxSources < 1:
		return heureka.InvalidConfig("MaxSources", c.MaxSources, "want at least 1 with a rate")
	case c.MaxTCPConns < 1:
		return heureka.InvalidConfig("MaxTCPConns", c.MaxTCPConns, "want at least 1")
	}
	if err := heureka.Positive(heureka.NamedDuration{Field: "ReadTimeout", Value: c.ReadTimeout},
		heureka.NamedDuration{Field: "IdleTimeout", Value: c.IdleTimeout}); err != nil {
		return err
	}
	for i, p := range c.Allow {
		if !p.IsValid() {
			return heureka.InvalidConfig(fmt.Sprintf("Allow[%d]", i), p, "not a network")
		}
	}
	return nil
}

// ParseAllow reads a comma-separated list of networks (CIDR) or single
// addresses, as --dns-allow takes them.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a network (10.0.0.0/8) or an address", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// zone returns the configured domain in its canonical form: lower case,
// fully qualified.
func (c Config) zone() string { return dns.Fqdn(strings.ToLower(c.Domain)) }

package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/urlcheck"
)

// Config holds a Client's settings: where the registries are and how hard
// to try them. Start from DefaultConfig: every field means what it says,
// zero included (Validate says which zeros cannot work); a nil Logger means
// slog.Default.
type Config struct {
	// URLs are the base URLs of the default registry cluster, tried in
	// order, e.g. "http://10.0.0.1:8761/eureka". Both Spring Cloud's
	// /eureka and Netflix's /eureka/v2 prefixes work; user:password in a
	// URL is sent as basic authentication and never appears in errors or
	// logs.
	URLs []string

	// Clusters maps application-name patterns to the registry clusters
	// that hold those applications, for deployments that run a registry
	// per role, e.g. {"HDFS-DATANODE.*": {"http://dn-reg1:8761/eureka"}}.
	// A pattern is a regular expression matched against the whole
	// (upper-case) application name, ignoring case. When several patterns
	// match, the longest wins (then the lexically smaller). Applications
	// that match none go to URLs.
	Clusters map[string][]string

	// ConnectTimeout bounds establishing one connection (TCP and TLS).
	ConnectTimeout time.Duration
	// ReadTimeout bounds the wait for a response's headers after the
	// request was written. A unary call's whole attempt, body included,
	// is bounded by ConnectTimeout+ReadTimeout.
	ReadTimeout time.Duration

	// Rounds is how many times one call walks the whole URL list before
	// giving up; a call makes at most Rounds×len(URLs) attempts.
	Rounds int
	// Backoff is the pause after the first failed round; it doubles after
	// each further round up to MaxBackoff, and every pause is jittered.
	Backoff    time.Duration
	MaxBackoff time.Duration

	// MaxResponseBytes bounds a response body; a larger one is an error.
	MaxResponseBytes int64

	// TLS is the base TLS configuration for https registries (nil: the
	// system's roots, no client certificate). CAFile and CertFile/KeyFile,
	// when set, are read by New and added to a copy of it.
	TLS *tls.Config
	// CAFile is a PEM bundle of the CAs that sign the registries'
	// certificates; it replaces the system's roots.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and key, shown to
	// registries that ask for one (mutual TLS). Both or neither.
	CertFile, KeyFile string

	// BearerToken, when set, is sent as "Authorization: Bearer TOKEN" to
	// every registry whose URL carries no user:password (a URL's userinfo
	// is sent as basic auth, as Eureka clients do, and wins).
	BearerToken string

	// Transport, when set, sends every request instead of the Client's
	// own http.Transport (for proxies or tests). Timeouts above then apply
	// only as far as Transport honours the request context: ConnectTimeout,
	// ReadTimeout and the TLS settings configure the Client's own
	// transport only, so they cannot be combined with Transport.
	Transport http.RoundTripper

	// Logger receives the client's logs, with subsystem=client.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, each with its reason. URLs is left
// empty: there is no sensible default registry.
func DefaultConfig() Config {
	return Config{
		// From operating HDFS on Eureka: shorter timeouts raised false
		// alarms on congested racks.
		ConnectTimeout: 10 * time.Second,
		ReadTimeout:    15 * time.Second,
		// Two passes: a registry peer that restarts is usually back within
		// the pause between them; more passes only delay the caller's own
		// retry (an agent renews again in 10 s anyway).
		Rounds:     2,
		Backoff:    500 * time.Millisecond,
		MaxBackoff: 5 * time.Second,
		// A 100,000-instance registry is about 90 MiB of JSON (3 MiB on
		// the wire, gzipped); 64 MiB made such a registry unreadable.
		MaxResponseBytes: 512 << 20,
		Logger:           slog.Default(),
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c Config) Validate() error {
	if len(c.URLs) == 0 && len(c.Clusters) == 0 {
		return heureka.InvalidConfig("URLs", nil, "is empty: give at least one registry base URL, e.g. http://127.0.0.1:8761/eureka")
	}
	for i, u := range c.URLs {
		if err := checkBase(fmt.Sprintf("URLs[%d]", i), u); err != nil {
			return err
		}
	}
	for pat, urls := range c.Clusters {
		field := fmt.Sprintf("Clusters[%q]", pat)
		if _, err := heureka.CompilePattern(pat); err != nil {
			return heureka.InvalidConfig(field, nil, "bad pattern: %v", err)
		}
		if len(urls) == 0 {
			return heureka.InvalidConfig(field, nil, "has no registry URL")
		}
		for i, u := range urls {
			if err := checkBase(fmt.Sprintf("%s[%d]", field, i), u); err != nil {
				return err
			}
		}
	}
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "ConnectTimeout", Value: c.ConnectTimeout},
		heureka.NamedDuration{Field: "ReadTimeout", Value: c.ReadTimeout},
		heureka.NamedDuration{Field: "Backoff", Value: c.Backoff},
		heureka.NamedDuration{Field: "MaxBackoff", Value: c.MaxBackoff},
	); err != nil {
		return err
	}
	switch {
	case c.MaxBackoff < c.Backoff:
		return heureka.InvalidConfig("MaxBackoff", c.MaxBackoff, "is less than Backoff %v", c.Backoff)
	case c.Rounds < 1:
		return heureka.InvalidConfig("Rounds", c.Rounds, "want at least 1")
	case c.MaxResponseBytes < 1:
		return heureka.InvalidConfig("MaxResponseBytes", c.MaxResponseBytes, "want a positive size")
	case c.CertFile == "" && c.KeyFile != "":
		return heureka.InvalidConfig("CertFile", nil, "is empty while KeyFile is set: give both or neither")
	case c.CertFile != "" && c.KeyFile == "":
		return heureka.InvalidConfig("KeyFile", nil, "is empty while CertFile is set: give both or neither")
	case c.Transport != nil && (c.TLS != nil || c.CAFile != "" || c.CertFile != ""):
		return heureka.InvalidConfig("Transport", nil, "is set: TLS, CAFile and CertFile configure the Client's own transport; put them on Transport instead")
	case strings.ContainsAny(c.BearerToken, "\r\n") || strings.TrimSpace(c.BearerToken) != c.BearerToken:
		return heureka.InvalidConfig("BearerToken", nil, "has white space or a line break") // the value is a secret
	}
	return nil
}

// TLSConfig is cfg's TLS configuration with the CA and client certificate
// files read in; nil when nothing is configured.
func (c Config) TLSConfig() (*tls.Config, error) {
	if c.TLS == nil && c.CAFile == "" && c.CertFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.TLS != nil {
		tc = c.TLS.Clone()
	}
	if c.CAFile != "" {
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, heureka.InvalidConfig("CAFile", c.CAFile, "cannot be read: %v", pathless(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, heureka.InvalidConfig("CAFile", c.CAFile, "holds no PEM certificate")
		}
		tc.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, heureka.InvalidConfig("CertFile", c.CertFile, "with KeyFile %q: %v", c.KeyFile, pathless(err))
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// CacheConfig holds a Cache's settings. Start from DefaultCacheConfig;
// zero is a value, as in Config.
type CacheConfig struct {
	// Apps, when not empty, limits the cache to these applications
	// (case-insensitive); readers see nothing else. Empty means every
	// application of every cluster. A limited cache reads only these
	// applications, never the whole registry (see the package doc).
	Apps []string

	// PollInterval is how often a polling cache asks for the delta.
	PollInterval time.Duration
	// DisableWatch keeps the cache polling even against heureka servers.
	DisableWatch bool
	// WatchRetryInterval is how long a cache that found no watch endpoint
	// polls before it looks for one again (one full fetch each time).
	WatchRetryInterval time.Duration
	// WatchIdleTimeout drops a watch stream that has sent nothing, not
	// even a keep-alive comment, for this long, and reconnects. It must be
	// longer than the server's keep-alive interval.
	WatchIdleTimeout time.Duration
	// RetryMax caps the pause between attempts while every registry of a
	// cluster is failing; the pause starts at PollInterval and doubles.
	RetryMax time.Duration

	// AllowEmpty lets a full fetch that finds an empty registry replace a
	// non-empty view. Off by default: a registry that has just started
	// knows nothing yet, and its emptiness is not news.
	AllowEmpty bool

	// CacheFile, when set, is where the view is saved (atomically, as a
	// Eureka JSON listing) after changes, at most once per CacheFileInterval,
	// and loaded from at Start, so reads work before any registry answers.
	CacheFile         string
	CacheFileInterval time.Duration

	// MaxPendingChanges bounds the change notifications queued for slow
	// listeners; beyond it, pending notifications are merged (see OnChange).
	MaxPendingChanges int

	// Logger receives the cache's logs, with subsystem=client.cache; nil
	// means the Client's logger.
	Logger *slog.Logger
}

// DefaultCacheConfig returns the defaults, each with its reason.
func DefaultCacheConfig() CacheConfig {
	return CacheConfig{
		// Lower floods the registry with polls; watching clients are told
		// of changes at once anyway.
		PollInterval: 5 * time.Second,
		// A plain Eureka server stays plain; one full fetch a minute to
		// notice an upgrade is cheap.
		WatchRetryInterval: time.Minute,
		// Comfortably above any sensible server keep-alive (tens of
		// seconds); a reconnect resumes where it left off, so a quiet
		// stream dropped by mistake costs nothing but a request.
		WatchIdleTimeout: 90 * time.Second,
		// Retry a dead registry at most every 30 s: often enough to catch
		// up soon after it returns, rarely enough not to hammer it while
		// it starts.
		RetryMax: 30 * time.Second,
		// The file serves only restarts during outages; writing it more
		// often buys nothing.
		CacheFileInterval: 10 * time.Second,
		// A listener that falls this far behind gets one merged change.
		MaxPendingChanges: 64,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c CacheConfig) Validate() error {
	for i, a := range c.Apps {
		if strings.TrimSpace(a) == "" {
			return heureka.InvalidConfig(fmt.Sprintf("Apps[%d]", i), a, "is empty")
		}
	}
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "PollInterval", Value: c.PollInterval},
		heureka.NamedDuration{Field: "WatchRetryInterval", Value: c.WatchRetryInterval},
		heureka.NamedDuration{Field: "WatchIdleTimeout", Value: c.WatchIdleTimeout},
		heureka.NamedDuration{Field: "RetryMax", Value: c.RetryMax},
		heureka.NamedDuration{Field: "CacheFileInterval", Value: c.CacheFileInterval},
	); err != nil {
		return err
	}
	switch {
	case c.RetryMax < c.PollInterval:
		return heureka.InvalidConfig("RetryMax", c.RetryMax, "is less than PollInterval %v", c.PollInterval)
	case c.MaxPendingChanges < 1:
		return heureka.InvalidConfig("MaxPendingChanges", c.MaxPendingChanges, "want at least 1")
	}
	return nil
}

func invalid(field, msg string) error {
	return heureka.Errorf(heureka.EINVALID, "client: %s %s", field, msg)
}

func invalidf(format string, args ...any) error {
	return heureka.Errorf(heureka.EINVALID, "client: "+format, args...)
}

// parseBase checks a registry base URL: absolute http or https, no query or
// fragment. The trailing slash is dropped.
func parseBase(s string) (*url.URL, error) {
	u, err := urlcheck.Parse(s)
	if err != nil {
		if u, perr := url.Parse(strings.TrimSpace(s)); perr == nil {
			return nil, heureka.Errorf(heureka.EINVALID, "%q: want an http:// or https:// URL with a host", redact(u))
		}
		return nil, heureka.Errorf(heureka.EINVALID, "want an http:// or https:// URL with a host: %v", err)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, heureka.Errorf(heureka.EINVALID, "%q: a base URL takes no query or fragment", redact(u))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func redact(u *url.URL) string { return u.Redacted() }

// checkBase is parseBase's refusal of the URL s, as a *heureka.ConfigError
// for field; the reason quotes the URL with any password redacted.
func checkBase(field, s string) error {
	if _, err := parseBase(s); err != nil {
		return heureka.InvalidConfig(field, nil, "%v", err)
	}
	return nil
}

// pathless is err without the file name a *fs.PathError repeats, for an
// error that names the file already.
func pathless(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

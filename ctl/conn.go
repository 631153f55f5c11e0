package ctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/urlcheck"
)

// DefaultURL is where a registry listens unless told otherwise.
const DefaultURL = "http://127.0.0.1:8761/eureka"

// Config is how the operator commands reach one registry cluster.
type Config struct {
	// URLs are the registry's Eureka base URLs, tried in order. A
	// user:password in one is sent as basic auth.
	URLs []string
	// Timeout bounds one command's calls to the registry (for a stream,
	// each read of the whole registry).
	Timeout time.Duration
	// CAFile, CertFile and KeyFile are PEM files: the CAs of an https
	// registry, and a client certificate for one that verifies clients.
	CAFile, CertFile, KeyFile string
	// Token is a bearer token for a registry that requires credentials.
	Token string
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		// A registry on this machine, where `heureka server` and the demo
		// listen by default.
		URLs: []string{DefaultURL},
		// Long enough for a registry of 100,000 instances to answer a full
		// read on a busy machine; short enough that an operator hears of a
		// dead one without waiting long.
		Timeout: 10 * time.Second,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	if len(c.URLs) == 0 {
		return heureka.InvalidConfig("URLs", nil, "is empty: give the registry's URL, e.g. %s", DefaultURL)
	}
	for i, u := range c.URLs {
		if _, err := urlcheck.Parse(u); err != nil {
			return heureka.InvalidConfig(fmt.Sprintf("URLs[%d]", i), u, "is not a URL like %s", DefaultURL)
		}
	}
	return heureka.Positive(heureka.NamedDuration{Field: "Timeout", Value: c.Timeout})
}

// ClientConfig is c as the configuration of a client for one command: one
// pass over the URLs (an operator would rather hear at once than wait for
// retries), with Timeout as the read timeout and a connect timeout of at
// most 5 s, and no logs (errors are the command's to explain).
func (c Config) ClientConfig() client.Config {
	cc := client.DefaultConfig()
	cc.URLs = c.URLs
	cc.ConnectTimeout = min(c.Timeout, 5*time.Second)
	cc.ReadTimeout = c.Timeout
	cc.Rounds = 1
	cc.Logger = slog.New(slog.DiscardHandler)
	cc.CAFile, cc.CertFile, cc.KeyFile, cc.BearerToken = c.CAFile, c.CertFile, c.KeyFile, c.Token
	return cc
}

// Conn is one command's connection to a registry cluster: a client and
// the words to explain its errors with.
type Conn struct {
	cfg    Config
	client *client.Client
	shown  []string // the URLs with any password redacted, for messages
}

// Open checks cfg and returns a connection. Nothing is dialled yet.
func Open(cfg Config) (*Conn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := client.New(cfg.ClientConfig())
	if err != nil {
		return nil, err
	}
	conn := &Conn{cfg: cfg, client: c}
	for _, u := range cfg.URLs {
		p, _ := urlcheck.Parse(u)
		conn.shown = append(conn.shown, p.Redacted())
	}
	return conn, nil
}

// Client is the connection's client.
func (c *Conn) Client() *client.Client { return c.client }

// Close releases the connection.
func (c *Conn) Close() error { return c.client.Close() }

// bound bounds ctx by the connection's Timeout, for a one-shot command.
func (c *Conn) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.Timeout)
}

// NotFoundError says that what a command was asked about does not exist:
// an application, an instance, or enough DataNodes to pick. The CLI exits
// 3 for it.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Explain turns a client error into one an operator can act on: what
// failed (what), and for an answer of 404 notFound (when given) as a
// *NotFoundError.
func (c *Conn) Explain(err error, what string, notFound ...string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", what, err)
	case errors.Is(err, client.ErrUnavailable):
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status >= 500 {
			return fmt.Errorf("%s: the registry failed: %v", what, err)
		}
		cause := err
		var oe *net.OpError
		if errors.As(err, &oe) {
			cause = oe
		}
		return fmt.Errorf("cannot reach the registry at %s: %v; is `heureka server` running? set --registry or HEUREKA_REGISTRY",
			strings.Join(c.shown, ", "), cause)
	case errors.Is(err, client.ErrNotRegistered):
		if len(notFound) > 0 {
			return &NotFoundError{notFound[0]}
		}
		return &NotFoundError{fmt.Sprintf("%s: not registered (%v)", what, err)}
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return fmt.Errorf("%s: %w%s", what, err, authHint(ce.Status))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// authHint says how to give credentials after a 401 or 403.
func authHint(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "; the registry wants credentials: set HEUREKA_TOKEN or put user:password in the --registry URL"
	case http.StatusForbidden:
		return "; these credentials may not do this (operator commands need the operator role)"
	}
	return ""
}

// instanceByID finds an instance by its ID alone.
func (c *Conn) instanceByID(ctx context.Context, id string) (*heureka.Instance, error) {
	if id == "" {
		return nil, heureka.InvalidConfig("ID", nil, "is empty: give an instance ID (see `heureka instances APP`)")
	}
	in, err := c.client.InstanceByID(ctx, id)
	return in, c.Explain(err, fmt.Sprintf("instance %q", id),
		fmt.Sprintf("instance %q is not registered; list instances with `heureka instances APP` (applications: `heureka apps`)", id))
}

// application reads one application.
func (c *Conn) application(ctx context.Context, app string) (*heureka.Application, error) {
	app = strings.ToUpper(app)
	a, err := c.client.Application(ctx, app)
	return a, c.Explain(err, fmt.Sprintf("application %q", app), noInstances(app))
}

func noInstances(app string) string {
	return fmt.Sprintf("application %q has no instances; list applications with `heureka apps`", app)
}

// listing reads the whole registry with the position it was read at
// (heureka servers only).
func (c *Conn) listing(ctx context.Context) (*heureka.Applications, client.Position, error) {
	apps, pos, err := c.client.Listing(ctx)
	if errors.Is(err, client.ErrNotHeureka) {
		return nil, pos, err
	}
	return apps, pos, c.Explain(err, "read the registry")
}

package yarnrole

import (
	"context"
	"net/http"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/internal/reach"
	"github.com/heureka-project/heureka/yarn"
)

// Config is where the role reads its ResourceManager and what it
// registers. Start from DefaultConfig and set URL.
type Config struct {
	// URL is the RM's web address (yarn.resourcemanager.webapp.address),
	// e.g. "http://127.0.0.1:8088".
	URL string
	// ClusterID is yarn.resourcemanager.cluster-id, which the RMs of one
	// HA cluster share: an RM that answers with another is refused (see
	// the package doc). "" checks nothing, and saves the probe a request.
	ClusterID string
	// Port is the RM's client RPC port (yarn.resourcemanager.address),
	// registered as the Eureka port.
	Port int
}

// DefaultConfig returns the defaults, each with its reason; URL is left
// empty.
func DefaultConfig() Config {
	// The port YARN clients submit applications to, on every RM.
	return Config{Port: yarn.DefaultPort}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	if _, _, err := reach.Base(c.URL); err != nil {
		return heureka.InvalidConfig("URL", c.URL, "is not like http://HOST:8088")
	}
	if c.Port < 1 || c.Port > 65535 {
		return heureka.InvalidConfig("Port", c.Port, "is out of range 1-65535")
	}
	if len(c.ClusterID) > 256 || strings.ContainsAny(c.ClusterID, "\r\n") {
		return heureka.InvalidConfig("ClusterID", c.ClusterID, "is not a cluster id (one line, at most 256 bytes)")
	}
	return nil
}

// Role is a ResourceManager as the agent sees it.
type Role struct {
	cfg Config
	web *reach.Web[yarn.ResourceManager]
}

var _ agent.Role = (*Role)(nil)

// New checks cfg and returns the role. It dials nothing.
func New(cfg Config) (*Role, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	web, err := reach.NewWeb(cfg.URL, func(ctx context.Context, c *http.Client, base string) (yarn.ResourceManager, error) {
		return yarn.Read(ctx, c, base, cfg.ClusterID)
	})
	return &Role{cfg: cfg, web: web}, err
}

// Probe reads the RM's cluster information: its HA state is the role
// state; yarn.ResourceManager.Health, or an RM of another cluster, makes
// it unhealthy.
func (r *Role) Probe(ctx context.Context) (agent.Health, error) { return r.web.Probe(ctx) }

// Collect reads the RM's version.
func (r *Role) Collect(ctx context.Context) (agent.Figures, error) {
	rm, err := r.web.Read(ctx)
	if err != nil {
		return agent.Figures{}, err
	}
	return r.web.Figures(r.cfg.Port, heureka.MetaVersion, rm.Version), nil
}

// Static is the configured ports.
func (r *Role) Static() agent.Figures { return r.web.Figures(r.cfg.Port) }

// Material: every change (a version, a port) is.
func (r *Role) Material(old, new agent.Figures) bool { return old != new }

package zookeeperrole

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/internal/reach"
	"github.com/heureka-project/heureka/zookeeper"
)

// Config is where the role reads its server and what it registers. Start
// from DefaultConfig and set URL.
type Config struct {
	// URL is the server's AdminServer, e.g. "http://127.0.0.1:8080".
	URL string
	// Ensemble is the ensemble's voting members as zoo.cfg's server.N
	// lines name them, "1=zk1:2888,2=zk2:2888,3=zk3:2888" (ELECTIONPORT
	// may follow): a server of another ensemble is refused (see the
	// package doc). "" checks nothing, and saves the probe a request.
	Ensemble string
	// Port is the client port (clientPort), registered as the Eureka
	// port.
	Port int
}

// DefaultConfig returns the defaults, each with its reason; URL is left
// empty.
func DefaultConfig() Config {
	// ZooKeeper's own default client port.
	return Config{Port: zookeeper.DefaultPort}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	if _, _, err := reach.Base(c.URL); err != nil {
		return heureka.InvalidConfig("URL", c.URL, "is not like http://HOST:8080")
	}
	if c.Port < 1 || c.Port > 65535 {
		return heureka.InvalidConfig("Port", c.Port, "is out of range 1-65535")
	}
	if _, err := zookeeper.ParseEnsemble(c.Ensemble); err != nil {
		return heureka.InvalidConfig("Ensemble", c.Ensemble, "%v", err)
	}
	return nil
}

// Role is a ZooKeeper server as the agent sees it.
type Role struct {
	cfg Config
	web *reach.Web[zookeeper.Mntr]
}

var _ agent.Role = (*Role)(nil)

// New checks cfg and returns the role. It dials nothing.
func New(cfg Config) (*Role, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ensemble, _ := zookeeper.ParseEnsemble(cfg.Ensemble)
	web, err := reach.NewWeb(cfg.URL, func(ctx context.Context, c *http.Client, base string) (zookeeper.Mntr, error) {
		return zookeeper.Read(ctx, c, base, ensemble)
	})
	return &Role{cfg: cfg, web: web}, err
}

// Probe reads the server's mntr: its state, and whether it serves.
func (r *Role) Probe(ctx context.Context) (agent.Health, error) { return r.web.Probe(ctx) }

// Collect reads the server's version and counts. A server that is not
// serving reports none, and keeps the ones it had.
func (r *Role) Collect(ctx context.Context) (agent.Figures, error) {
	m, err := r.web.Read(ctx)
	if err != nil {
		return agent.Figures{}, err
	}
	if m.State == zookeeper.StateNotServing {
		return agent.Figures{}, heureka.Errorf(heureka.EUNAVAILABLE, "%s: the server is not serving; no figures to read", r.web.URL())
	}
	return r.web.Figures(r.cfg.Port, heureka.MetaVersion, m.Version,
		zookeeper.MetaOutstandingRequests, strconv.FormatInt(m.OutstandingRequests, 10),
		zookeeper.MetaZnodeCount, strconv.FormatInt(m.ZnodeCount, 10),
		zookeeper.MetaConnections, strconv.FormatInt(m.AliveConnections, 10)), nil
}

// Static is the configured ports.
func (r *Role) Static() agent.Figures { return r.web.Figures(r.cfg.Port) }

// drifting are the figures that change with load, not with the server.
var drifting = []string{zookeeper.MetaOutstandingRequests, zookeeper.MetaZnodeCount, zookeeper.MetaConnections}

// Material: a change of port or version, not of the counts.
func (r *Role) Material(old, new agent.Figures) bool {
	return old.Port != new.Port || slices.ContainsFunc(old.Metadata.ChangedKeys(new.Metadata), func(k string) bool {
		return !slices.Contains(drifting, k)
	})
}

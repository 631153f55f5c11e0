package elasticsearchrole

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/internal/reach"
	"github.com/heureka-project/heureka/elasticsearch"
)

// Config is where the role reads its node and what it registers. Start
// from DefaultConfig and set URL.
type Config struct {
	// URL is the node's HTTP address, e.g. "http://127.0.0.1:9200".
	URL string
	// ClusterUUID is the cluster's UUID (GET / shows it): a node that
	// answers with another is refused (see the package doc). "" checks
	// nothing.
	ClusterUUID string
	// RackAttribute is the node attribute that holds its rack
	// (node.attr.<name>), which Rack reads.
	RackAttribute string
	// Port is registered as the Eureka port; 0 takes the node's HTTP
	// publish port, the one clients use.
	Port int
}

// DefaultConfig returns the defaults, each with its reason; URL is left
// empty.
func DefaultConfig() Config {
	// The attribute Elasticsearch's shard-allocation-awareness docs use.
	return Config{RackAttribute: elasticsearch.DefaultRackAttribute}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	switch {
	case c.Port < 0 || c.Port > 65535:
		return heureka.InvalidConfig("Port", c.Port, "is out of range 0-65535")
	case len(c.ClusterUUID) > 64 || strings.ContainsAny(c.ClusterUUID, " \t\r\n"):
		return heureka.InvalidConfig("ClusterUUID", c.ClusterUUID, "is not a cluster UUID")
	case c.RackAttribute == "" || strings.ContainsAny(c.RackAttribute, " \t\r\n"):
		return heureka.InvalidConfig("RackAttribute", c.RackAttribute, "is not an attribute name such as rack_id")
	}
	if _, _, err := reach.Base(c.URL); err != nil {
		return heureka.InvalidConfig("URL", c.URL, "is not like http://HOST:9200")
	}
	return nil
}

// Role is an Elasticsearch node as the agent sees it.
type Role struct {
	cfg Config
	web *reach.Web[elasticsearch.Node]
}

var _ agent.Role = (*Role)(nil)

// New checks cfg and returns the role. It dials nothing.
func New(cfg Config) (*Role, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	web, err := reach.NewWeb(cfg.URL, func(ctx context.Context, c *http.Client, base string) (elasticsearch.Node, error) {
		return elasticsearch.Read(ctx, c, base, cfg.ClusterUUID)
	})
	return &Role{cfg: cfg, web: web}, err
}

// Probe reads the node: its role state, and whether it is healthy.
func (r *Role) Probe(ctx context.Context) (agent.Health, error) { return r.web.Probe(ctx) }

// Collect reads the node's figures.
func (r *Role) Collect(ctx context.Context) (agent.Figures, error) {
	n, err := r.web.Read(ctx)
	if err != nil {
		return agent.Figures{}, err
	}
	kv := []string{heureka.MetaVersion, n.Version, elasticsearch.MetaNodeID, n.ID, elasticsearch.MetaNodeName, n.Name,
		elasticsearch.MetaNodeRoles, strings.Join(n.Roles, ","), elasticsearch.MetaClusterName, n.ClusterName}
	if _, p, err := net.SplitHostPort(n.TransportAddr); err == nil {
		kv = append(kv, elasticsearch.MetaTransportPort, p)
	}
	port := r.cfg.Port
	if port == 0 {
		_, p, _ := net.SplitHostPort(n.HTTPAddr) // ParseNodesLocal checked it
		port, _ = strconv.Atoi(p)
	}
	return r.figures(port, kv...), nil
}

// Static is the configured port, or the one in Config.URL.
func (r *Role) Static() agent.Figures { return r.figures(r.cfg.Port) }

// Material: every change is (they are the node's identity, version and
// ports).
func (r *Role) Material(old, new agent.Figures) bool { return old != new }

// Rack reads the node's rack attribute (Config.RackAttribute); "" when
// the node has none.
func (r *Role) Rack(ctx context.Context) (string, error) {
	n, err := r.web.Read(ctx)
	if err != nil {
		return "", err
	}
	return n.Rack(r.cfg.RackAttribute), nil
}

// figures registers port, or else the one in Config.URL.
func (r *Role) figures(port int, kv ...string) agent.Figures {
	return r.web.Figures(cmp.Or(port, r.web.HTTPPort()), kv...)
}

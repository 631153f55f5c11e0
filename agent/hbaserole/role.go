package hbaserole

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/internal/reach"
	"github.com/heureka-project/heureka/hbase"
)

// Config is where the role reads its HBase server and what it registers.
// Start from DefaultConfig and set Role and URL.
type Config struct {
	// Role is hbase.MasterRoleName or hbase.RegionServerRoleName, also
	// the agent's Config.Role.
	Role string
	// URL is the server's info address (hbase.master.info.port 16010,
	// hbase.regionserver.info.port 16030), e.g. "http://127.0.0.1:16030".
	URL string
	// ClusterID is the cluster's tag.clusterId: a server that answers
	// with another is refused (see the package doc). "" checks nothing.
	ClusterID string
	// Port is the RPC port registered as the Eureka port; 0 takes the
	// one in the server's name (tag.serverName).
	Port int
	// MasterURLs are the masters' info addresses, which a RegionServer's
	// probe asks which master is active and whether it counts this
	// RegionServer dead, at most every MasterCheckInterval; none skips the
	// check. Masters ignore them.
	MasterURLs          []string
	MasterCheckInterval time.Duration
}

// DefaultConfig returns the defaults, each with its reason; Role and URL
// are left empty.
func DefaultConfig() Config {
	return Config{
		// The active master learns of a dead RegionServer only when its
		// ZooKeeper session expires (zookeeper.session.timeout, 90 s by
		// default), so 10 s more delays the verdict little; asking every
		// second would have every RegionServer read the master's list of
		// all of them (some 40 bytes a server) every second.
		MasterCheckInterval: 10 * time.Second,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	switch {
	case c.Role != hbase.MasterRoleName && c.Role != hbase.RegionServerRoleName:
		return heureka.InvalidConfig("Role", c.Role, "is not %s or %s", hbase.MasterRoleName, hbase.RegionServerRoleName)
	case c.Port < 0 || c.Port > 65535:
		return heureka.InvalidConfig("Port", c.Port, "is out of range 0-65535")
	case len(c.ClusterID) > 256 || strings.ContainsAny(c.ClusterID, "\r\n"):
		return heureka.InvalidConfig("ClusterID", c.ClusterID, "is not a cluster id (one line, at most 256 bytes)")
	}
	if err := heureka.Positive(heureka.NamedDuration{Field: "MasterCheckInterval", Value: c.MasterCheckInterval}); err != nil {
		return err
	}
	if _, _, err := reach.Base(c.URL); err != nil {
		return heureka.InvalidConfig("URL", c.URL, "is not like http://HOST:16030")
	}
	for _, u := range c.MasterURLs {
		if _, _, err := reach.Base(u); err != nil {
			return heureka.InvalidConfig("MasterURLs", u, "is not like http://HOST:16010")
		}
	}
	return nil
}

// Role is an HBase master or RegionServer as the agent sees it.
type Role struct {
	cfg      Config
	base     string
	masters  []string
	httpPort int
	http     *http.Client

	mu        sync.Mutex // guards the master's view, which Probe keeps
	checkedAt time.Time
	active    *hbase.Master // the active master's answer; nil when unknown
}

var _ agent.Role = (*Role)(nil)

// New checks cfg and returns the role. It dials nothing.
func New(cfg Config) (*Role, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Role{cfg: cfg, http: reach.Client()}
	r.base, r.httpPort, _ = reach.Base(cfg.URL)
	if cfg.Role == hbase.RegionServerRoleName {
		for _, u := range cfg.MasterURLs {
			b, _, _ := reach.Base(u)
			r.masters = append(r.masters, b)
		}
	}
	return r, nil
}

func (r *Role) master() bool { return r.cfg.Role == hbase.MasterRoleName }

// read reads the server's bean: a master's, or a RegionServer's.
func (r *Role) read(ctx context.Context) (m hbase.Master, rs hbase.RegionServer, err error) {
	if r.master() {
		m, err = reach.Read(ctx, func(ctx context.Context) (hbase.Master, error) {
			return hbase.ReadMaster(ctx, r.http, r.base, r.cfg.ClusterID)
		})
		return m, rs, err
	}
	rs, err = reach.Read(ctx, func(ctx context.Context) (hbase.RegionServer, error) {
		return hbase.ReadRegionServer(ctx, r.http, r.base, r.cfg.ClusterID)
	})
	return m, rs, err
}

// Probe reads the server's bean. A master's role state is active or
// backup; a RegionServer's is serving, and it is unhealthy when the active
// master counts it dead.
func (r *Role) Probe(ctx context.Context) (agent.Health, error) {
	m, rs, err := r.read(ctx)
	if r.master() {
		return reach.Health(err, m.RoleState, m.Health)
	}
	return reach.Health(err, rs.RoleState, func() (bool, string) { return rs.Health(r.activeMaster(ctx)) })
}

// activeMaster returns the active master's last answer, asking the
// masters again once MasterCheckInterval has passed; nil when none is
// known.
func (r *Role) activeMaster(ctx context.Context) *hbase.Master {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.masters) == 0 || time.Since(r.checkedAt) < r.cfg.MasterCheckInterval {
		return r.active
	}
	r.checkedAt, r.active = time.Now(), nil
	for _, u := range r.masters {
		if m, err := hbase.ReadMaster(ctx, r.http, u, r.cfg.ClusterID); err == nil && m.Active {
			r.active = &m
			break
		}
	}
	return r.active
}

// Collect reads the server's figures.
func (r *Role) Collect(ctx context.Context) (agent.Figures, error) {
	m, rs, err := r.read(ctx)
	if err != nil {
		return agent.Figures{}, err
	}
	if r.master() {
		kv := []string{hbase.MetaServerName, m.ServerName}
		if m.Active {
			kv = append(kv, hbase.MetaRegionServers, strconv.FormatInt(m.NumRegionServers, 10),
				hbase.MetaDeadRegionServers, strconv.FormatInt(m.NumDeadRegionServers, 10))
		}
		return r.figures(m.ServerName, kv...), nil
	}
	return r.figures(rs.ServerName, hbase.MetaServerName, rs.ServerName,
		hbase.MetaRegionCount, strconv.FormatInt(rs.RegionCount, 10),
		hbase.MetaStoreFileCount, strconv.FormatInt(rs.StoreFileCount, 10)), nil
}

// Static is the configured ports (the role's default RPC port when
// Config.Port is 0).
func (r *Role) Static() agent.Figures { return r.figures("") }

// drifting are the figures that change with load, not with the server.
var drifting = []string{hbase.MetaRegionCount, hbase.MetaStoreFileCount}

// Material: a change of port or of any figure but the regions and store
// files.
func (r *Role) Material(old, new agent.Figures) bool {
	return old.Port != new.Port || slices.ContainsFunc(old.Metadata.ChangedKeys(new.Metadata), func(k string) bool {
		return !slices.Contains(drifting, k)
	})
}

// figures builds the figures of a server named serverName ("" before it
// was read), with the role's keys kv.
func (r *Role) figures(serverName string, kv ...string) agent.Figures {
	port := r.cfg.Port
	if port == 0 {
		port = rpcPort(serverName)
	}
	if port == 0 && r.master() {
		port = hbase.DefaultMasterPort
	} else if port == 0 {
		port = hbase.DefaultRegionServerPort
	}
	return reach.Figures(port, r.httpPort, kv...)
}

// rpcPort is the port of a server name "host,port,startcode"; 0 when it
// has none.
func rpcPort(serverName string) int {
	parts := strings.Split(serverName, ",")
	if len(parts) != 3 {
		return 0
	}
	p, err := strconv.Atoi(parts[1])
	if err != nil || p < 1 || p > 65535 {
		return 0
	}
	return p
}

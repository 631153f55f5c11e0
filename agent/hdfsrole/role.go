package hdfsrole

import (
	"context"
	"strconv"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/hdfs"
)

// Config is what the HDFS role registers beyond what its daemon says.
// Start from DefaultConfig and set Role.
type Config struct {
	// Role is the daemon: hdfs.RoleDataNode or hdfs.RoleNameNode. The
	// agent's Config.Role is Name(), "hdfs-datanode" or "hdfs-namenode".
	Role hdfs.Role
	// Port is the daemon's main port, registered as the Eureka port and in
	// the metadata: a DataNode's data-transfer port (data_port), a
	// NameNode's client RPC port (rpc_port). 0 takes what the daemon's JMX
	// reports.
	Port int
	// HTTPPort is the daemon's web port (/jmx and /webhdfs/v1), registered
	// as http_port metadata so WebHDFS clients and gateways can find it; 0
	// registers none.
	HTTPPort int
	// AdminState is a DataNode's metadata status: its JMX does not report
	// it (the NameNode knows), so the operator says it. NameNodes report
	// their FSState (Operational, safeMode) instead. "" is NORMAL.
	AdminState hdfs.AdminState
	// A change in the figures is material, and pushed at once, when disk
	// use moves by more than DiskChange of the capacity, the capacity by
	// more than DiskChange of itself, or the block count by more than
	// BlockChange of itself (fractions); and so is any change of version,
	// status or port.
	DiskChange  float64
	BlockChange float64
}

// DefaultConfig returns the defaults, each with its reason; Role is left
// empty.
func DefaultConfig() Config {
	return Config{
		// A DataNode in service, until the operator says otherwise.
		AdminState: hdfs.AdminNormal,
		// 1%: placement cares about fullness to a few percent; finer
		// changes would re-register every DataNode every few seconds
		// under write load.
		DiskChange:  0.01,
		BlockChange: 0.01,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	switch {
	case c.Role != hdfs.RoleDataNode && c.Role != hdfs.RoleNameNode:
		return heureka.InvalidConfig("Role", string(c.Role), "is not datanode or namenode")
	case c.Port < 0 || c.Port > 65535:
		return heureka.InvalidConfig("Port", c.Port, "is out of range 0-65535")
	case c.HTTPPort < 0 || c.HTTPPort > 65535:
		return heureka.InvalidConfig("HTTPPort", c.HTTPPort, "is out of range 0-65535")
	case !(c.DiskChange >= 0 && c.DiskChange < 1):
		return heureka.InvalidConfig("DiskChange", c.DiskChange, "is not a fraction in [0, 1)")
	case !(c.BlockChange >= 0 && c.BlockChange < 1):
		return heureka.InvalidConfig("BlockChange", c.BlockChange, "is not a fraction in [0, 1)")
	}
	if _, ok := hdfs.ParseAdminState(string(c.AdminState)); !ok && c.AdminState != "" {
		return heureka.InvalidConfig("AdminState", string(c.AdminState), "is not one of NORMAL, DECOMMISSION_INPROGRESS, DECOMMISSIONED, ENTERING_MAINTENANCE, IN_MAINTENANCE")
	}
	return nil
}

// Name is the role's name for agent.Config.Role: hdfs.RoleName(c.Role).
func (c Config) Name() string { return hdfs.RoleName(c.Role) }

// Role is an HDFS daemon as the agent sees it: an agent.Role over a Daemon
// (a JMXDaemon in production). It maps the daemon's hdfs.NodeInfo to the
// hdfs.Meta* keys, and a NameNode's HA state to its role state.
type Role struct {
	cfg Config
	d   Daemon
}

var _ agent.Role = (*Role)(nil)

// New checks cfg and returns the role over d. It has no side effects.
func New(cfg Config, d Daemon) (*Role, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d == nil {
		return nil, heureka.Errorf(heureka.EINVALID, "hdfsrole: the daemon must not be nil")
	}
	st, ok := hdfs.ParseAdminState(string(cfg.AdminState))
	if !ok {
		st = hdfs.AdminNormal // "", which Validate lets through
	}
	cfg.AdminState = st
	return &Role{cfg: cfg, d: d}, nil
}

// Probe probes the daemon. A NameNode's HA state is its role state, and
// is registered under hdfs.MetaHAState too (with its transition time),
// where readers from before roles look for it.
func (r *Role) Probe(ctx context.Context) (agent.Health, error) {
	h, err := r.d.Probe(ctx)
	if err != nil || r.cfg.Role != hdfs.RoleNameNode {
		return agent.Health{}, err
	}
	var kv []string
	if h.HAState != "" {
		kv = append(kv, hdfs.MetaHAState, string(h.HAState))
	}
	if h.HATransitionTime > 0 {
		kv = append(kv, hdfs.MetaHATransitionTime, strconv.FormatInt(h.HATransitionTime, 10))
	}
	return agent.Health{State: string(h.HAState), Metadata: heureka.NewMetadata(kv...)}, nil
}

// Collect reads the daemon's figures, with what the configuration decides
// over what the daemon says. A NameNode's HA state is left out: the probe,
// which reads it every second, owns it.
func (r *Role) Collect(ctx context.Context) (agent.Figures, error) {
	info, err := r.d.Collect(ctx)
	if err != nil {
		return agent.Figures{}, err
	}
	return r.figures(info), nil
}

// Static is what the configuration alone says: the port, http_port and a
// DataNode's admin state.
func (r *Role) Static() agent.Figures { return r.figures(hdfs.NodeInfo{}) }

// Material reports whether the registry must hear of the change at once:
// any change of version, status, ports, rack or a NameNode's HA identity;
// capacity becoming known or
// unknown or moving by more than DiskChange of itself; disk use moving by
// more than DiskChange of the capacity; the block count becoming known or
// unknown or moving by more than BlockChange of itself.
func (r *Role) Material(old, new agent.Figures) bool {
	o, _ := hdfs.ReadNodeInfo(old.Metadata) // what figures wrote: nothing to complain of
	n, _ := hdfs.ReadNodeInfo(new.Metadata)
	return old.Port != new.Port || material(o, n, r.cfg.DiskChange, r.cfg.BlockChange)
}

// figures sets what the configuration decides over what the daemon says
// (main port, web port and, for DataNodes, the admin state), and writes
// the result as the role's figures. The rack is the agent's.
func (r *Role) figures(info hdfs.NodeInfo) agent.Figures {
	info.Rack = ""
	info.HTTPPort = r.cfg.HTTPPort
	info.HAState, info.HATransitionTime = "", 0
	port := 0
	switch r.cfg.Role {
	case hdfs.RoleDataNode:
		info.Status = string(r.cfg.AdminState)
		if r.cfg.Port > 0 {
			info.DataPort = r.cfg.Port
		}
		port = info.DataPort
	case hdfs.RoleNameNode:
		info.DataPort = 0
		if r.cfg.Port > 0 {
			info.RPCPort = r.cfg.Port
		}
		port = info.RPCPort
	}
	return agent.Figures{Port: port, Metadata: info.WriteMetadata(heureka.Metadata{})}
}

// material reports whether new differs from old enough to tell the
// registry: any change of rack, version, status, HA state or transition
// time, HA identity (nameservice, NameNode ID), or ports; capacity becoming known or unknown or moving by more than
// disk of itself; disk use moving by more than disk of the capacity; the
// block count becoming known or unknown or moving by more than block of
// itself.
func material(old, new hdfs.NodeInfo, disk, block float64) bool {
	if old.Rack != new.Rack || old.Version != new.Version || old.Status != new.Status ||
		old.HAState != new.HAState || old.HATransitionTime != new.HATransitionTime ||
		old.Nameservice != new.Nameservice || old.NameNodeID != new.NameNodeID ||
		old.DataPort != new.DataPort || old.RPCPort != new.RPCPort || old.HTTPPort != new.HTTPPort {
		return true
	}
	moved := func(a, b int64, limit float64) bool {
		d := a - b
		if d < 0 {
			d = -d
		}
		return float64(d) > limit
	}
	if (old.DiskTotal == 0) != (new.DiskTotal == 0) || moved(old.DiskTotal, new.DiskTotal, disk*float64(old.DiskTotal)) {
		return true
	}
	base := max(old.DiskTotal, new.DiskTotal)
	if base == 0 {
		base = old.DiskUsed // capacity unknown: compare use with itself
	}
	if moved(old.DiskUsed, new.DiskUsed, disk*float64(base)) {
		return true
	}
	return (old.BlockCount == 0) != (new.BlockCount == 0) ||
		moved(old.BlockCount, new.BlockCount, block*float64(old.BlockCount))
}

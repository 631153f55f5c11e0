package sim

import (
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

// Config is what a simulated daemon is and where it listens.
type Config struct {
	// Role is hdfs.RoleDataNode or hdfs.RoleNameNode.
	Role hdfs.Role
	// HTTPAddr serves /jmx (Hadoop: DataNode 9864, NameNode 9870).
	HTTPAddr string
	// PortAddr is the data-transfer (DataNode, Hadoop 9866) or client RPC
	// (NameNode, Hadoop 8020) listener: HOST:PORT, or a bare port number
	// on HTTPAddr's host.
	PortAddr string
	// ControlAddr serves the /sim/ control API. It stays up while the
	// daemon is stopped.
	ControlAddr string

	// Hostname is the name the daemon reports for itself (DatanodeHostname,
	// tag.Hostname, the host of NameNodeStatus.HostAndPort).
	Hostname  string
	Version   string // e.g. "3.3.6"
	ClusterID string // e.g. "CID-..."

	// Capacity, Used and Blocks are the DataNode's own figures (bytes,
	// bytes, blocks) or, for a NameNode, the cluster's.
	Capacity int64
	Used     int64
	Blocks   int64
	// Volumes are a DataNode's storage directories, named in VolumeInfo;
	// the figures are split evenly between them.
	Volumes []string

	// HAState is a NameNode's state at start (active or standby).
	HAState hdfs.HAState
	// Stopped starts the daemon stopped: only the control API answers
	// until Start.
	Stopped bool

	// WebHDFS turns on the simulated WebHDFS surface (see WebHDFSConfig).
	WebHDFS WebHDFSConfig

	// Logger receives the simulator's logs, with subsystem=sim.
	Logger *slog.Logger
}

// DefaultConfig returns a simulated DataNode on loopback with free ports,
// each default with its reason.
func DefaultConfig() Config {
	return Config{
		Role: hdfs.RoleDataNode,
		// Free loopback ports: several simulators share one test machine
		// and none should be reachable from elsewhere by accident.
		HTTPAddr:    "127.0.0.1:0",
		PortAddr:    "127.0.0.1:0",
		ControlAddr: "127.0.0.1:0",
		Hostname:    "localhost",
		// A current Hadoop 3 release.
		Version:   "3.3.6",
		ClusterID: "CID-5e6d1f0a-heureka-sim",
		// A 4 TiB DataNode, a third full, with 128 MiB blocks on average.
		Capacity: 4 << 40,
		Used:     (4 << 40) / 3,
		Blocks:   ((4 << 40) / 3) / (128 << 20),
		Volumes:  []string{"/data/1/dfs/dn"},
		// The state an HA NameNode comes up in before a failover
		// controller promotes it.
		HAState: hdfs.HAStandby,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c Config) Validate() error {
	switch {
	case c.Role != hdfs.RoleDataNode && c.Role != hdfs.RoleNameNode:
		return heureka.InvalidConfig("Role", string(c.Role), "is not datanode or namenode")
	case c.HTTPAddr == "":
		return heureka.InvalidConfig("HTTPAddr", nil, "is empty")
	case c.PortAddr == "":
		return heureka.InvalidConfig("PortAddr", nil, "is empty")
	case c.portAddrErr() != nil:
		return c.portAddrErr()
	case c.ControlAddr == "":
		return heureka.InvalidConfig("ControlAddr", nil, "is empty")
	case strings.TrimSpace(c.Hostname) == "" || strings.ContainsAny(c.Hostname, " \t\r\n:"):
		return heureka.InvalidConfig("Hostname", c.Hostname, "must be a host name")
	case c.Capacity < 0:
		return heureka.InvalidConfig("Capacity", c.Capacity, "must not be negative")
	case c.Used < 0:
		return heureka.InvalidConfig("Used", c.Used, "must not be negative")
	case c.Blocks < 0:
		return heureka.InvalidConfig("Blocks", c.Blocks, "must not be negative")
	case c.Used > c.Capacity:
		return heureka.InvalidConfig("Used", c.Used, "is more than Capacity %d", c.Capacity)
	}
	if c.Role == hdfs.RoleNameNode {
		if _, ok := hdfs.ParseHAState(string(c.HAState)); !ok {
			return heureka.InvalidConfig("HAState", string(c.HAState), "is not one of active, standby, observer, initializing, stopping")
		}
	}
	if c.Role == hdfs.RoleDataNode && len(c.Volumes) == 0 {
		return heureka.InvalidConfig("Volumes", nil, "is empty; a DataNode has at least one storage directory")
	}
	return nil
}

func (c Config) portAddrErr() error {
	_, err := c.portAddr()
	return err
}

// portAddr is PortAddr as HOST:PORT.
func (c Config) portAddr() (string, error) {
	if _, err := strconv.Atoi(c.PortAddr); err != nil {
		return c.PortAddr, nil
	}
	h, _, err := net.SplitHostPort(c.HTTPAddr)
	if err != nil {
		return "", heureka.InvalidConfig("HTTPAddr", c.HTTPAddr, "is not HOST:PORT, which a bare PortAddr %s needs", c.PortAddr)
	}
	return net.JoinHostPort(h, c.PortAddr), nil
}

package sim

import (
	"testing"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/configtest"
)

// TestConfigRefusesByField: every setting of Config and ClusterConfig that
// cannot work is refused with a *heureka.ConfigError naming its field.
func TestConfigRefusesByField(t *testing.T) {
	configtest.Refuses(t, DefaultConfig(), configtest.Cases[Config]{
		"Role":        func(c *Config) { c.Role = "journalnode" },
		"HTTPAddr":    func(c *Config) { c.HTTPAddr = "" },
		"PortAddr":    func(c *Config) { c.PortAddr = "" },
		"ControlAddr": func(c *Config) { c.ControlAddr = "" },
		"Hostname":    func(c *Config) { c.Hostname = "a b" },
		"Capacity":    func(c *Config) { c.Capacity = -1 },
		"Used":        func(c *Config) { c.Used = -1 },
		"Used over":   func(c *Config) { c.Used = c.Capacity + 1 },
		"Blocks":      func(c *Config) { c.Blocks = -1 },
		"HAState":     func(c *Config) { c.Role, c.HAState = hdfs.RoleNameNode, "leader" },
		"Volumes":     func(c *Config) { c.Volumes = nil },
	})
	configtest.Refuses(t, DefaultClusterConfig(SystemHBase), configtest.Cases[ClusterConfig]{
		"System":        func(c *ClusterConfig) { c.System = "cassandra" },
		"Members":       func(c *ClusterConfig) { c.Members = 0 },
		"RegionServers": func(c *ClusterConfig) { c.RegionServers = 17 },
		"ClusterID":     func(c *ClusterConfig) { c.ClusterID = "a,b" },
		"Host":          func(c *ClusterConfig) { c.Host = "localhost" },
		"ControlAddr":   func(c *ClusterConfig) { c.ControlAddr = "" },
		"Racks[1]":      func(c *ClusterConfig) { c.Racks = []string{"r1", "r 2"} },
	})
	configtest.Refuses(t, DefaultClusterConfig(SystemYARN), configtest.Cases[ClusterConfig]{
		"Version":                 func(c *ClusterConfig) { c.Version = "" },
		"RegionServers not HBase": func(c *ClusterConfig) { c.RegionServers = 2 },
	})
}

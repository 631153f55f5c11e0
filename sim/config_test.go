package sim

import (
	"context"
	"net"
	"testing"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/configtest"
)

// TestConfigRefusesByField: every setting of Config and ClusterConfig that
// cannot work is refused with a *heureka.ConfigError naming its field.
func TestConfigRefusesByField(t *testing.T) {
	configtest.Refuses(t, DefaultConfig(), configtest.Cases[Config]{
		"Role":                         func(c *Config) { c.Role = "journalnode" },
		"HTTPAddr":                     func(c *Config) { c.HTTPAddr = "" },
		"PortAddr":                     func(c *Config) { c.PortAddr = "" },
		"HTTPAddr for a bare PortAddr": func(c *Config) { c.HTTPAddr, c.PortAddr = "localhost", "9866" },
		"ControlAddr":                  func(c *Config) { c.ControlAddr = "" },
		"Hostname":                     func(c *Config) { c.Hostname = "a b" },
		"Capacity":                     func(c *Config) { c.Capacity = -1 },
		"Used":                         func(c *Config) { c.Used = -1 },
		"Used over":                    func(c *Config) { c.Used = c.Capacity + 1 },
		"Blocks":                       func(c *Config) { c.Blocks = -1 },
		"HAState":                      func(c *Config) { c.Role, c.HAState = hdfs.RoleNameNode, "leader" },
		"Volumes":                      func(c *Config) { c.Volumes = nil },
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

// TestBarePortIsOnTheWebHost: a PortAddr that is a port number alone is
// opened on HTTPAddr's host.
func TestBarePortIsOnTheWebHost(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Role, cfg.HTTPAddr, cfg.PortAddr = hdfs.RoleDataNode, "127.0.0.2:0", "0"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if h, _, _ := net.SplitHostPort(s.PortAddr()); h != "127.0.0.2" {
		t.Errorf("PortAddr %q given as 0 beside HTTPAddr 127.0.0.2:0: opened at %s", cfg.PortAddr, s.PortAddr())
	}
}

package replication_test

import (
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/configtest"
	"github.com/heureka-project/heureka/replication"
)

// TestConfigRefusesByField: every setting that cannot work is refused
// with a *heureka.ConfigError naming its field.
func TestConfigRefusesByField(t *testing.T) {
	good := replication.DefaultConfig()
	good.NodeID = "n1"
	good.Peers = []string{"http://10.0.0.2:8761/eureka"}
	configtest.Refuses(t, good, configtest.Cases[replication.Config]{
		"Peers[1]":            func(c *replication.Config) { c.Peers = []string{good.Peers[0], "10.0.0.3:8761"} },
		"Peers[0]":            func(c *replication.Config) { c.Peers = []string{"http://u:p@10.0.0.2:8761/eureka"} },
		"NodeID":              func(c *replication.Config) { c.NodeID = "" },
		"BatchSize":           func(c *replication.Config) { c.BatchSize = 0 },
		"MaxBatchBytes":       func(c *replication.Config) { c.MaxBatchBytes = 0 },
		"QueueSize":           func(c *replication.Config) { c.QueueSize = -1 },
		"BatchDelay":          func(c *replication.Config) { c.BatchDelay = -time.Second },
		"MaxOutage":           func(c *replication.Config) { c.MaxOutage = -time.Second },
		"SyncTimeout":         func(c *replication.Config) { c.SyncTimeout = -time.Second },
		"ConnectTimeout":      func(c *replication.Config) { c.ConnectTimeout = 0 },
		"RequestTimeout":      func(c *replication.Config) { c.RequestTimeout = 0 },
		"AntiEntropyInterval": func(c *replication.Config) { c.AntiEntropyInterval = 0 },
		"Clock":               func(c *replication.Config) { c.Clock = nil },
		"Logger":              func(c *replication.Config) { c.Logger = nil },
	})
}

package alert

import (
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/configtest"
)

// TestConfigRefusesByField: every setting that cannot work is refused
// with a *heureka.ConfigError naming its field, the registry client's as
// Registry.X.
func TestConfigRefusesByField(t *testing.T) {
	good := DefaultConfig()
	good.Registry.URLs = []string{"http://127.0.0.1:9/eureka"}
	good.Alertmanager = "http://127.0.0.1:9093"
	configtest.Refuses(t, good, configtest.Cases[Config]{
		"Registry.URLs":                 func(c *Config) { c.Registry.URLs = nil },
		"Registry.ReadTimeout":          func(c *Config) { c.Registry.ReadTimeout = 0 },
		"Alertmanager":                  func(c *Config) { c.Alertmanager = "" },
		"Alertmanager not a URL":        func(c *Config) { c.Alertmanager = "127.0.0.1:9093" },
		"Webhook":                       func(c *Config) { c.Webhook = "ftp://hook" },
		"StatusInterval":                func(c *Config) { c.StatusInterval = 0 },
		"Resend":                        func(c *Config) { c.Resend = -time.Second },
		"Timeout":                       func(c *Config) { c.Timeout = 0 },
		"MaxQueue":                      func(c *Config) { c.MaxQueue = 0 },
		"Clock":                         func(c *Config) { c.Clock = nil },
		`For["HeurekaNodeDown"]`:        func(c *Config) { c.For = map[string]time.Duration{"HeurekaNodeDown": time.Minute} },
		`For["HeurekaInstanceExpired"]`: func(c *Config) { c.For = map[string]time.Duration{InstanceExpired: -time.Second} },
	})
}

package registry

import (
	"math"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/configtest"
)

// TestConfigRefusesByField: every setting that cannot work is refused
// with a *heureka.ConfigError naming its field.
func TestConfigRefusesByField(t *testing.T) {
	configtest.Refuses(t, DefaultConfig(), configtest.Cases[Config]{
		"DeltaRetention":                func(c *Config) { c.DeltaRetention = 0 },
		"EvictionInterval":              func(c *Config) { c.EvictionInterval = -time.Second },
		"ExpectedClientRenewalInterval": func(c *Config) { c.ExpectedClientRenewalInterval = 0 },
		"MaxProtection":                 func(c *Config) { c.MaxProtection = 0 },
		"TombstoneTTL":                  func(c *Config) { c.TombstoneTTL = 0 },
		"MaxAhead":                      func(c *Config) { c.MaxAhead = 0 },
		"Clock":                         func(c *Config) { c.Clock = nil },
		"StormRate":                     func(c *Config) { c.StormRate = -1 },
		"StormRate NaN":                 func(c *Config) { c.StormRate = math.NaN() },
		"StormRate +Inf":                func(c *Config) { c.StormRate = math.Inf(1) },
		"StormHold":                     func(c *Config) { c.StormHold = -time.Second },
		"PauseThreshold":                func(c *Config) { c.PauseThreshold = -time.Second },
		"ChangeLogSize":                 func(c *Config) { c.ChangeLogSize = 0 },
		"SelfPreservation":              func(c *Config) { c.SelfPreservation = "sometimes" },
		"MassLossFraction":              func(c *Config) { c.MassLossFraction = 0 },
		"MassLossFraction above 1":      func(c *Config) { c.MassLossFraction = 1.5 },
		"RenewalPercentThreshold":       func(c *Config) { c.RenewalPercentThreshold = 0 },
		"Limits.MaxIDLength":            func(c *Config) { c.Limits.MaxIDLength = 0 },
		"Limits.MaxMetadata":            func(c *Config) { c.Limits.MaxMetadata = -1 },
	})
	off := DefaultConfig()
	off.StormRate, off.StormHold, off.PauseThreshold = 0, 0, 0
	if err := off.Validate(); err != nil {
		t.Errorf("the checks turned off with zeros: %v", err)
	}
}

package httpapi_test

import (
	"math"
	"testing"

	"github.com/heureka-project/heureka/internal/configtest"
	"github.com/heureka-project/heureka/internal/httpapi"
)

// TestConfigRefusesByField: every setting that cannot work is refused
// with a *heureka.ConfigError naming its field.
func TestConfigRefusesByField(t *testing.T) {
	configtest.Refuses(t, httpapi.DefaultConfig(), configtest.Cases[httpapi.Config]{
		"MaxBodyBytes":          func(c *httpapi.Config) { c.MaxBodyBytes = 0 },
		"CacheEntries":          func(c *httpapi.Config) { c.CacheEntries = 0 },
		"MaxWatchers":           func(c *httpapi.Config) { c.MaxWatchers = -1 },
		"MaxWatchLag":           func(c *httpapi.Config) { c.MaxWatchLag = 0 },
		"KeepAlive":             func(c *httpapi.Config) { c.KeepAlive = 0 },
		"WriteTimeout":          func(c *httpapi.Config) { c.WriteTimeout = -1 },
		"WriteRate":             func(c *httpapi.Config) { c.WriteRate = -1 },
		"WriteRate +Inf":        func(c *httpapi.Config) { c.WriteRate = math.Inf(1) },
		"WriteBurst":            func(c *httpapi.Config) { c.WriteBurst = 0 },
		"MaxWatchersPerClient":  func(c *httpapi.Config) { c.MaxWatchersPerClient = -1 },
		"Limits.MaxFieldLength": func(c *httpapi.Config) { c.Limits.MaxFieldLength = 0 },
	})
}

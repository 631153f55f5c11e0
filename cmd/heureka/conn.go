package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/heureka-project/heureka/ctl"
)

// The environment the commands that talk to a registry read.
const (
	// registryEnv gives the registry URLs when --registry is not set.
	registryEnv = "HEUREKA_REGISTRY"
	// tokenEnv gives a bearer token for registries that require
	// credentials; a user:password in a registry URL is sent as basic
	// auth instead.
	tokenEnv = "HEUREKA_TOKEN"
)

// connFlags are the flags of every command that reads the registry,
// defined here once: --registry, --timeout and the TLS files.
type connFlags struct {
	registry string
	timeout  time.Duration
	tls      clientTLS
}

// add defines the flags on fs; timeout is the command's default bound on
// its calls to the registry.
func (c *connFlags) add(fs *flag.FlagSet, timeout time.Duration) {
	fs.StringVar(&c.registry, "registry", "", "registry base `URLs`, comma-separated, tried in order (default $"+registryEnv+", else "+ctl.DefaultURL+")")
	fs.DurationVar(&c.timeout, "timeout", timeout, "how long the command's calls to the registry may take")
	c.tls.addFlags(fs)
}

// connFields maps ctl.Config's fields, and those of the client.Config it
// makes (ctl.Config.ClientConfig), to the flags that set them.
var connFields = withFields(clientFields(""), map[string]string{
	"Timeout": "--timeout", "ReadTimeout": "--timeout", "ConnectTimeout": "--timeout", "Token": "$" + tokenEnv,
})

// config is the flags (else $HEUREKA_REGISTRY, else the default URL) and
// $HEUREKA_TOKEN as a ctl.Config.
func (c *connFlags) config() ctl.Config {
	cfg := ctl.DefaultConfig()
	v := c.registry
	if v == "" {
		v = os.Getenv(registryEnv)
	}
	if v != "" {
		cfg.URLs = nil
		for _, u := range commaList(v) {
			cfg.URLs = append(cfg.URLs, strings.TrimRight(u, "/"))
		}
	}
	cfg.Timeout = c.timeout
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = c.tls.caFile, c.tls.certFile, c.tls.keyFile
	cfg.Token = strings.TrimSpace(os.Getenv(tokenEnv))
	return cfg
}

// open connects as the flags say; a setting that cannot work is a usage
// error naming its flag.
func (c *connFlags) open() (*ctl.Conn, error) {
	conn, err := ctl.Open(c.config())
	if err != nil {
		return nil, flagError(err, connFields)
	}
	return conn, nil
}

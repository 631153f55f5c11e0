package main

import (
	"flag"
	"os"
	"strings"

	"github.com/heureka-project/heureka/client"
)

// clientTLS holds what every command that talks to a registry needs to reach
// one that serves TLS or requires credentials: a CA bundle, a client
// certificate, and a bearer token from $HEUREKA_TOKEN. A user:password in a
// registry URL is sent as basic auth instead of the token.
type clientTLS struct {
	caFile, certFile, keyFile string
}

func (t *clientTLS) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&t.caFile, "ca-file", "", "PEM `file` of the CAs that sign the registry's certificate (https registries)")
	fs.StringVar(&t.certFile, "cert-file", "", "PEM client certificate `file`, for registries that verify clients")
	fs.StringVar(&t.keyFile, "key-file", "", "PEM `file` with the client certificate's key")
}

// apply puts the files and the token into cfg.
func (t *clientTLS) apply(cfg *client.Config) {
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = t.caFile, t.certFile, t.keyFile
	cfg.BearerToken = strings.TrimSpace(os.Getenv(tokenEnv))
}

package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/webhdfs"
)

// runGateway is `heureka gateway --cluster C --listen ADDR`: flags and
// wiring only; the gateway is package webhdfs.
func runGateway(ctx context.Context, args []string, _, stderr io.Writer) error {
	var c connFlags
	cfg := webhdfs.DefaultServerConfig()
	fs := newFlagSet("gateway", "gateway --cluster NAME [--listen ADDR] [flags]", `
Serves the WebHDFS REST API (/webhdfs/v1/PATH?op=...) for one HDFS cluster and
forwards each request to the NameNode the registry says is active, adding
excludedatanodes for DataNodes that are down, draining, full or failing, and
checking every redirect before passing it on. Clients send file data straight
to the DataNode the redirect names. Prometheus metrics are on /metrics.
It logs one line "heureka gateway listening addr=ADDR". A --cluster the
registry has no NameNode of is warned of once the registry is read.`, exitsProgram, stderr)
	c.add(fs, cfg.Registry.ReadTimeout)
	g := &cfg.Gateway
	fs.StringVar(&g.Cluster, "cluster", "", "HDFS cluster `name`, as the agents register it (hdfs-namenode.NAME)")
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "TCP `address` to serve WebHDFS on (HttpFS's port by default)")
	fs.DurationVar(&g.RequestTimeout, "request-timeout", g.RequestTimeout, "bound on each request to a NameNode, retries included")
	fs.DurationVar(&g.FailoverWait, "failover-wait", g.FailoverWait, "how long a request waits for the registry to name a new active NameNode")
	fs.DurationVar(&g.ProbeTimeout, "probe-timeout", g.ProbeTimeout, "dial a redirect's DataNode within this before sending the client there (0: no probe)")
	fs.StringVar(&g.NameNodeScheme, "namenode-scheme", g.NameNodeScheme, "scheme of the NameNodes' web servers: http or https")
	fs.Float64Var(&g.FullnessThreshold, "fullness", g.FullnessThreshold, "exclude DataNodes more used than this fraction from writes")
	var st serverTLSFlags
	st.add(fs)
	newLog := logFlags(fs, stderr)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	logger, err := newLog()
	if err != nil {
		return &usageError{"gateway: " + err.Error()}
	}
	if g.Cluster == "" {
		return &usageError{"gateway: --cluster is required: the name the agents register (hdfs-namenode.NAME)"}
	}
	rc := c.config()
	if err := rc.Validate(); err != nil {
		return flagError(err, gatewayFields)
	}
	// The gateway's own client: retries and timeouts for a long-lived
	// cache, with the registry, TLS and token the flags give.
	r := &cfg.Registry
	r.URLs, r.ReadTimeout = rc.URLs, rc.Timeout
	r.CAFile, r.CertFile, r.KeyFile, r.BearerToken = rc.CAFile, rc.CertFile, rc.KeyFile, rc.Token
	if cfg.TLS, g.Auth, err = st.load(logger); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return flagError(err, gatewayFields)
	}
	srv := webhdfs.NewServer(cfg, logger)
	if err := srv.Open(); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	return closeOnSignal(ctx, stop, srv, cfg.ShutdownTimeout, logger, "heureka gateway")
}

// gatewayFields maps webhdfs.ServerConfig's fields, and ctl.Config's that
// the connection flags fill first, to the flags that set them.
var gatewayFields = withFields(connFields, clientFields("Registry."), map[string]string{
	"Registry.ReadTimeout": "--timeout", "Listen": "--listen", "Gateway.Cluster": "--cluster",
	"Gateway.RequestTimeout": "--request-timeout", "Gateway.FailoverWait": "--failover-wait",
	"Gateway.ProbeTimeout": "--probe-timeout", "Gateway.NameNodeScheme": "--namenode-scheme",
	"Gateway.FullnessThreshold": "--fullness",
})

// serverTLSFlags are the server's TLS and credentials options, for
// commands that serve HTTP like `heureka server` does.
type serverTLSFlags struct {
	cert, key, clientCA, authFile string
}

func (f *serverTLSFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert", "", "PEM certificate `file` to serve HTTPS with (with --tls-key)")
	fs.StringVar(&f.key, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.StringVar(&f.clientCA, "tls-client-ca", "", "PEM `file` of CAs whose client certificates are verified (mutual TLS)")
	fs.StringVar(&f.authFile, "auth-file", "", "credentials `file` (see `heureka auth`); callers must then authenticate")
}

// load reads the files the flags name: the TLS configuration (nil for
// plain HTTP) and the credentials (nil: none asked for). Errors name the
// flag.
func (f *serverTLSFlags) load(logger *slog.Logger) (*tls.Config, *auth.Store, error) {
	tc, _, err := auth.ServerTLS(f.cert, f.key, f.clientCA)
	if err != nil {
		return nil, nil, flagError(err, tlsFields)
	}
	var store *auth.Store
	if f.authFile != "" {
		store = auth.NewStore(f.authFile, logger)
		if err := store.Load(); err != nil {
			return nil, nil, &usageError{"--auth-file: " + err.Error()}
		}
	}
	return tc, store, nil
}

// tlsFields maps the TLS files' fields to serverTLSFlags's flags.
var tlsFields = map[string]string{"TLSCert": "--tls-cert", "TLSKey": "--tls-key", "TLSClientCA": "--tls-client-ca"}

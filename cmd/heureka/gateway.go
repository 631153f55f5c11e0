package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/webhdfs"
)

// runGateway is `heureka gateway --cluster C --listen ADDR`: flags and
// wiring only; the gateway is package webhdfs.
func runGateway(ctx context.Context, args []string, _, stderr io.Writer) error {
	var o cliOptions
	cfg := webhdfs.DefaultConfig()
	fs := newFlagSet("gateway", "gateway --cluster NAME [--listen ADDR] [flags]", `
Serves the WebHDFS REST API (/webhdfs/v1/PATH?op=...) for one HDFS cluster and
forwards each request to the NameNode the registry says is active, adding
excludedatanodes for DataNodes that are down, draining, full or failing, and
checking every redirect before passing it on. Clients send file data straight
to the DataNode the redirect names. Prometheus metrics are on /metrics.
It logs one line "heureka gateway listening addr=ADDR".`, stderr)
	o.addFlags(fs, false)
	fs.StringVar(&cfg.Cluster, "cluster", "", "HDFS cluster `name`, as the agents register it (hdfs-namenode.NAME)")
	listen := fs.String("listen", "127.0.0.1:14000", "TCP `address` to serve WebHDFS on (HttpFS's port by default)")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", cfg.RequestTimeout, "bound on each request to a NameNode, retries included")
	fs.DurationVar(&cfg.FailoverWait, "failover-wait", cfg.FailoverWait, "how long a request waits for the registry to name a new active NameNode")
	fs.DurationVar(&cfg.ProbeTimeout, "probe-timeout", cfg.ProbeTimeout, "dial a redirect's DataNode within this before sending the client there (0: no probe)")
	fs.StringVar(&cfg.NameNodeScheme, "namenode-scheme", cfg.NameNodeScheme, "scheme of the NameNodes' web servers: http or https")
	fs.Float64Var(&cfg.FullnessThreshold, "fullness", cfg.FullnessThreshold, "exclude DataNodes more used than this fraction from writes")
	var st serverTLSFlags
	st.add(fs)
	newLog := logFlags(fs, stderr)
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	logger, err := newLog()
	if err != nil {
		return &usageError{"gateway: " + err.Error()}
	}
	if cfg.Cluster == "" {
		return &usageError{"gateway: --cluster is required: the name the agents register (hdfs-namenode.NAME)"}
	}
	urls := splitURLs(o.registry)
	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Logger = urls, logger
	o.tls.apply(&ccfg)
	c, err := client.New(ccfg)
	if err != nil {
		return &usageError{"gateway: --registry: " + err.Error()}
	}
	defer c.Close()
	nnApp, dnApp := hdfs.AppName(hdfs.RoleNameNode, cfg.Cluster), hdfs.AppName(hdfs.RoleDataNode, cfg.Cluster)
	ccache := client.DefaultCacheConfig()
	ccache.Apps = []string{nnApp, dnApp}
	cache, err := client.NewCache(c, ccache)
	if err != nil {
		return err
	}
	cfg.NameNodes = func() []*heureka.Instance { return cache.Instances(nnApp) }
	cfg.DataNodes = func() []*heureka.Instance { return cache.Instances(dnApp) }
	cfg.Logger = logger
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	serverTLS, store, err := st.load(logger)
	if err != nil {
		return &usageError{"gateway: " + err.Error()}
	}
	cfg.Auth = store
	gw, err := webhdfs.New(cfg)
	if err != nil {
		return &usageError{err.Error()}
	}
	cache.OnChange(func(_, _ *client.Snapshot, _ []client.Change) { gw.Notify() })

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if err := cache.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	defer cache.Close(context.Background())
	// Not a ServeMux: it would "clean" /a/../b into a redirect, and the
	// gateway answers such paths itself, as WebHDFS errors.
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && r.Method == http.MethodGet {
			metricsHandler.ServeHTTP(w, r)
			return
		}
		gw.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: root, TLSConfig: serverTLS, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: cfg.RequestTimeout + 10*time.Second, WriteTimeout: cfg.RequestTimeout + 10*time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	done := make(chan error, 1)
	go func() {
		if serverTLS != nil {
			done <- srv.ServeTLS(ln, "", "")
		} else {
			done <- srv.Serve(ln)
		}
	}()
	logger.Info("heureka gateway listening", "cluster", cfg.Cluster, "addr", ln.Addr().String(),
		"tls", serverTLS != nil, "auth", store != nil, "pid", os.Getpid())
	if store != nil {
		go func() { _ = store.Watch(ctx, 5*time.Second) }()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case <-ctx.Done():
	case <-sigs:
	case err := <-done:
		return fmt.Errorf("gateway: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("heureka gateway stopped")
	return nil
}

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

func (f *serverTLSFlags) load(logger *slog.Logger) (*tls.Config, *auth.Store, error) {
	if (f.cert == "") != (f.key == "") {
		return nil, nil, errors.New("--tls-cert and --tls-key: give both or neither")
	}
	var tc *tls.Config
	if f.cert != "" {
		kp, err := auth.LoadKeyPair(f.cert, f.key)
		if err != nil {
			return nil, nil, fmt.Errorf("--tls-cert: %w", err)
		}
		tc = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.GetCertificate}
		if f.clientCA != "" {
			pool, err := auth.LoadCertPool(f.clientCA)
			if err != nil {
				return nil, nil, fmt.Errorf("--tls-client-ca: %w", err)
			}
			tc.ClientCAs, tc.ClientAuth = pool, tls.VerifyClientCertIfGiven
		}
	} else if f.clientCA != "" {
		return nil, nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
	}
	var store *auth.Store
	if f.authFile != "" {
		store = auth.NewStore(f.authFile, logger)
		if err := store.Load(); err != nil {
			return nil, nil, fmt.Errorf("--auth-file: %w", err)
		}
	}
	return tc, store, nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

// repeatedFlag is a flag that may be repeated.
type repeatedFlag []string

func (s *repeatedFlag) String() string { return strings.Join(*s, ",") }
func (s *repeatedFlag) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// runAgent is `heureka agent`: register the daemon, keep the registration
// true, and on SIGINT/SIGTERM drain, deregister and exit 0.
func runAgent(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, hcfg := agent.DefaultConfig(), hdfsrole.DefaultConfig()
	fs := commandFlags("agent", stderr)
	role := fs.String("role", "", "the daemon beside the agent: datanode or namenode (required)")
	fs.StringVar(&cfg.Cluster, "cluster", "", "HDFS cluster `name`; the application is hdfs-ROLE.NAME (required)")
	var ctls clientTLS
	ctls.addFlags(fs)
	registry := fs.String("registry", "", "comma-separated registry base `URLs`, e.g. http://127.0.0.1:8761/eureka (default $"+registryEnvVar+")")
	jmx := fs.String("jmx", "", "the daemon's web `URL`, e.g. http://HOST:9864 (DataNode) or http://HOST:9870 (NameNode) (required)")
	dataPort := fs.Int("data-port", 0, "DataNode data-transfer `port`, probed and registered (default 9866)")
	rpcPort := fs.Int("rpc-port", 0, "NameNode client RPC `port`, probed and registered (default 8020)")
	host := fs.String("host", "", "host `name` to register (default: this machine's host name)")
	ip := fs.String("ip", "", "IP `address` to register (default: the host name's)")
	rack := fs.String("rack", "", "network location, e.g. /dc1/rack-a (default /default-rack)")
	table := fs.String("topology-table", "", "Hadoop topology table `file` (host-or-IP rack per line) to find the rack in")
	script := fs.String("topology-script", "", "Hadoop topology `script` to run (with the IP and host as arguments) to find the rack")
	var dataDirs repeatedFlag
	fs.Var(&dataDirs, "data-dir", "DataNode storage `directories`, for disk figures when the JMX has none: repeatable or comma-separated as in dfs.datanode.data.dir ([DISK]/data/1,file:///data/2)")
	admin := fs.String("admin-state", string(hdfs.AdminNormal), "a DataNode's admin state, registered as its status: NORMAL, DECOMMISSION_INPROGRESS, DECOMMISSIONED, ENTERING_MAINTENANCE or IN_MAINTENANCE")
	fs.DurationVar(&cfg.RenewInterval, "renew-interval", cfg.RenewInterval, "heartbeat period")
	fs.DurationVar(&cfg.LeaseDuration, "lease-duration", cfg.LeaseDuration, "lease the registry holds without a heartbeat")
	fs.DurationVar(&cfg.ProbeInterval, "probe-interval", cfg.ProbeInterval, "how often the daemon is probed")
	fs.DurationVar(&cfg.ProbeTimeout, "probe-timeout", cfg.ProbeTimeout, "bound on one probe")
	fs.IntVar(&cfg.FailureThreshold, "failure-threshold", cfg.FailureThreshold, "consecutive failed probes that report DOWN")
	fs.IntVar(&cfg.PID, "pid", 0, "the daemon's process `ID`: its exit is DOWN \"process exited\" at once (Linux: pidfd)")
	fs.StringVar(&cfg.PIDFile, "pid-file", "", "the daemon's pid `file` in HADOOP_PID_DIR, e.g. /var/run/hadoop/hadoop-hdfs-datanode.pid; followed across restarts")
	fs.StringVar(&cfg.SystemdUnit, "systemd-unit", "", "the daemon's systemd `unit`; its MainPID is watched and followed across restarts")
	fs.DurationVar(&cfg.HangAfter, "hang-after", cfg.HangAfter, "how long a daemon that accepts connections but does not answer (a full GC) keeps its status before DOWN \"not answering\"")
	fs.DurationVar(&cfg.HungMarkAfter, "hung-mark-after", cfg.HungMarkAfter, "how long such a pause lasts before the registration is marked probe_state=hung (placement takes it last)")
	fs.DurationVar(&cfg.UpAfter, "up-after", cfg.UpAfter, "how long a DOWN daemon must answer every probe before it is UP again")
	fs.DurationVar(&cfg.FlapWindow, "flap-window", cfg.FlapWindow, "each DOWN within this window doubles --up-after (flap damping)")
	fs.DurationVar(&cfg.FlapHoldMax, "flap-hold-max", cfg.FlapHoldMax, "the longest a flapping daemon is held DOWN once it answers")
	fs.DurationVar(&cfg.MetadataInterval, "metadata-interval", cfg.MetadataInterval, "how often the daemon's figures are read in full")
	fs.DurationVar(&cfg.MetadataMaxAge, "metadata-max-age", cfg.MetadataMaxAge, "how old the registry's figures may grow before a drift too small to push at once (under 1% of capacity or blocks) is pushed; each push enters every delta poll for 3 minutes")
	fs.DurationVar(&cfg.DrainPeriod, "drain", cfg.DrainPeriod, "how long to stay OUT_OF_SERVICE before deregistering on SIGTERM")
	newLog := logFlags(fs, stderr)
	setUsage(fs, "agent --role datanode|namenode --cluster NAME --registry URL[,URL] --jmx URL [flags]", `
Runs beside one HDFS daemon: registers it as hdfs-ROLE.CLUSTER with instance ID
CLUSTER-HOST-RACK and metadata rack, disk_used, disk_total (bytes), block_count,
version, status and, for NameNodes, ha_state and ha_transition_time (ms since the
epoch); renews every 10 s; probes the daemon's /jmx and data or RPC port every
second and reports DOWN after two consecutive refusals, or when a daemon that
accepts connections has not answered for --hang-after; UP once it has answered
for --up-after. With --pid, --pid-file or --systemd-unit, the process's exit is
DOWN at once. The cause is registered as metadata down_cause.
With several --registry URLs (list every peer) each heartbeat goes to all of them.
SIGTERM or SIGINT: OUT_OF_SERVICE, wait --drain, deregister, exit 0.
Give at most one of --rack, --topology-table, --topology-script.`)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	bad := func(format string, a ...any) error { return &usageError{"agent: " + fmt.Sprintf(format, a...)} }
	hcfg.Role = hdfs.Role(strings.ToLower(*role))
	daemonPort := 0
	switch hcfg.Role {
	case hdfs.RoleDataNode:
		if *rpcPort != 0 {
			return bad("--rpc-port is for NameNodes; a DataNode's port is --data-port")
		}
		daemonPort = portOrDefault(*dataPort, hdfs.DefaultDataNodeDataPort)
	case hdfs.RoleNameNode:
		if *dataPort != 0 || len(dataDirs) > 0 {
			return bad("--data-port and --data-dir are for DataNodes; a NameNode's port is --rpc-port")
		}
		daemonPort = portOrDefault(*rpcPort, hdfs.DefaultNameNodeRPCPort)
	default:
		return bad("--role %q: want datanode or namenode", *role)
	}
	if daemonPort < 1 || daemonPort > 65535 {
		return bad("port %d is out of range 1-65535", daemonPort)
	}
	cfg.Role, hcfg.Port = hcfg.Name(), daemonPort
	if cfg.Cluster == "" {
		return bad("--cluster is required")
	}
	urls := commaList(*registry)
	if len(urls) == 0 {
		urls = commaList(os.Getenv(registryEnvVar))
	}
	if len(urls) == 0 {
		return bad("--registry is required (or set $%s)", registryEnvVar)
	}
	if *jmx == "" {
		return bad("--jmx is required, e.g. http://127.0.0.1:9864")
	}
	ju, err := url.Parse(*jmx)
	if err != nil || ju.Hostname() == "" {
		return bad("--jmx %q is not a URL like http://HOST:9864", *jmx)
	}
	if n := countNonEmpty(*rack, *table, *script); n > 1 {
		return bad("give at most one of --rack, --topology-table and --topology-script")
	}
	st, ok := hdfs.ParseAdminState(*admin)
	if !ok {
		return bad("--admin-state %q is not one of NORMAL, DECOMMISSION_INPROGRESS, DECOMMISSIONED, ENTERING_MAINTENANCE, IN_MAINTENANCE", *admin)
	}
	hcfg.AdminState = st
	logger, err := newLog()
	if err != nil {
		return bad("%v", err)
	}

	// Identity: host, address, rack.
	cfg.Host = *host
	if cfg.Host == "" {
		if cfg.Host, err = os.Hostname(); err != nil {
			return fmt.Errorf("agent: cannot read this machine's host name; give --host: %w", err)
		}
	}
	cfg.IPAddr = *ip
	if cfg.IPAddr == "" {
		if cfg.IPAddr, err = lookupHostIP(ctx, cfg.Host); err != nil {
			return fmt.Errorf("agent: %w; give --ip", err)
		}
	}
	switch {
	case *rack != "":
		cfg.Rack = *rack
	case *table != "":
		f, err := os.Open(*table)
		if err != nil {
			return fmt.Errorf("agent: topology table: %w", err)
		}
		cfg.Rack, err = agent.TableRack(f, cfg.IPAddr, cfg.Host)
		f.Close()
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	case *script != "":
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cfg.Rack, err = agent.ScriptRack(sctx, *script, cfg.IPAddr, cfg.Host)
		cancel()
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	cfg.Logger = logger
	// The web port in the JMX URL is the one WebHDFS is served on too.
	if n, err := strconv.Atoi(ju.Port()); err == nil {
		hcfg.HTTPPort = n
	}
	if !isLoopbackHost(ju.Hostname()) {
		cfg.StatusPageURL = ju.String()
	}
	if err := cfg.Validate(); err != nil {
		return &usageError{err.Error()}
	}

	daemon, err := hdfsrole.NewJMXDaemon(hdfsrole.DaemonConfig{
		Role:     hcfg.Role,
		JMXURL:   *jmx,
		PortAddr: net.JoinHostPort(ju.Hostname(), strconv.Itoa(daemonPort)),
		DataDirs: dataDirList(dataDirs),
	})
	if err != nil {
		return &usageError{err.Error()}
	}
	ccfg := client.DefaultConfig()
	ccfg.URLs = urls
	ccfg.Logger = logger
	ctls.apply(&ccfg)
	reg, err := client.New(ccfg)
	if err != nil {
		return &usageError{err.Error()}
	}
	defer reg.Close()
	hr, err := hdfsrole.New(hcfg, daemon)
	if err != nil {
		return &usageError{err.Error()}
	}
	a, err := agent.New(cfg, reg, hr)
	if err != nil {
		return &usageError{err.Error()}
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal now kills the process the default way
	}()
	logger.Info("heureka agent running", "app", cfg.App(), "id", cfg.InstanceID(), "jmx", daemon.JMXURL(),
		"port", daemonPort, "registry", strings.Join(redactURLs(urls), ","))
	return a.Run(ctx)
}

// dataDirList reads data directories the way dfs.datanode.data.dir lists
// them: comma-separated, each optionally prefixed with a storage type
// ("[SSD]") and given as a path or a file:// URI.
func dataDirList(flags []string) []string {
	var out []string
	for _, f := range flags {
		for _, d := range commaList(f) {
			if strings.HasPrefix(d, "[") {
				if i := strings.IndexByte(d, ']'); i > 0 {
					d = d[i+1:]
				}
			}
			if u, err := url.Parse(d); err == nil && u.Scheme == "file" {
				d = u.Path
			}
			if d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}

// portOrDefault returns v, or def when v is 0.
func portOrDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func countNonEmpty(vals ...string) int {
	n := 0
	for _, v := range vals {
		if v != "" {
			n++
		}
	}
	return n
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// lookupHostIP returns host's address (itself when it is one), preferring IPv4
// and non-loopback addresses.
func lookupHostIP(ctx context.Context, host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return "", fmt.Errorf("cannot resolve host %q: %v", host, err)
	}
	rank := func(a net.IPAddr) int {
		r := 0
		if a.IP.IsLoopback() {
			r += 2
		}
		if a.IP.To4() == nil {
			r++
		}
		return r
	}
	best := slices.MinFunc(addrs, func(a, b net.IPAddr) int { return rank(a) - rank(b) })
	return best.IP.String(), nil
}

func redactURLs(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		if p, err := url.Parse(u); err == nil {
			out[i] = p.Redacted()
		} else {
			out[i] = "(bad URL)"
		}
	}
	return out
}

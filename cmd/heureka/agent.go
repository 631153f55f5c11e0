package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/elasticsearchrole"
	"github.com/heureka-project/heureka/agent/hbaserole"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/agent/kafkarole"
	"github.com/heureka-project/heureka/agent/yarnrole"
	"github.com/heureka-project/heureka/agent/zookeeperrole"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/urlcheck"
	"github.com/heureka-project/heureka/yarn"
	"github.com/heureka-project/heureka/zookeeper"
)

// repeatedFlag is a flag that may be repeated.
type repeatedFlag []string

func (s *repeatedFlag) String() string { return strings.Join(*s, ",") }
func (s *repeatedFlag) Set(v string) error {
	*s = append(*s, v)
	return nil
}

const agentHelp = `
Runs beside one daemon and registers it as ROLE.CLUSTER with instance ID
CLUSTER-HOST-RACK and metadata rack, version, role_state (active, standby,
leader, follower, controller, master, ...) and the role's figures; renews every
10 s; probes the daemon every second and reports DOWN after two consecutive
refusals or unhealthy answers (the cause is registered as metadata
down_cause), or when a daemon that accepts connections has not answered for
--hang-after; UP once it has answered for --up-after. A role-state change is
pushed at once. With --pid, --pid-file or --systemd-unit, the process's exit is
DOWN at once. A daemon that answers for another cluster (--cluster-id,
--ensemble) is DOWN with that cause, never UP.
Roles and what they read:
  datanode, namenode        --jmx (HDFS /jmx) and the data or RPC port
  yarn-resourcemanager      --url http://HOST:8088 (/ws/v1/cluster/info)
  hbase-master              --url http://HOST:16010 (/jmx)
  hbase-regionserver        --url http://HOST:16030 (/jmx), --masters
  elasticsearch             --url http://HOST:9200
  zookeeper                 --url http://HOST:8080 (the AdminServer), --ensemble
  kafka-broker              --broker HOST:9092 (the Kafka protocol), --broker-id
Kafka brokers and Elasticsearch nodes register the daemon's own rack
(broker.rack, --rack-attribute) unless a rack flag is given.
With several --registry URLs (list every peer) each heartbeat goes to all of them.
SIGTERM or SIGINT: OUT_OF_SERVICE, wait --drain, deregister, exit 0.
Give at most one of --rack, --topology-table, --topology-script.`

// agentFlags are `heureka agent`'s flags that are not a Config field as
// they stand.
type agentFlags struct {
	role, registry, jmx, table, script, admin string
	dataPort, rpcPort                         int
	dataDirs                                  repeatedFlag
	tls                                       clientTLS
	newLog                                    func() (*slog.Logger, error)
	// The other roles' (see newRole).
	url, broker, clusterID, ensemble, masters, rackAttr string
	port, brokerID                                      int
	masterCheck                                         time.Duration
}

// runAgent is `heureka agent`: register the daemon, keep the registration
// true, and on SIGINT/SIGTERM drain, deregister and exit 0.
func runAgent(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, hcfg := agent.DefaultConfig(), hdfsrole.DefaultConfig()
	var f agentFlags
	if err := noArgs(f.define(&cfg, stderr), args); err != nil {
		return err
	}
	if r := strings.ToLower(f.role); r != string(hdfs.RoleDataNode) && r != string(hdfs.RoleNameNode) {
		return f.runRole(ctx, cfg)
	}
	urls, ju, err := f.check(&cfg, &hcfg)
	if err != nil {
		return err
	}
	logger, err := f.newLog()
	if err != nil {
		return &usageError{"agent: " + err.Error()}
	}
	if err := f.identify(ctx, &cfg); err != nil {
		return err
	}
	cfg.Logger = logger
	// The web port in the JMX URL is the one WebHDFS is served on too.
	if n, err := strconv.Atoi(ju.Port()); err == nil {
		hcfg.HTTPPort = n
	}
	cfg.StatusPageURL = f.jmx
	if err := cfg.Validate(); err != nil {
		return agentUsage(err)
	}
	daemon, err := hdfsrole.NewJMXDaemon(hdfsrole.DaemonConfig{
		Role:     hcfg.Role,
		JMXURL:   f.jmx,
		PortAddr: net.JoinHostPort(ju.Hostname(), strconv.Itoa(hcfg.Port)),
		DataDirs: hdfsrole.ParseDataDirs(f.dataDirs...),
		Logger:   logger,
	})
	if err != nil {
		return agentUsage(err)
	}
	role, err := hdfsrole.New(hcfg, daemon)
	if err != nil {
		return agentUsage(err)
	}
	return f.serve(ctx, cfg, urls, role, "jmx", daemon.JMXURL(), "port", hcfg.Port)
}

// serve runs an agent for role until SIGINT or SIGTERM, then lets it
// drain; attrs describe the daemon in the start line.
func (f *agentFlags) serve(ctx context.Context, cfg agent.Config, urls []string, role agent.Role, attrs ...any) error {
	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Logger = urls, cfg.Logger
	f.tls.apply(&ccfg)
	reg, err := client.New(ccfg)
	if err != nil {
		return agentUsage(err)
	}
	defer reg.Close()
	a, err := agent.New(cfg, reg, role)
	if err != nil {
		return agentUsage(err)
	}
	public := make([]string, len(urls)) // client.New has checked that each parses
	for i, u := range urls {
		public[i] = urlcheck.Public(u)
	}
	attrs = append([]any{"app", cfg.App(), "id", cfg.InstanceID()}, attrs...)
	cfg.Logger.Info("heureka agent running", append(attrs, "registry", strings.Join(public, ","))...)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal now kills the process the default way
	}()
	return a.Run(ctx)
}

// agentFields maps the fields of the configs `heureka agent` fills
// (agent.Config, its client.Config, and its role's: hdfsrole's and the
// others') to the flags that set them.
var agentFields = withFields(clientFields(""), map[string]string{
	"Role": "--role", "Cluster": "--cluster", "Host": "--host", "IPAddr": "--ip", "Rack": "--rack",
	"RenewInterval": "--renew-interval", "LeaseDuration": "--lease-duration", "ProbeInterval": "--probe-interval",
	"ProbeTimeout": "--probe-timeout", "FailureThreshold": "--failure-threshold", "PID": "--pid", "PIDFile": "--pid-file",
	"SystemdUnit": "--systemd-unit", "HangAfter": "--hang-after", "HungMarkAfter": "--hung-mark-after", "UpAfter": "--up-after",
	"FlapWindow": "--flap-window", "FlapHoldMax": "--flap-hold-max", "MetadataInterval": "--metadata-interval",
	"MetadataMaxAge": "--metadata-max-age", "DrainPeriod": "--drain",
	// The roles'.
	"JMXURL": "--jmx", "AdminState": "--admin-state", "URL": "--url", "ClusterID": "--cluster-id", "ClusterUUID": "--cluster-id",
	"Ensemble": "--ensemble", "Port": "--port", "MasterURLs": "--masters", "MasterCheckInterval": "--master-check-interval",
	"Addr": "--broker", "NodeID": "--broker-id", "RackAttribute": "--rack-attribute",
})

// agentUsage is err as a usage error, a config's in the flags' terms.
func agentUsage(err error) error {
	if _, ok := errors.AsType[*heureka.ConfigError](err); ok {
		return flagError(err, agentFields)
	}
	return &usageError{"agent: " + err.Error()}
}

// define defines the flags, into cfg where a flag is a Config field.
func (f *agentFlags) define(cfg *agent.Config, stderr io.Writer) *flag.FlagSet {
	fs := commandFlags("agent", stderr)
	fs.StringVar(&f.role, "role", "", "the daemon beside the agent: datanode, namenode, yarn-resourcemanager, hbase-master, hbase-regionserver, elasticsearch, zookeeper or kafka-broker (required)")
	fs.StringVar(&cfg.Cluster, "cluster", "", "cluster `name`; the application is ROLE.NAME, hdfs-ROLE.NAME for HDFS (required)")
	fs.StringVar(&f.url, "url", "", "the daemon's web `URL`: a ResourceManager's (http://HOST:8088), an HBase server's info port (:16010, :16030), an Elasticsearch node's (:9200), a ZooKeeper AdminServer (:8080)")
	fs.StringVar(&f.clusterID, "cluster-id", "", "the daemon's own cluster `id`, checked at every probe: yarn.resourcemanager.cluster-id, HBase's clusterId, Elasticsearch's cluster UUID, Kafka's cluster id (default: not checked)")
	fs.StringVar(&f.ensemble, "ensemble", "", "zookeeper: the ensemble's voting `members`, 1=HOST:2888,2=HOST:2888,... as zoo.cfg's server.N lines, checked at every probe (default: not checked)")
	fs.IntVar(&f.port, "port", 0, "the `port` registered for clients (default: yarn 8032, zookeeper 2181; HBase's RPC port, Kafka's advertised and Elasticsearch's HTTP port as the daemon says)")
	fs.StringVar(&f.masters, "masters", "", "hbase-regionserver: the masters' info `URLs`, comma-separated, asked whether the active master counts this RegionServer dead")
	fs.DurationVar(&f.masterCheck, "master-check-interval", hbaserole.DefaultConfig().MasterCheckInterval, "hbase-regionserver: how often --masters are asked")
	fs.StringVar(&f.broker, "broker", "127.0.0.1:9092", "kafka-broker: a listener of the broker, `HOST:PORT`")
	fs.IntVar(&f.brokerID, "broker-id", -1, "kafka-broker: the broker's node `id` (broker.id, node.id); -1 finds it by --broker's address among the advertised ones")
	fs.StringVar(&f.rackAttr, "rack-attribute", elasticsearch.DefaultRackAttribute, "elasticsearch: the node `attribute` holding its rack")
	f.tls.addFlags(fs)
	fs.StringVar(&f.registry, "registry", "", "comma-separated registry base `URLs`, e.g. http://127.0.0.1:8761/eureka (default $"+registryEnv+")")
	fs.StringVar(&f.jmx, "jmx", "", "the daemon's web `URL`, e.g. http://HOST:9864 (DataNode) or http://HOST:9870 (NameNode) (required)")
	fs.IntVar(&f.dataPort, "data-port", 0, "DataNode data-transfer `port`, probed and registered (default 9866)")
	fs.IntVar(&f.rpcPort, "rpc-port", 0, "NameNode client RPC `port`, probed and registered (default 8020)")
	fs.StringVar(&cfg.Host, "host", "", "host `name` to register (default: this machine's host name)")
	fs.StringVar(&cfg.IPAddr, "ip", "", "IP `address` to register (default: the host name's)")
	fs.StringVar(&cfg.Rack, "rack", "", "network location, e.g. /dc1/rack-a (default /default-rack)")
	fs.StringVar(&f.table, "topology-table", "", "Hadoop topology table `file` (host-or-IP rack per line) to find the rack in")
	fs.StringVar(&f.script, "topology-script", "", "Hadoop topology `script` to run (with the IP and host as arguments) to find the rack")
	fs.Var(&f.dataDirs, "data-dir", "DataNode storage `directories`, for disk figures when the JMX has none: repeatable or comma-separated as in dfs.datanode.data.dir ([DISK]/data/1,file:///data/2)")
	fs.StringVar(&f.admin, "admin-state", string(hdfs.AdminNormal), "a DataNode's admin state, registered as its status: NORMAL, DECOMMISSION_INPROGRESS, DECOMMISSIONED, ENTERING_MAINTENANCE or IN_MAINTENANCE")
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
	f.newLog = logFlags(fs, stderr)
	setUsage(fs, "agent --role ROLE --cluster NAME --registry URL[,URL] --jmx URL|--url URL|--broker ADDR [flags]", agentHelp, exitsProgram)
	return fs
}

// check turns the parsed flags into the role's Config, and returns the
// registry URLs and the JMX URL; every error is a usage error.
func (f *agentFlags) check(cfg *agent.Config, hcfg *hdfsrole.Config) ([]string, *url.URL, error) {
	bad := func(format string, a ...any) error { return &usageError{"agent: " + fmt.Sprintf(format, a...)} }
	hcfg.Role = hdfs.Role(strings.ToLower(f.role))
	switch hcfg.Role {
	case hdfs.RoleDataNode:
		if f.rpcPort != 0 {
			return nil, nil, bad("--rpc-port is for NameNodes; a DataNode's port is --data-port")
		}
		hcfg.Port = cmp.Or(f.dataPort, hdfs.DefaultDataNodeDataPort)
	case hdfs.RoleNameNode:
		if f.dataPort != 0 || len(f.dataDirs) > 0 {
			return nil, nil, bad("--data-port and --data-dir are for DataNodes; a NameNode's port is --rpc-port")
		}
		hcfg.Port = cmp.Or(f.rpcPort, hdfs.DefaultNameNodeRPCPort)
	default:
		return nil, nil, bad("--role %q: want datanode or namenode", f.role)
	}
	if hcfg.Port < 1 || hcfg.Port > 65535 {
		return nil, nil, bad("port %d is out of range 1-65535", hcfg.Port)
	}
	if f.url != "" || f.port != 0 {
		return nil, nil, bad("--url and --port are for the other roles; HDFS's are --jmx and --data-port or --rpc-port")
	}
	cfg.Role = hcfg.Name()
	urls, err := f.common(cfg)
	if err != nil {
		return nil, nil, err
	}
	if f.jmx == "" {
		return nil, nil, bad("--jmx is required, e.g. http://127.0.0.1:9864")
	}
	ju, err := url.Parse(f.jmx)
	if err != nil || ju.Hostname() == "" {
		return nil, nil, bad("--jmx %q is not a URL like http://HOST:9864", f.jmx)
	}
	st, ok := hdfs.ParseAdminState(f.admin)
	if !ok {
		return nil, nil, bad("--admin-state %q is not one of NORMAL, DECOMMISSION_INPROGRESS, DECOMMISSIONED, ENTERING_MAINTENANCE, IN_MAINTENANCE", f.admin)
	}
	hcfg.AdminState = st
	return urls, ju, nil
}

// identify fills in the host name, address and rack to register: the
// flags', or this machine's.
func (f *agentFlags) identify(ctx context.Context, cfg *agent.Config) error {
	if err := agent.Identify(ctx, cfg, f.table, f.script); err != nil {
		return fmt.Errorf("agent: %w (--host, --ip, --rack, --topology-table and --topology-script say it)", err)
	}
	return nil
}

// countNonEmpty counts the values that are not empty.
func countNonEmpty(vals ...string) int {
	n := 0
	for _, v := range vals {
		if v != "" {
			n++
		}
	}
	return n
}

// common checks the flags every role has, and returns the registry URLs.
func (f *agentFlags) common(cfg *agent.Config) ([]string, error) {
	bad := func(format string, a ...any) error { return &usageError{"agent: " + fmt.Sprintf(format, a...)} }
	if cfg.Cluster == "" {
		return nil, bad("--cluster is required")
	}
	urls := commaList(f.registry)
	if len(urls) == 0 {
		urls = commaList(os.Getenv(registryEnv))
	}
	if len(urls) == 0 {
		return nil, bad("--registry is required (or set $%s)", registryEnv)
	}
	if countNonEmpty(cfg.Rack, f.table, f.script) > 1 {
		return nil, bad("give at most one of --rack, --topology-table and --topology-script")
	}
	return urls, nil
}

// runRole is `heureka agent` for a role other than HDFS's.
func (f *agentFlags) runRole(ctx context.Context, cfg agent.Config) error {
	cfg.Role = strings.ToLower(f.role)
	if cfg.Role == "" {
		return &usageError{"agent: --role is required: " + agentRoles}
	}
	if f.jmx != "" || f.dataPort != 0 || f.rpcPort != 0 || len(f.dataDirs) > 0 || f.admin != string(hdfs.AdminNormal) {
		return &usageError{"agent: --jmx, --data-port, --rpc-port, --data-dir and --admin-state are HDFS's; --role " + f.role + " reads --url (Kafka: --broker)"}
	}
	urls, err := f.common(&cfg)
	if err != nil {
		return err
	}
	role, err := f.newRole(cfg.Role)
	if err != nil {
		return agentUsage(err)
	}
	if c, ok := role.(interface{ Close() }); ok {
		defer c.Close()
	}
	if cfg.Logger, err = f.newLog(); err != nil {
		return &usageError{"agent: " + err.Error()}
	}
	if r, ok := role.(interface {
		Rack(context.Context) (string, error)
	}); ok && countNonEmpty(cfg.Rack, f.table, f.script) == 0 {
		// The daemon's own rack: asked once, as the instance ID holds it.
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cfg.Rack, err = r.Rack(rctx)
		cancel()
		if err != nil {
			cfg.Logger.Warn("cannot read the daemon's rack; registering the default rack", "err", err)
		}
	}
	if err := f.identify(ctx, &cfg); err != nil {
		return err
	}
	cfg.StatusPageURL = f.url
	where := []any{"url", urlcheck.Public(f.url)}
	if cfg.Role == kafka.RoleName {
		where = []any{"broker", f.broker}
	}
	return f.serve(ctx, cfg, urls, role, where...)
}

// newRole turns the flags into the role's Config and the role.
func (f *agentFlags) newRole(name string) (agent.Role, error) {
	switch name {
	case yarn.RoleName:
		c := yarnrole.DefaultConfig()
		c.URL, c.ClusterID, c.Port = f.url, f.clusterID, cmp.Or(f.port, c.Port)
		return yarnrole.New(c)
	case hbase.MasterRoleName, hbase.RegionServerRoleName:
		c := hbaserole.DefaultConfig()
		c.Role, c.URL, c.ClusterID, c.Port, c.MasterCheckInterval = name, f.url, f.clusterID, f.port, f.masterCheck
		c.MasterURLs = commaList(f.masters)
		return hbaserole.New(c)
	case elasticsearch.RoleName:
		c := elasticsearchrole.DefaultConfig()
		c.URL, c.ClusterUUID, c.Port, c.RackAttribute = f.url, f.clusterID, f.port, f.rackAttr
		return elasticsearchrole.New(c)
	case zookeeper.RoleName:
		c := zookeeperrole.DefaultConfig()
		c.URL, c.Ensemble, c.Port = f.url, f.ensemble, cmp.Or(f.port, c.Port)
		return zookeeperrole.New(c)
	case kafka.RoleName:
		c := kafkarole.DefaultConfig()
		c.Addr, c.NodeID, c.ClusterID, c.Port = f.broker, int32(f.brokerID), f.clusterID, f.port
		return kafkarole.New(c)
	}
	return nil, fmt.Errorf("--role %q: %s", name, agentRoles)
}

// agentRoles says which roles there are.
var agentRoles = "want datanode, namenode, " + strings.Join([]string{yarn.RoleName, hbase.MasterRoleName,
	hbase.RegionServerRoleName, elasticsearch.RoleName, zookeeper.RoleName}, ", ") + " or " + kafka.RoleName

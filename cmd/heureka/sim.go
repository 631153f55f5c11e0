package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/sim"
)

const simHelp = `
A SIMULATOR, not Hadoop: serves /jmx in Hadoop 3's shape (marked with a
Heureka:service=Simulator bean) and accepts TCP connections on a data or RPC
port, so that 'heureka agent' can be tried and tested without a cluster.
With --webhdfs-dir it also serves a SIMULATED WebHDFS (/webhdfs/v1) on --listen.
It logs one line with its addresses: http=ADDR port=ADDR control=ADDR.

Control API (on --control, which keeps answering while the daemon is stopped):
	GET  /sim/state                       state as JSON
	POST /sim/stop                        /jmx and the port stop answering (connection refused)
	POST /sim/start                       they come back on the same addresses
	POST /sim/ha?state=active|standby      namenode failover
	POST /sim/set?capacity=&used=&blocks=&version=&safemode=on|off
Signals: SIGUSR1 makes a namenode active, SIGUSR2 standby; SIGINT/SIGTERM stop
the simulator (exit 0); SIGKILL kills it like any daemon; SIGSTOP pauses it as a
full GC does (connections accepted, nothing answered) until SIGCONT.

'heureka sim --system yarn|hbase|elasticsearch|zookeeper|kafka' runs a
SIMULATED cluster of that system instead (see 'heureka sim --system yarn -h').`

const simClusterHelp = `
A SIMULATED cluster, not the real system: ResourceManagers, HBase masters and
RegionServers, Elasticsearch nodes, ZooKeeper servers (AdminServer) or Kafka
brokers (franz-go's kfake), answering their real endpoints, each on a free port,
so that 'heureka agent --role ROLE' can be tried without the real system. It
logs the control address and what an agent checks (cluster_id, or a ZooKeeper
ensemble), then each member's name, role, address, rack and role state.
Control API (GET CONTROL/sim lists it): POST /sim/stop, /sim/start, /sim/pause
or /sim/resume ?member=M; POST /sim/role?member=M&state=S fails over to M.
SIGINT/SIGTERM stop it (exit 0).`

// runSimCluster is `heureka sim --system SYSTEM`: a simulated cluster that
// logs its control address and one line per member, and runs until
// SIGINT/SIGTERM. Its flags' defaults are system's (sim.DefaultClusterConfig).
func runSimCluster(ctx context.Context, system string, args []string, stderr io.Writer) error {
	cfg := sim.DefaultClusterConfig(system)
	fs := commandFlags("sim", stderr)
	fs.StringVar(&cfg.System, "system", cfg.System, "the `system` to simulate: yarn, hbase, elasticsearch, zookeeper or kafka")
	fs.IntVar(&cfg.Members, "members", cfg.Members, "`how many` ResourceManagers, HBase masters, Elasticsearch nodes, ZooKeeper servers (1: standalone) or Kafka brokers")
	fs.IntVar(&cfg.RegionServers, "regionservers", cfg.RegionServers, "how many HBase RegionServers (`count`)")
	fs.StringVar(&cfg.ClusterID, "cluster-id", cfg.ClusterID, "the cluster `id` every member reports (ZooKeeper: the ensemble's host names)")
	fs.StringVar(&cfg.Version, "version", cfg.Version, "the `version` every member reports")
	racks := fs.String("racks", strings.Join(cfg.Racks, ","), "comma-separated `racks` given to the members in turn (Kafka's broker.rack, Elasticsearch's rack_id)")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "the IP `address` every member listens on, each on a free port")
	fs.StringVar(&cfg.ControlAddr, "control", cfg.ControlAddr, "TCP `address` of the control API (/sim/...)")
	newLog := logFlags(fs, stderr)
	setUsage(fs, "sim --system yarn|hbase|elasticsearch|zookeeper|kafka [flags]", simClusterHelp, exitsProgram)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	cfg.Racks = commaList(*racks)
	logger, err := newLog()
	if err != nil {
		return &usageError{"sim: " + err.Error()}
	}
	cfg.Logger = logger
	c, err := sim.NewCluster(cfg)
	if err != nil {
		return &usageError{err.Error()}
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	return c.Run(ctx, os.Getpid())
}

// systemArg returns the value of a --system flag in args (--system X or
// --system=X, one dash or two), for a simulated cluster rather than one
// HDFS daemon.
func systemArg(args []string) (string, bool) {
	for i, a := range args {
		switch name, value, eq := strings.Cut(strings.TrimLeft(a, "-"), "="); {
		case !strings.HasPrefix(a, "-") || name != "system":
		case eq:
			return value, true
		case i+1 < len(args):
			return args[i+1], true
		default:
			return "", true
		}
	}
	return "", false
}

// simFlags are `heureka sim`'s flags that are not a sim.Config field as
// they stand.
type simFlags struct {
	capacity, used, blocks, ha, pidFile string
	volumes, webDNs                     repeatedFlag
	newLog                              func() (*slog.Logger, error)
}

// runSim is `heureka sim datanode|namenode`: a simulated HDFS daemon that
// logs one line `heureka sim listening ... http=ADDR port=ADDR
// control=ADDR` and runs until SIGINT/SIGTERM.
func runSim(ctx context.Context, args []string, _, stderr io.Writer) error {
	if system, ok := systemArg(args); ok {
		return runSimCluster(ctx, system, args, stderr)
	}
	cfg := sim.DefaultConfig()
	var f simFlags
	fs := f.define(&cfg, stderr)
	if len(args) == 0 {
		fs.Usage()
		return &usageError{"sim: name the daemon: datanode or namenode"}
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fs.Usage()
		return flag.ErrHelp
	}
	cfg.Role = hdfs.Role(strings.ToLower(args[0]))
	if cfg.Role != hdfs.RoleDataNode && cfg.Role != hdfs.RoleNameNode {
		return &usageError{fmt.Sprintf("sim: %q is not datanode or namenode", args[0])}
	}
	if err := noArgs(fs, args[1:]); err != nil {
		return err
	}
	if err := f.configure(&cfg); err != nil {
		return err
	}
	logger, err := f.newLog()
	if err != nil {
		return &usageError{"sim: " + err.Error()}
	}
	cfg.Logger = logger
	s, err := sim.New(cfg)
	if err != nil {
		return flagError(err, simFields)
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	return s.Run(ctx, os.Getpid(), f.pidFile, haSignals(ctx))
}

// simFields maps sim.Config's fields to the flags that set them.
var simFields = map[string]string{
	"HTTPAddr": "--listen", "PortAddr": "--port", "ControlAddr": "--control", "Hostname": "--hostname", "Version": "--version",
	"ClusterID": "--cluster-id", "Capacity": "--capacity", "Used": "--used", "Blocks": "--blocks", "HAState": "--ha-state",
	"Volumes": "--volume", "WebHDFS.Dir": "--webhdfs-dir", "WebHDFS.DataNodes": "--webhdfs-datanode",
}

// define defines the flags, into cfg where a flag is a Config field.
func (f *simFlags) define(cfg *sim.Config, stderr io.Writer) *flag.FlagSet {
	fs := commandFlags("sim", stderr)
	fs.StringVar(&cfg.HTTPAddr, "listen", "127.0.0.1:0", "TCP `address` of the simulated web server (/jmx)")
	fs.StringVar(&cfg.PortAddr, "port", "0", "data-transfer (datanode) or RPC (namenode) `port`, on --listen's host, or HOST:PORT")
	fs.StringVar(&cfg.ControlAddr, "control", cfg.ControlAddr, "TCP `address` of the control API (/sim/...)")
	fs.StringVar(&cfg.Hostname, "hostname", cfg.Hostname, "host `name` the daemon reports for itself")
	fs.StringVar(&cfg.Version, "version", cfg.Version, "Hadoop `version` to report")
	fs.StringVar(&cfg.ClusterID, "cluster-id", cfg.ClusterID, "cluster `ID` to report")
	fs.StringVar(&f.capacity, "capacity", "", "capacity in `bytes`, suffixes K M G T P allowed (default 4T; a namenode reports it for the cluster)")
	fs.StringVar(&f.used, "used", "", "DFS use in `bytes` (default a third of the capacity)")
	fs.StringVar(&f.blocks, "blocks", "", "block `count` (default use / 128 MiB)")
	fs.StringVar(&f.ha, "ha-state", string(cfg.HAState), "a namenode's HA state at start: active or standby")
	fs.Var(&f.volumes, "volume", "a datanode storage `directory` to report (repeatable; default /data/1/dfs/dn)")
	fs.StringVar(&f.pidFile, "pid-file", "", "write this process's PID and a newline to `file` once listening, as Hadoop does in HADOOP_PID_DIR (removed on SIGTERM, left behind by SIGKILL)")
	fs.StringVar(&cfg.WebHDFS.Dir, "webhdfs-dir", "", "serve a SIMULATED WebHDFS (/webhdfs/v1) storing files in this `directory`, shared by every sim of the cluster")
	fs.Var(&f.webDNs, "webhdfs-datanode", "a namenode's DataNode to redirect CREATE/APPEND/OPEN to, as `HTTP_ADDR=XFER_ADDR` (repeatable)")
	fs.BoolVar(&cfg.Stopped, "stopped", false, "start stopped: only the control API answers until POST /sim/start")
	f.newLog = logFlags(fs, stderr)
	setUsage(fs, "sim datanode|namenode [flags]", simHelp, exitsProgram)
	return fs
}

// configure turns the parsed flags into cfg; every error is a usage error.
func (f *simFlags) configure(cfg *sim.Config) error {
	bad := func(format string, a ...any) error { return &usageError{"sim: " + fmt.Sprintf(format, a...)} }
	cfg.HAState = hdfs.HAState(strings.ToLower(f.ha))
	for _, v := range f.webDNs {
		dn, err := sim.ParseDataNodeAddr(v)
		if err != nil {
			return bad("--webhdfs-datanode: %v", err)
		}
		cfg.WebHDFS.DataNodes = append(cfg.WebHDFS.DataNodes, dn)
	}
	if len(f.volumes) > 0 {
		cfg.Volumes = f.volumes
	}
	if f.capacity != "" {
		n, err := sim.ParseBytes(f.capacity)
		if err != nil {
			return bad("--capacity: %v", err)
		}
		cfg.Capacity, cfg.Used = n, n/3
	}
	if f.used != "" {
		n, err := sim.ParseBytes(f.used)
		if err != nil {
			return bad("--used: %v", err)
		}
		cfg.Used = n
	}
	cfg.Blocks = cfg.Used / (128 << 20)
	if f.blocks != "" {
		n, err := strconv.ParseInt(f.blocks, 10, 64)
		if err != nil || n < 0 {
			return bad("--blocks %q is not a count", f.blocks)
		}
		cfg.Blocks = n
	}
	return nil
}

// haSignals turns SIGUSR1 into the active HA state and SIGUSR2 into
// standby, until ctx ends.
func haSignals(ctx context.Context) <-chan hdfs.HAState {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	ha := make(chan hdfs.HAState)
	go func() {
		defer signal.Stop(sigs)
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-sigs:
				st := hdfs.HAActive
				if sig == syscall.SIGUSR2 {
					st = hdfs.HAStandby
				}
				select {
				case ha <- st:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return ha
}

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proc"
)

// The failure scenarios need an agent that can be killed with SIGKILL or
// drained with SIGTERM, so it runs as a process of its own: this binary
// again (or the test binary), told by helperEnv to be an agent. It runs
// package agent, the code `heureka agent` wires, with its defaults (probe
// every 1 s, two failures → DOWN, 5 s drain) and the configuration's
// timers, registering through heureka's client or through an
// agent.Registry on etcd or ZooKeeper, so that every system is told about
// the same daemon by the same agent.
const helperEnv = "HEUREKA_BENCH_HELPER"

// agentSpec is one agent process to start.
type agentSpec struct {
	Registry string // heureka, etcd, zookeeper
	Addr     string // the registry's host:port
	Role     hdfs.Role
	Cluster  string
	Host     string
	JMX      string // the simulated daemon's http://HOST:PORT
	PortAddr string
	T        timers
}

func (s agentSpec) args() []string {
	return []string{
		"-registry", s.Registry, "-addr", s.Addr, "-role", string(s.Role), "-cluster", s.Cluster,
		"-host", s.Host, "-jmx", s.JMX, "-port-addr", s.PortAddr,
		"-renew", s.T.Renew.String(), "-lease", s.T.Lease.String(),
	}
}

func (s agentSpec) config() agent.Config {
	cfg := agent.DefaultConfig()
	cfg.Role, cfg.Cluster, cfg.Host, cfg.IPAddr, cfg.Rack = hdfs.RoleName(s.Role), s.Cluster, s.Host, "127.0.0.1", "/dc1/rack-a"
	cfg.RenewInterval, cfg.LeaseDuration = s.T.Renew, s.T.Lease
	// The failure workload stops and starts one daemon many times in a
	// row, which flap damping would hold DOWN for longer each time: the
	// benchmark measures detection, so UP follows the first steady answer.
	cfg.UpAfter, cfg.FlapHoldMax = 200*time.Millisecond, 200*time.Millisecond
	return cfg
}

// heurekaAgentArgs is the `heureka agent` command line for s.
func heurekaAgentArgs(bin string, s agentSpec) ([]string, error) {
	_, port, err := net.SplitHostPort(s.PortAddr)
	if err != nil {
		return nil, err
	}
	portFlag := "--data-port"
	if s.Role == hdfs.RoleNameNode {
		portFlag = "--rpc-port"
	}
	cfg := s.config()
	return []string{bin, "agent", "--role", string(s.Role), "--cluster", s.Cluster,
		"--registry", "http://" + s.Addr + "/eureka", "--jmx", s.JMX, portFlag, port,
		"--host", cfg.Host, "--ip", cfg.IPAddr, "--rack", cfg.Rack,
		"--renew-interval", s.T.Renew.String(), "--lease-duration", s.T.Lease.String(),
		"--up-after", cfg.UpAfter.String(), "--flap-hold-max", cfg.FlapHoldMax.String()}, nil
}

// hasAgentCommand reports whether bin has the `agent` subcommand.
func hasAgentCommand(bin string) bool {
	return exec.Command(bin, "agent", "-h").Run() == nil
}

// startAgent starts an agent process whose log goes to dir: `heureka
// agent` when heurekaBin is set (heureka's own configurations), else this
// binary as a helper.
func startAgent(dir, name, heurekaBin string, s agentSpec) (*proc.Proc, error) {
	if heurekaBin != "" {
		argv, err := heurekaAgentArgs(heurekaBin, s)
		if err != nil {
			return nil, err
		}
		return proc.StartLogged("heureka agent", proc.Command(argv), filepath.Join(dir, name+".log"), nil)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	argv := append([]string{self}, s.args()...)
	if strings.HasSuffix(self, ".test") {
		// A test binary: keep its own flags away from the helper's.
		argv = append([]string{self, "-test.run=^$", "--"}, s.args()...)
	}
	return proc.StartLogged("agent", proc.Command(argv, helperEnv+"=agent"), filepath.Join(dir, name+".log"), nil)
}

// helperMain is the agent process.
func helperMain(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	var s agentSpec
	fs := flag.NewFlagSet("bench-agent", flag.ContinueOnError)
	fs.StringVar(&s.Registry, "registry", "heureka", "heureka, etcd or zookeeper")
	fs.StringVar(&s.Addr, "addr", "", "registry host:port")
	role := fs.String("role", string(hdfs.RoleDataNode), "datanode or namenode")
	fs.StringVar(&s.Cluster, "cluster", "bench", "HDFS cluster name")
	fs.StringVar(&s.Host, "host", "", "daemon host name")
	fs.StringVar(&s.JMX, "jmx", "", "daemon web address")
	fs.StringVar(&s.PortAddr, "port-addr", "", "daemon data/RPC port address")
	fs.DurationVar(&s.T.Renew, "renew", 10*time.Second, "renewal interval")
	fs.DurationVar(&s.T.Lease, "lease", 30*time.Second, "lease duration")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	s.Role = hdfs.Role(*role)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := runAgent(ctx, s, logger); err != nil {
		logger.Error("agent failed", "err", err)
		return 1
	}
	return 0
}

func runAgent(ctx context.Context, s agentSpec, logger *slog.Logger) error {
	d, err := hdfsrole.NewJMXDaemon(hdfsrole.DaemonConfig{Role: s.Role, JMXURL: s.JMX, PortAddr: s.PortAddr})
	if err != nil {
		return err
	}
	hcfg := hdfsrole.DefaultConfig()
	hcfg.Role = s.Role
	role, err := hdfsrole.New(hcfg, d)
	if err != nil {
		return err
	}
	var reg agent.Registry
	switch s.Registry {
	case "heureka":
		ccfg := client.DefaultConfig()
		ccfg.URLs, ccfg.Logger = []string{"http://" + s.Addr + "/eureka"}, logger
		c, err := client.New(ccfg)
		if err != nil {
			return err
		}
		reg = c
	case "etcd":
		c, err := newEtcdClient(s.Addr)
		if err != nil {
			return err
		}
		defer c.Close()
		reg = &etcdRegistry{c: c, ttl: int64(s.T.Lease / time.Second)}
	case "zookeeper":
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		c, err := zkConnect(cctx, s.Addr, s.T.Lease)
		cancel()
		if err != nil {
			return err
		}
		defer c.Close()
		reg = &zkRegistry{c: c}
	default:
		return fmt.Errorf("registry %q is not heureka, etcd or zookeeper", s.Registry)
	}
	cfg := s.config()
	cfg.Logger = logger
	a, err := agent.New(cfg, reg, role)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

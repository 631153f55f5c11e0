package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/urlcheck"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/sim"
)

const demoHelp = `
Starts, in this one process and on loopback only:

  - three registry servers, peers of each other (--base-port, +1, +2);
  - a SIMULATED HDFS cluster (not Hadoop: heureka's simulator serves /jmx in
    Hadoop's shape and holds a data/RPC port): two NameNodes, one active and
    one standby, and --datanodes DataNodes spread over three racks;
  - a heureka agent beside each simulated daemon, registering it with the
    registry and reporting it DOWN when it stops answering.

It prints the dashboard's URL and commands to try: kill a DataNode, fail the
NameNode over, drain a node. Ctrl-C drains the agents and stops everything.
`

// demoConfig is what `heureka demo` is told on its command line.
type demoConfig struct {
	BasePort  int    // first registry port; 0 picks free ports
	DataNodes int    // simulated DataNodes
	Cluster   string // HDFS cluster name
	Logger    *slog.Logger
}

// demoNode is one simulated daemon with its agent.
type demoNode struct {
	name  string // dn1, nn1, …
	rack  string
	sim   *sim.Sim
	agent *agent.Agent
	id    string
}

// demoCluster is everything the demo runs. open starts it; close stops it.
type demoCluster struct {
	cfg     demoConfig
	servers []*server.Server
	urls    []string // the servers' Eureka base URLs
	nodes   []*demoNode
	client  *client.Client

	webhdfsDir string // the simulated cluster's WebHDFS storage, removed by close
	webDNs     []sim.DataNodeAddr

	agentCtx    context.Context
	stopAgents  context.CancelFunc
	agentsGroup sync.WaitGroup
}

// demoRacks are the simulated racks, and demoFullness the DataNodes' use:
// enough variety to show the dashboard's colours and a node over 90%.
var (
	demoRacks    = []string{"/dc1/rack-a", "/dc1/rack-b", "/dc1/rack-c"}
	demoFullness = []int64{34, 58, 47, 92, 21, 76, 63, 40, 85}
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := demoConfig{BasePort: 8761, DataNodes: 6, Cluster: "demo"}
	fs := newFlagSet("demo", "demo [flags]", demoHelp, stderr)
	fs.IntVar(&cfg.BasePort, "base-port", cfg.BasePort, "`port` of the first registry server; the others use the next two (0: any free ports)")
	fs.IntVar(&cfg.DataNodes, "datanodes", cfg.DataNodes, "how many simulated DataNodes to run (1-50)")
	fs.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "HDFS cluster `name` (applications hdfs-datanode.NAME, hdfs-namenode.NAME)")
	logLevel := fs.String("log-level", "warn", "log level of the servers, simulators and agents: debug, info, warn or error")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	switch {
	case cfg.BasePort < 0 || cfg.BasePort > 65533:
		return &usageError{fmt.Sprintf("--base-port %d: want 0 or a port up to 65533", cfg.BasePort)}
	case cfg.DataNodes < 1 || cfg.DataNodes > 50:
		return &usageError{fmt.Sprintf("--datanodes %d: want 1 to 50", cfg.DataNodes)}
	case cfg.Cluster == "" || strings.ContainsAny(cfg.Cluster, "/\\ \t.") || strings.ToLower(cfg.Cluster) != cfg.Cluster:
		return &usageError{fmt.Sprintf("--cluster %q: want a lower-case name without dots, slashes or spaces", cfg.Cluster)}
	}
	var err error
	if cfg.Logger, err = newLogger(stderr, "text", *logLevel); err != nil {
		return &usageError{"demo: " + err.Error()}
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	d := &demoCluster{cfg: cfg}
	if err := d.open(ctx); err != nil {
		d.close(context.Background())
		return err
	}
	d.printIntro(stdout)
	<-ctx.Done()
	stop() // a second Ctrl-C kills the process the default way
	fmt.Fprintln(stdout, "\nStopping: draining the agents (OUT_OF_SERVICE, then deregister), then the simulators and the registry servers…")
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.close(cctx); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Stopped; nothing is left running.")
	return nil
}

// demoPorts returns the registry ports: base, base+1, base+2, or three
// free ports.
func demoPorts(base int) ([]int, error) {
	if base != 0 {
		return []int{base, base + 1, base + 2}, nil
	}
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// open starts the servers, then the simulators, then the agents, and
// waits until every node is registered.
func (d *demoCluster) open(ctx context.Context) error {
	log := d.cfg.Logger
	ports, err := demoPorts(d.cfg.BasePort)
	if err != nil {
		return fmt.Errorf("demo: picking ports: %w", err)
	}
	for _, p := range ports {
		d.urls = append(d.urls, "http://127.0.0.1:"+strconv.Itoa(p)+"/eureka")
	}
	for i, p := range ports {
		scfg := server.DefaultConfig()
		scfg.Listen = "127.0.0.1:" + strconv.Itoa(p)
		scfg.Replication.Peers = d.urls
		scfg.Replication.SelfURL = d.urls[i]
		scfg.Replication.SyncTimeout = 3 * time.Second // the peers start together, empty
		s := server.New(scfg, log.With("peer", i+1))
		if err := s.Open(); err != nil {
			if d.cfg.BasePort != 0 {
				return fmt.Errorf("demo: registry server on port %d: %w; is another heureka running? try --base-port 0", p, err)
			}
			return fmt.Errorf("demo: registry server: %w", err)
		}
		d.servers = append(d.servers, s)
	}

	ccfg := client.DefaultConfig()
	ccfg.URLs = d.urls
	ccfg.Logger = log
	if d.client, err = client.New(ccfg); err != nil {
		return err
	}
	d.agentCtx, d.stopAgents = context.WithCancel(context.Background())

	addNode := func(role hdfs.Role, name, rack string, used int64, ha hdfs.HAState) error {
		host := name + "." + d.cfg.Cluster
		scfg := sim.DefaultConfig()
		scfg.Role, scfg.Hostname, scfg.Logger = role, host, log
		scfg.ClusterID = "CID-heureka-demo-" + d.cfg.Cluster
		scfg.WebHDFS = sim.WebHDFSConfig{Dir: d.webhdfsDir, DataNodes: d.webDNs}
		if role == hdfs.RoleNameNode {
			scfg.HAState = ha
			scfg.Capacity = int64(d.cfg.DataNodes) * (4 << 40)
			scfg.Used = scfg.Capacity / 2
		} else {
			scfg.Used = scfg.Capacity * used / 100
		}
		scfg.Blocks = scfg.Used / (128 << 20)
		sm, err := sim.New(scfg)
		if err != nil {
			return err
		}
		if err := sm.Open(); err != nil {
			return fmt.Errorf("demo: simulated %s %s: %w", role, host, err)
		}
		n := &demoNode{name: name, rack: rack, sim: sm}
		d.nodes = append(d.nodes, n)
		if role == hdfs.RoleDataNode {
			d.webDNs = append(d.webDNs, sim.DataNodeAddr{HTTP: sm.HTTPAddr(), Xfer: sm.PortAddr()})
		}

		acfg, hcfg := agent.DefaultConfig(), hdfsrole.DefaultConfig()
		hcfg.Role = role
		acfg.Role, acfg.Cluster, acfg.Host, acfg.IPAddr, acfg.Rack = hcfg.Name(), d.cfg.Cluster, host, "127.0.0.1", rack
		_, port, _ := net.SplitHostPort(sm.PortAddr())
		hcfg.Port, _ = strconv.Atoi(port)
		_, hport, _ := net.SplitHostPort(sm.HTTPAddr())
		hcfg.HTTPPort, _ = strconv.Atoi(hport)
		acfg.DrainPeriod = time.Second // a demo need not wait for polling clients
		acfg.Logger = log
		if err := acfg.Validate(); err != nil {
			return err
		}
		daemon, err := hdfsrole.NewJMXDaemon(hdfsrole.DaemonConfig{Role: role, JMXURL: "http://" + sm.HTTPAddr(), PortAddr: sm.PortAddr()})
		if err != nil {
			return err
		}
		hr, err := hdfsrole.New(hcfg, daemon)
		if err != nil {
			return err
		}
		if n.agent, err = agent.New(acfg, d.client, hr); err != nil {
			return err
		}
		n.id = acfg.InstanceID()
		d.agentsGroup.Go(func() {
			if err := n.agent.Run(d.agentCtx); err != nil {
				log.Warn("demo agent ended", "node", host, "err", err)
			}
		})
		return nil
	}
	// The simulated WebHDFS: DataNodes first, so the NameNodes know
	// where to redirect; listed NameNodes first all the same.
	if d.webhdfsDir, err = os.MkdirTemp("", "heureka-demo-webhdfs-"); err != nil {
		return err
	}
	for i := range d.cfg.DataNodes {
		if err := addNode(hdfs.RoleDataNode, "dn"+strconv.Itoa(i+1), demoRacks[i%len(demoRacks)], demoFullness[i%len(demoFullness)], ""); err != nil {
			return err
		}
	}
	if err := addNode(hdfs.RoleNameNode, "nn1", demoRacks[0], 0, hdfs.HAActive); err != nil {
		return err
	}
	if err := addNode(hdfs.RoleNameNode, "nn2", demoRacks[1], 0, hdfs.HAStandby); err != nil {
		return err
	}
	dns := d.nodes[:d.cfg.DataNodes:d.cfg.DataNodes]
	d.nodes = append(slices.Clone(d.nodes[d.cfg.DataNodes:]), dns...)

	// Ready when every node is registered and UP.
	deadline := time.Now().Add(30 * time.Second)
	for {
		up := 0
		for _, n := range d.nodes {
			if st := n.agent.Status(); st.Phase == agent.PhaseRegistered && st.Reported == "UP" {
				up++
			}
		}
		if up == len(d.nodes) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("demo: only %d of %d simulated nodes registered within 30s", up, len(d.nodes))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// close drains and stops the agents, then stops the simulators and the
// servers. It is safe after a partial open.
func (d *demoCluster) close(ctx context.Context) error {
	if d.stopAgents != nil {
		d.stopAgents()
		done := make(chan struct{})
		go func() { d.agentsGroup.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	var errs []error
	for _, n := range d.nodes {
		errs = append(errs, n.sim.Close(ctx))
	}
	if d.client != nil {
		_ = d.client.Close()
	}
	for _, s := range d.servers {
		errs = append(errs, s.Close(ctx))
	}
	if d.webhdfsDir != "" {
		errs = append(errs, os.RemoveAll(d.webhdfsDir))
	}
	return errors.Join(errs...)
}

func (d *demoCluster) node(name string) *demoNode {
	for _, n := range d.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// printIntro says what runs and what to try.
func (d *demoCluster) printIntro(w io.Writer) {
	root := func(i int) string { return urlcheck.Root(d.urls[i]) }
	ctl := func(n *demoNode) string { return "http://" + n.sim.ControlAddr() + "/sim" }
	fmt.Fprintf(w, "heureka demo: 3 registry peers and a SIMULATED HDFS cluster %q (not Hadoop), all on loopback.\n\n", d.cfg.Cluster)
	fmt.Fprintf(w, "  Dashboard:  %s/   (every peer has one: %s/, %s/)\n", root(0), root(1), root(2))
	fmt.Fprintf(w, "  Registry:   export HEUREKA_REGISTRY=%s\n\n", strings.Join(d.urls, ","))
	fmt.Fprintf(w, "  %-5s %-14s %-14s %-8s %s\n", "NODE", "RACK", "ROLE", "", "SIMULATOR CONTROL")
	for _, n := range d.nodes {
		st := n.sim.State()
		role := "DataNode"
		if st.Role == hdfs.RoleNameNode {
			role = "NameNode"
		}
		fmt.Fprintf(w, "  %-5s %-14s %-14s %-8s %s\n", n.name, n.rack, role, string(st.HAState), ctl(n))
	}
	dn := d.node("dn2")
	if dn == nil {
		dn = d.node("dn1")
	}
	drain := d.node("dn1")
	nn1, nn2 := d.node("nn1"), d.node("nn2")
	fmt.Fprintf(w, `
Try, in another terminal (with HEUREKA_REGISTRY exported as above):

  heureka apps
  heureka instances hdfs-datanode.%[1]s
  heureka watch                                   # live changes; or heureka events

  # Kill DataNode %[6]s: its agent reports it DOWN within about a second.
  curl -X POST %[2]s/stop
  # Bring it back: UP again at the next probe.
  curl -X POST %[2]s/start

  # Fail the NameNode over: nn1 steps down, nn2 becomes active.
  curl -X POST '%[3]s/ha?state=standby'
  curl -X POST '%[4]s/ha?state=active'

  # Drain a DataNode (clients stop choosing it), then put it back.
  heureka status set %[5]s OUT_OF_SERVICE
  heureka status clear %[5]s --value UP

  # Fill DataNode %[6]s past the 90%% placement threshold.
  curl -X POST '%[2]s/set?used=3.9T'

  # Choose DataNodes for a write, as HDFS would, from the registry.
  heureka pick --cluster %[1]s -n 3 --writer dn1.%[1]s

  # WebHDFS that follows the active NameNode (the simulators speak it too).
  heureka gateway --cluster %[1]s --listen 127.0.0.1:14000 &
  curl -i -X PUT 'http://127.0.0.1:14000/webhdfs/v1/tmp/a.txt?op=CREATE&user.name=me'

  # Forward failures to a webhook (or Alertmanager with --alertmanager URL).
  heureka alert --webhook http://127.0.0.1:9000/hook

Ctrl-C stops everything (agents drain and deregister first).
`, d.cfg.Cluster, ctl(dn), ctl(nn1), ctl(nn2), drain.id, dn.name)
}

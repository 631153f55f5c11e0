package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/sim"
)

// Config is what a demo runs.
type Config struct {
	// BasePort is the first registry server's port; the others use the
	// next two. 0 picks free ports.
	BasePort int
	// DNSPort is the first registry server's DNS port (UDP and TCP); the
	// others use the next two. With BasePort 0 they are free ports too.
	DNSPort int
	// DataNodes is how many simulated DataNodes run (1 to 50).
	DataNodes int
	// Cluster names the HDFS cluster: applications hdfs-datanode.NAME and
	// hdfs-namenode.NAME; with Roles, the other systems' clusters too
	// (yarn-resourcemanager.NAME, ...).
	Cluster string
	// Roles runs, beside HDFS, a small simulated cluster of each of
	// Systems (YARN, HBase, Elasticsearch, ZooKeeper, Kafka), each member
	// with an agent beside it.
	Roles bool
	// ReadyTimeout bounds how long Open waits for every node to be
	// registered UP.
	ReadyTimeout time.Duration
	// Logger receives the servers', simulators' and agents' logs.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		// Eureka's port, so that the commands' default registry URL
		// reaches the demo.
		BasePort: 8761,
		// Consul's DNS port: no privilege needed, and people know it.
		DNSPort: 8600,
		// Two of each of three racks: enough to show placement across racks.
		DataNodes: 6,
		Cluster:   "demo",
		// Everything is local; a node not UP in 30 s will not be.
		ReadyTimeout: 30 * time.Second,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	switch {
	case c.BasePort < 0 || c.BasePort > 65533:
		return heureka.InvalidConfig("BasePort", c.BasePort, "want 0 or a port up to 65533")
	case c.BasePort != 0 && (c.DNSPort < 1 || c.DNSPort > 65533):
		return heureka.InvalidConfig("DNSPort", c.DNSPort, "want a port up to 65533")
	case c.DataNodes < 1 || c.DataNodes > 50:
		return heureka.InvalidConfig("DataNodes", c.DataNodes, "want 1 to 50")
	case c.Cluster == "" || strings.ContainsAny(c.Cluster, "/\\ \t.") || strings.ToLower(c.Cluster) != c.Cluster:
		return heureka.InvalidConfig("Cluster", c.Cluster, "want a lower-case name without dots, slashes or spaces")
	}
	return heureka.Positive(heureka.NamedDuration{Field: "ReadyTimeout", Value: c.ReadyTimeout})
}

// Racks are the simulated racks, and fullness the DataNodes' use in
// percent, in turn: enough variety to show the dashboard's colours and a
// node over 90%.
var (
	Racks    = []string{"/dc1/rack-a", "/dc1/rack-b", "/dc1/rack-c"}
	fullness = []int64{34, 58, 47, 92, 21, 76, 63, 40, 85}
)

// Node is one simulated daemon with its agent.
type Node struct {
	Name  string // dn1, nn1, …
	Rack  string
	Sim   *sim.Sim
	Agent *agent.Agent
	ID    string // its instance ID
}

// Cluster is everything a demo runs. New has no side effects; Open starts
// it; Close stops it.
type Cluster struct {
	cfg     Config
	log     *slog.Logger
	servers []*server.Server
	urls    []string // the servers' Eureka base URLs
	nodes   []*Node  // NameNodes first
	client  *client.Client

	webhdfsDir string // the simulated cluster's WebHDFS storage, removed by Close
	webDNs     []sim.DataNodeAddr
	systems    []*System // with Config.Roles

	agentCtx    context.Context
	stopAgents  context.CancelFunc
	agentsGroup sync.WaitGroup
}

// New returns a demo of cfg. It starts nothing.
func New(cfg Config) *Cluster {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cluster{cfg: cfg, log: log}
}

// URLs are the registry servers' Eureka base URLs.
func (d *Cluster) URLs() []string { return d.urls }

// DNSAddrs are the registry servers' DNS addresses (HOST:PORT, UDP and
// TCP), in the order of URLs; set by Open.
func (d *Cluster) DNSAddrs() []string {
	out := make([]string, len(d.servers))
	for i, s := range d.servers {
		out[i] = s.DNS.Addr()
	}
	return out
}

// Nodes are the simulated nodes, NameNodes first.
func (d *Cluster) Nodes() []*Node { return d.nodes }

// Node returns the node called name, or nil.
func (d *Cluster) Node(name string) *Node {
	for _, n := range d.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Open starts the servers, then the simulators, then the agents, and
// waits until every node is registered UP (within ReadyTimeout, or until
// ctx ends). After a failed Open, Close stops what was started.
func (d *Cluster) Open(ctx context.Context) error {
	if err := d.cfg.Validate(); err != nil {
		return err
	}
	if err := d.openServers(); err != nil {
		return err
	}
	ccfg := client.DefaultConfig()
	ccfg.URLs, ccfg.Logger = d.urls, d.log
	var err error
	if d.client, err = client.New(ccfg); err != nil {
		return err
	}
	d.agentCtx, d.stopAgents = context.WithCancel(context.Background())
	// The simulated WebHDFS: DataNodes first, so the NameNodes know
	// where to redirect; listed NameNodes first all the same.
	if d.webhdfsDir, err = os.MkdirTemp("", "heureka-demo-webhdfs-"); err != nil {
		return err
	}
	for i := range d.cfg.DataNodes {
		if err := d.openSim(hdfs.RoleDataNode, "dn"+strconv.Itoa(i+1), Racks[i%len(Racks)], fullness[i%len(fullness)], ""); err != nil {
			return err
		}
	}
	if err := d.openSim(hdfs.RoleNameNode, "nn1", Racks[0], 0, hdfs.HAActive); err != nil {
		return err
	}
	if err := d.openSim(hdfs.RoleNameNode, "nn2", Racks[1], 0, hdfs.HAStandby); err != nil {
		return err
	}
	dns := d.nodes[:d.cfg.DataNodes:d.cfg.DataNodes]
	d.nodes = append(slices.Clone(d.nodes[d.cfg.DataNodes:]), dns...)
	if err := d.configureHA(); err != nil {
		return err
	}
	for _, n := range d.nodes {
		if err := d.startAgent(n); err != nil {
			return err
		}
	}
	if d.cfg.Roles {
		if err := d.openSystems(); err != nil {
			return err
		}
	}
	return d.waitRegistered(ctx)
}

// configureHA gives the NameNodes their nameservice, named as the cluster,
// with each NameNode's ID its node name (nn1, nn2), as their hdfs-site.xml
// would: their agents learn the IDs from their /conf, as from Hadoop.
func (d *Cluster) configureHA() error {
	ha := sim.HA{Nameservice: d.cfg.Cluster}
	var nns []*Node
	for _, n := range d.nodes {
		if st := n.Sim.State(); st.Role == hdfs.RoleNameNode {
			_, port, _ := net.SplitHostPort(st.PortAddr)
			ha.NameNodes = append(ha.NameNodes, sim.HANameNode{ID: n.Name, RPCAddr: net.JoinHostPort(st.Hostname, port)})
			nns = append(nns, n)
		}
	}
	for _, n := range nns {
		if err := n.Sim.SetHA(ha); err != nil {
			return fmt.Errorf("demo: simulated NameNode %s: %w", n.Name, err)
		}
	}
	return nil
}

// openServers starts three registry servers, peers of each other.
func (d *Cluster) openServers() error {
	ports, err := freePorts(d.cfg.BasePort)
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
		scfg.DNS.Listen = "127.0.0.1:0"
		if d.cfg.BasePort != 0 {
			scfg.DNS.Listen = "127.0.0.1:" + strconv.Itoa(d.cfg.DNSPort+i)
		}
		s := server.New(scfg, d.log.With("peer", i+1))
		if err := s.Open(); err != nil {
			if d.cfg.BasePort != 0 {
				return fmt.Errorf("demo: registry server on port %d: %w; is another heureka running? try --base-port 0", p, err)
			}
			return fmt.Errorf("demo: registry server: %w", err)
		}
		d.servers = append(d.servers, s)
	}
	return nil
}

// freePorts returns the registry ports: base, base+1, base+2, or three
// free ports.
func freePorts(base int) ([]int, error) {
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

// openSim starts one simulated daemon, used percent full.
func (d *Cluster) openSim(role hdfs.Role, name, rack string, used int64, ha hdfs.HAState) error {
	host := name + "." + d.cfg.Cluster
	scfg := sim.DefaultConfig()
	scfg.Role, scfg.Hostname, scfg.Logger = role, host, d.log
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
	d.nodes = append(d.nodes, &Node{Name: name, Rack: rack, Sim: sm})
	if role == hdfs.RoleDataNode {
		d.webDNs = append(d.webDNs, sim.DataNodeAddr{HTTP: sm.HTTPAddr(), Xfer: sm.PortAddr()})
	}
	return nil
}

// startAgent starts the agent beside n's simulated daemon.
func (d *Cluster) startAgent(n *Node) error {
	st := n.Sim.State()
	var err error
	if n.Agent, n.ID, err = d.newAgent(n.Sim, st.Role, st.Hostname, n.Rack); err != nil {
		return err
	}
	d.agentsGroup.Go(func() {
		if err := n.Agent.Run(d.agentCtx); err != nil {
			d.log.Warn("demo agent ended", "node", st.Hostname, "err", err)
		}
	})
	return nil
}

// newAgent is the agent beside sm, with the HDFS role.
func (d *Cluster) newAgent(sm *sim.Sim, role hdfs.Role, host, rack string) (*agent.Agent, string, error) {
	acfg, hcfg := agent.DefaultConfig(), hdfsrole.DefaultConfig()
	hcfg.Role = role
	acfg.Role, acfg.Cluster, acfg.Host, acfg.IPAddr, acfg.Rack = hcfg.Name(), d.cfg.Cluster, host, "127.0.0.1", rack
	_, port, _ := net.SplitHostPort(sm.PortAddr())
	hcfg.Port, _ = strconv.Atoi(port)
	_, hport, _ := net.SplitHostPort(sm.HTTPAddr())
	hcfg.HTTPPort, _ = strconv.Atoi(hport)
	acfg.DrainPeriod = time.Second // a demo need not wait for polling clients
	acfg.Logger = d.log
	daemon, err := hdfsrole.NewJMXDaemon(hdfsrole.DaemonConfig{Role: role, JMXURL: "http://" + sm.HTTPAddr(), PortAddr: sm.PortAddr(),
		Logger: d.log})
	if err != nil {
		return nil, "", err
	}
	r, err := hdfsrole.New(hcfg, daemon)
	if err != nil {
		return nil, "", err
	}
	a, err := agent.New(acfg, d.client, r)
	return a, acfg.InstanceID(), err
}

// waitRegistered waits until every node and member is registered and UP.
func (d *Cluster) waitRegistered(ctx context.Context) error {
	deadline := time.Now().Add(d.cfg.ReadyTimeout)
	for {
		agents := make([]*agent.Agent, 0, len(d.nodes))
		for _, n := range d.nodes {
			agents = append(agents, n.Agent)
		}
		for _, s := range d.systems {
			for _, m := range s.Members {
				agents = append(agents, m.Agent)
			}
		}
		up := 0
		for _, a := range agents {
			if st := a.Status(); st.Phase == agent.PhaseRegistered && st.Reported == heureka.StatusUp {
				up++
			}
		}
		if up == len(agents) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("demo: only %d of %d simulated daemons registered within %v", up, len(agents), d.cfg.ReadyTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close drains and stops the agents, then stops the simulators and the
// servers, and removes the WebHDFS directory. It is safe after a partial
// Open, and returns every failure.
func (d *Cluster) Close(ctx context.Context) error {
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
		errs = append(errs, n.Sim.Close(ctx))
	}
	for _, s := range d.systems {
		for _, m := range s.Members {
			if c, ok := m.role.(interface{ Close() }); ok {
				c.Close()
			}
		}
		errs = append(errs, s.Sim.Close(ctx))
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

package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
)

// The systems a Cluster simulates (ClusterConfig.System).
const (
	SystemYARN          = "yarn"          // ResourceManagers (an HA pair by default)
	SystemHBase         = "hbase"         // masters (active and backups) and RegionServers
	SystemElasticsearch = "elasticsearch" // nodes, one of them the elected master
	SystemZooKeeper     = "zookeeper"     // an ensemble's servers (one: standalone)
	SystemKafka         = "kafka"         // brokers of a ZooKeeper-mode cluster (kfake)
)

// ClusterConfig is a simulated cluster of one system other than HDFS.
// Start from DefaultClusterConfig.
type ClusterConfig struct {
	// System is one of the System constants.
	System string
	// Members is how many daemons it has: ResourceManagers, HBase masters,
	// Elasticsearch nodes, ZooKeeper servers (1 is a standalone server),
	// Kafka brokers.
	Members int
	// RegionServers is HBase's RegionServers, beside its masters.
	RegionServers int
	// ClusterID is the identity every member answers with: YARN's
	// yarn.resourcemanager.cluster-id, HBase's clusterId, Elasticsearch's
	// cluster UUID, Kafka's cluster id; for ZooKeeper, which has none, it
	// names the hosts of the ensemble's quorum addresses, so that two
	// simulated ensembles differ.
	ClusterID string
	// Version is the release each member reports. HBase's /jmx does not
	// report one, and a Kafka broker's is guessed from its API versions,
	// which kfake's match no release of: both show it on the control page
	// only.
	Version string
	// Racks are given to the members in turn where the system reports a
	// rack (Kafka's broker.rack, Elasticsearch's rack_id attribute); none
	// when empty.
	Racks []string
	// Host is the loopback address every member listens on, each on a
	// free port.
	Host string
	// ControlAddr serves the /sim/ control API (see Cluster.Handler).
	ControlAddr string
	// Logger receives the simulator's logs, with subsystem=sim.
	Logger *slog.Logger
}

// DefaultClusterConfig returns a small cluster of system on loopback, each
// default with its reason.
func DefaultClusterConfig(system string) ClusterConfig {
	c := ClusterConfig{
		System: system,
		// Free loopback ports: several simulators share a test machine
		// and none should be reachable from elsewhere by accident.
		Host:        "127.0.0.1",
		ControlAddr: "127.0.0.1:0",
		// Says what it is wherever an id is shown.
		ClusterID: "heureka-simulator-" + system,
	}
	switch system {
	case SystemYARN:
		c.Members, c.Version = 2, "3.3.6" // an HA pair: rm1 active, rm2 standby
	case SystemHBase:
		c.Members, c.RegionServers = 2, 3 // an active master, a backup, three RegionServers
		c.ClusterID = "5d9d9b3e-6a63-4c49-bd8e-heureka00sim"
	case SystemElasticsearch:
		c.Members, c.Version = 3, "8.15.1" // three master-eligible data nodes: the smallest quorum
		c.ClusterID = "HeurekaSimulatorUUID0w"
		c.Racks = []string{"r1", "r2", "r3"}
	case SystemZooKeeper:
		c.Members, c.Version = 3, "3.8.4" // the smallest ensemble that survives a death
	case SystemKafka:
		c.Members = 3
		c.Racks = []string{"r1", "r2", "r3"}
	}
	return c
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c ClusterConfig) Validate() error {
	switch {
	case !slices.Contains([]string{SystemYARN, SystemHBase, SystemElasticsearch, SystemZooKeeper, SystemKafka}, c.System):
		return heureka.InvalidConfig("System", c.System, "is not one of yarn, hbase, elasticsearch, zookeeper, kafka")
	case c.Members < 1 || c.Members > 16:
		return heureka.InvalidConfig("Members", c.Members, "is not between 1 and 16")
	case c.RegionServers < 0 || c.RegionServers > 16 || (c.RegionServers > 0 && c.System != SystemHBase):
		return heureka.InvalidConfig("RegionServers", c.RegionServers, "only HBase has them, at most 16")
	case c.ClusterID == "" || len(c.ClusterID) > 128 || strings.ContainsFunc(c.ClusterID, func(r rune) bool { return r <= ' ' || r == 0x7f || r == ',' || r == ';' || r == ':' }):
		return heureka.InvalidConfig("ClusterID", c.ClusterID, "must be 1-128 printable characters without spaces, commas, semicolons or colons")
	case c.Version == "" && c.System != SystemHBase && c.System != SystemKafka:
		return heureka.InvalidConfig("Version", nil, "is empty")
	case net.ParseIP(c.Host) == nil:
		return heureka.InvalidConfig("Host", c.Host, "is not an IP address")
	case c.ControlAddr == "":
		return heureka.InvalidConfig("ControlAddr", nil, "is empty")
	}
	for i, r := range c.Racks {
		if r == "" || strings.ContainsFunc(r, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return heureka.InvalidConfig(fmt.Sprintf("Racks[%d]", i), r, "is empty or holds spaces")
		}
	}
	return nil
}

// Cluster is a simulated cluster of YARN ResourceManagers, HBase masters
// and RegionServers, Elasticsearch nodes, ZooKeeper servers or Kafka
// brokers: NOT the real system. Each member answers its role's real
// endpoints in the real shapes, marked as simulated, on a port of its
// own, and can be stopped, started, paused and resumed; the cluster's
// role states (the active ResourceManager, the active HBase master, the
// elected Elasticsearch master, the ZooKeeper leader, the Kafka
// controller) move when told, and as the real system would move them when
// a member stops. Build it with NewCluster, then Open.
type Cluster struct {
	cfg   ClusterConfig
	log   *slog.Logger
	model roleModel
	wg    sync.WaitGroup

	mu      sync.Mutex // guards what follows and the model's state
	members []*member
	opened  bool
	closed  bool
	ctrlLn  net.Listener
	ctrlSrv *http.Server
}

// member is one simulated daemon of the cluster.
type member struct {
	name    string // rm1, master1, rs1, es1, zk1, broker0
	role    string // its registry role: yarn-resourcemanager, hbase-master, ...
	d       daemon
	version string
	rack    string
}

// roleModel is what one system's members answer and how its role states
// move. Every method is called with Cluster.mu held.
type roleModel interface {
	// answer is member i's answer to an HTTP request (not called for
	// Kafka, whose brokers kfake serves): status and JSON or text body.
	answer(i int, r *http.Request) (int, []byte)
	// state is member i's role state as its daemon reports it.
	state(i int) string
	// setState moves member i to state, and the others as the system
	// would (a failover makes the old active standby).
	setState(i int, state string) error
	// up is told that member i started (true) or stopped (false), after
	// its daemon did, so the system can react as the real one does (a
	// standby taking over, a leader elected, a RegionServer counted dead).
	up(i int, running bool)
	// set changes one of member i's figures (POST /sim/set); version is
	// the Cluster's.
	set(i int, key, value string) error
	// states lists the role states setState accepts, for help texts.
	states() string
}

// opener is a model that runs something of its own (Kafka's kfake):
// opened before the members start, closed after they stop.
type opener interface {
	open() error
	close()
}

// MemberState is one member as GET /sim/state reports it.
type MemberState struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	Addr    string `json:"addr"` // where its daemon answers: web, AdminServer or broker port
	Running bool   `json:"running"`
	Paused  bool   `json:"paused"`
	State   string `json:"state"` // its role state, as it reports it
	Version string `json:"version,omitempty"`
	Rack    string `json:"rack,omitempty"`
}

// ClusterState is a snapshot of a Cluster, as GET /sim/state reports it.
type ClusterState struct {
	System    string        `json:"system"`
	Simulated bool          `json:"simulated"`
	ClusterID string        `json:"cluster_id"`
	Control   string        `json:"control"`
	Members   []MemberState `json:"members"`
	// Ensemble is a ZooKeeper ensemble's voting members, as
	// "id=host:port,..." (what an agent's expected ensemble is).
	Ensemble string `json:"ensemble,omitempty"`
}

// NewCluster returns a simulated cluster for cfg. It listens on nothing
// until Open.
func NewCluster(cfg ClusterConfig) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Racks = slices.Clone(cfg.Racks)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Cluster{cfg: cfg, log: logger.With("subsystem", "sim", "system", cfg.System)}
	switch cfg.System {
	case SystemYARN:
		c.model = newYARN(c)
	case SystemHBase:
		c.model = newHBase(c)
	case SystemElasticsearch:
		c.model = newElasticsearch(c)
	case SystemZooKeeper:
		c.model = newZooKeeper(c)
	case SystemKafka:
		c.model = newKafka(c)
	}
	return c, nil
}

// addHTTPMembers adds n members of role named prefix1..prefixN, each an
// HTTP daemon on a free port of cfg.Host answering through the model.
func (c *Cluster) addHTTPMembers(role, prefix string, n int) {
	for range n {
		i := len(c.members)
		m := &member{name: fmt.Sprintf("%s%d", prefix, countRole(c.members, role)+1), role: role, version: c.cfg.Version}
		m.d = newHTTPDaemon(net.JoinHostPort(c.cfg.Host, "0"), c.answerer(i), c.log, &c.wg)
		if len(c.cfg.Racks) > 0 {
			m.rack = c.cfg.Racks[i%len(c.cfg.Racks)]
		}
		c.members = append(c.members, m)
	}
}

func countRole(ms []*member, role string) int {
	n := 0
	for _, m := range ms {
		if m.role == role {
			n++
		}
	}
	return n
}

// answerer is member i's HTTP handler: the model's answer, marked as a
// simulator's, as JSON unless it is an HTML error page.
func (c *Cluster) answerer(i int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		code, body := c.model.answer(i, r)
		c.mu.Unlock()
		w.Header().Set("X-Heureka-Simulator", "true")
		ctype := "application/json"
		if len(body) > 0 && body[0] == '<' {
			ctype = "text/html;charset=iso-8859-1"
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(code)
		_, _ = w.Write(body)
	})
}

// Open starts every member and listens on the control address. Errors (a
// busy port, say) come back here.
func (c *Cluster) Open() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opened || c.closed {
		return errors.New("sim: already opened")
	}
	ln, err := net.Listen("tcp", c.cfg.ControlAddr)
	if err != nil {
		return fmt.Errorf("sim: control listener: %w", err)
	}
	o, runs := c.model.(opener)
	if runs {
		if err := o.open(); err != nil {
			ln.Close()
			return err
		}
	}
	for i, m := range c.members {
		if err := m.d.start(); err != nil {
			for _, s := range c.members[:i] {
				s.d.stop()
			}
			if runs {
				o.close()
			}
			ln.Close()
			return fmt.Errorf("sim: %s: %w", m.name, err)
		}
	}
	c.opened, c.ctrlLn = true, ln
	c.ctrlSrv = &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
	srv := c.ctrlSrv
	c.wg.Go(func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			c.log.Warn("control server ended", "err", err)
		}
	})
	c.log.Info("simulated cluster started", "members", len(c.members), "control", ln.Addr().String())
	return nil
}

// Close stops every member and the control API and waits for their
// goroutines, bounded by ctx. It is idempotent.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, m := range c.members {
		m.d.stop()
	}
	ctrl := c.ctrlSrv
	c.mu.Unlock()
	if ctrl != nil {
		if err := ctrl.Shutdown(ctx); err != nil {
			_ = ctrl.Close()
		}
	}
	if o, ok := c.model.(opener); ok {
		o.close()
	}
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// find returns the index of the member named name. c.mu must be held.
func (c *Cluster) find(name string) (int, error) {
	for i, m := range c.members {
		if m.name == name {
			return i, nil
		}
	}
	names := make([]string, len(c.members))
	for i, m := range c.members {
		names[i] = m.name
	}
	return 0, fmt.Errorf("sim: no member %q; the members are %s", name, strings.Join(names, ", "))
}

// act runs f on member name, open and not closed, under c.mu.
func (c *Cluster) act(name string, f func(i int, m *member) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.opened || c.closed {
		return errors.New("sim: not open")
	}
	i, err := c.find(name)
	if err != nil {
		return err
	}
	return f(i, c.members[i])
}

// Stop makes member name vanish as if its process had died: its port
// refuses connections and every open one is cut. The cluster reacts as
// the real one would (see the system's doc in the package doc). Stopping
// a stopped member does nothing.
func (c *Cluster) Stop(name string) error {
	return c.act(name, func(i int, m *member) error {
		if !m.d.running() {
			return nil
		}
		m.d.stop()
		c.log.Info("simulated daemon stopped", "member", m.name)
		c.model.up(i, false)
		return nil
	})
}

// Start brings a stopped member back on the address it had, unpaused.
func (c *Cluster) Start(name string) error {
	return c.act(name, func(i int, m *member) error {
		if m.d.running() {
			return nil
		}
		if err := m.d.start(); err != nil {
			return fmt.Errorf("sim: %s: %w", m.name, err)
		}
		c.log.Info("simulated daemon started", "member", m.name, "addr", m.d.addr())
		c.model.up(i, true)
		return nil
	})
}

// Pause makes member name accept connections and answer nothing, as a
// process under SIGSTOP or a long GC pause does, until Resume. The rest of
// the cluster carries on as it was. Pausing a stopped member is an error.
func (c *Cluster) Pause(name string) error {
	return c.act(name, func(i int, m *member) error {
		if !m.d.running() {
			return fmt.Errorf("sim: %s is stopped; start it before pausing it", m.name)
		}
		m.d.pause()
		c.log.Info("simulated daemon paused", "member", m.name)
		return nil
	})
}

// Resume lets a paused member answer again, queued requests first.
func (c *Cluster) Resume(name string) error {
	return c.act(name, func(i int, m *member) error {
		m.d.resume()
		c.log.Info("simulated daemon resumed", "member", m.name)
		return nil
	})
}

// SetState sets member name's role state, moving the others as the
// system would: "active" for a ResourceManager or an HBase master (a
// failover: the old active becomes standby or backup), "master" for an
// Elasticsearch node (an election), "leader" for a ZooKeeper server,
// "controller" for a Kafka broker, and the other states each system has
// (see Handler).
func (c *Cluster) SetState(name, state string) error {
	return c.act(name, func(i int, m *member) error {
		before := c.model.state(i)
		if err := c.model.setState(i, strings.ToLower(strings.TrimSpace(state))); err != nil {
			return err
		}
		c.log.Info("role state set", "member", m.name, "was", before, "now", c.model.state(i))
		return nil
	})
}

// Set changes one of member name's figures: "version" for every system,
// and the ones each system has (see Handler).
func (c *Cluster) Set(name, key, value string) error {
	if len(value) > 64 || strings.ContainsFunc(value, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("sim: %s %q: at most 64 printable characters", key, value)
	}
	value = strings.TrimSpace(value)
	return c.act(name, func(i int, m *member) error {
		if key == "version" {
			if value == "" {
				return errors.New("sim: version is empty")
			}
			m.version = value
			return nil
		}
		return c.model.set(i, key, value)
	})
}

// State returns a snapshot of the cluster.
func (c *Cluster) State() ClusterState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ClusterState{System: c.cfg.System, Simulated: true, ClusterID: c.cfg.ClusterID}
	if c.ctrlLn != nil {
		st.Control = c.ctrlLn.Addr().String()
	}
	for i, m := range c.members {
		st.Members = append(st.Members, MemberState{
			Name: m.name, Role: m.role, Addr: m.d.addr(), Running: m.d.running(), Paused: m.d.paused(),
			State: c.model.state(i), Version: m.version, Rack: m.rack,
		})
	}
	if e, ok := c.model.(interface{ ensemble() string }); ok {
		st.Ensemble = e.ensemble()
	}
	return st
}

// Run is a simulated cluster as a program runs it (`heureka sim
// --system`): it opens the cluster, logs "heureka sim listening" with the
// control address and what an agent checks (cluster_id; for ZooKeeper,
// ensemble), then "heureka sim member" for each member with its name,
// role, address, rack and role state, waits for ctx to end, and closes
// the cluster, bounded by five seconds.
func (c *Cluster) Run(ctx context.Context, pid int) error {
	if err := c.Open(); err != nil {
		return err
	}
	st := c.State()
	c.log.Info("heureka sim listening", "simulated", true, "control", st.Control,
		"cluster_id", st.ClusterID, "ensemble", st.Ensemble, "pid", pid)
	for _, m := range st.Members {
		c.log.Info("heureka sim member", "member", m.Name, "role", m.Role, "addr", m.Addr, "rack", m.Rack, "state", m.State, "control", st.Control)
	}
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Close(cctx); err != nil {
		return err
	}
	c.log.Info("heureka sim stopped")
	return nil
}

// Member returns the member named name, as State reports it.
func (c *Cluster) Member(name string) (MemberState, bool) {
	for _, m := range c.State().Members {
		if m.Name == name {
			return m, true
		}
	}
	return MemberState{}, false
}

// ControlAddr is the control API's address, "" before Open.
func (c *Cluster) ControlAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctrlLn == nil {
		return ""
	}
	return c.ctrlLn.Addr().String()
}

// running lists the indexes of the members of role that are running, in
// order. c.mu must be held.
func (c *Cluster) running(role string) []int {
	var out []int
	for i, m := range c.members {
		if m.role == role && m.d.running() {
			out = append(out, i)
		}
	}
	return out
}

// lastOf returns the highest of is, or -1.
func lastOf(is []int) int {
	if len(is) == 0 {
		return -1
	}
	return slices.MaxFunc(is, cmp.Compare[int])
}

// startCode is a simulated process start time (ms since the epoch), as
// HBase server names and YARN's startedOn carry; it never repeats within
// a process, so a restarted member is a new server.
func startCode() int64 {
	startMu.Lock()
	defer startMu.Unlock()
	lastStart = max(time.Now().UnixMilli(), lastStart+1)
	return lastStart
}

var (
	startMu   sync.Mutex
	lastStart int64
)

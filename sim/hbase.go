package sim

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka/hbase"
)

// hbaseModel simulates HBase masters and RegionServers: each serves /jmx
// as HBase's JMX servlet does (Hadoop's JMXJsonServlet, Jackson's pretty
// printer), with the Server bean heureka reads
// (Hadoop:service=HBase,name=Master,sub=Server or ...,name=RegionServer,
// sub=Server) and a Heureka:service=Simulator bean, honouring ?qry=. The
// first master starts active and the others backup; the active master
// lists the RegionServers live and dead. When the active master stops,
// the first running backup takes over at once (as after its ZooKeeper
// session ends); a RegionServer that stops is counted dead by the master
// at once, and comes back under a new server name (a new start code), as
// a restarted RegionServer is a new server to HBase. A RegionServer set
// "dead" while it runs is a zombie: the master counts it dead and it
// still answers.
type hbaseModel struct {
	c      *Cluster
	active int // index of the active master, -1 when none
	srv    []hbaseServer
	dead   []string // server names the active master counts dead, oldest first
}

type hbaseServer struct {
	start   int64 // start code
	regions int64
	zombie  bool
}

const (
	hbaseMasterRole = hbase.MasterRoleName
	hbaseRSRole     = hbase.RegionServerRoleName
)

func newHBase(c *Cluster) *hbaseModel {
	c.addHTTPMembers(hbaseMasterRole, "master", c.cfg.Members)
	c.addHTTPMembers(hbaseRSRole, "rs", c.cfg.RegionServers)
	m := &hbaseModel{c: c, srv: make([]hbaseServer, len(c.members))}
	for i := range m.srv {
		m.srv[i] = hbaseServer{start: startCode(), regions: int64(12 + i)}
	}
	return m
}

func (m *hbaseModel) isMaster(i int) bool { return m.c.members[i].role == hbaseMasterRole }

// serverName is "host,port,startcode", HBase's name for a server.
func (m *hbaseModel) serverName(i int) string {
	port := 16020
	if m.isMaster(i) {
		port = 16000
	}
	return fmt.Sprintf("%s.%s,%d,%d", m.c.members[i].name, hbaseHostSuffix, port, m.srv[i].start)
}

// hbaseHostSuffix makes the simulated servers' host names, e.g.
// rs1.hbase.heureka-sim.invalid (RFC 2606: never a real host).
const hbaseHostSuffix = "hbase.heureka-sim.invalid"

func (m *hbaseModel) answer(i int, r *http.Request) (int, []byte) {
	if r.URL.Path != "/jmx" {
		return http.StatusNotFound, []byte(`<html><body><h2>HTTP ERROR 404</h2><p>heureka's simulated HBase serves /jmx only</p></body></html>`)
	}
	qry := r.URL.Query().Get("qry")
	if qry == "" {
		qry = "*:*"
	}
	p, ok := parsePattern(qry)
	if !ok {
		return http.StatusBadRequest, writeError("query format is not as expected.")
	}
	var out []bean
	for _, b := range []bean{m.serverBean(i), m.simulatorBean(i)} {
		if p.match(b.name()) {
			out = append(out, b)
		}
	}
	return http.StatusOK, writeBeans(out)
}

func (m *hbaseModel) simulatorBean(i int) bean {
	return bean{
		{"name", "Heureka:service=Simulator,name=SimulatorInfo"},
		{"modelerType", "heureka.sim.Cluster"},
		{"Simulated", true},
		{"Role", m.c.members[i].role},
		{"Description", "heureka sim: a simulated " + m.c.members[i].role + " for tests and demos; not HBase"},
	}
}

func (m *hbaseModel) serverBean(i int) bean {
	name := m.serverName(i)
	host, _, _ := strings.Cut(name, ",")
	quorum := "zk1." + hbaseHostSuffix + ":2181"
	if !m.isMaster(i) {
		s := m.srv[i]
		return bean{
			{"name", hbase.RegionServerBean}, {"modelerType", "RegionServer,sub=Server"},
			{"tag.zookeeperQuorum", quorum}, {"tag.serverName", name}, {"tag.clusterId", m.c.cfg.ClusterID},
			{"tag.Context", "regionserver"}, {"tag.Hostname", host}, hbaseSimTag,
			{"regionCount", s.regions}, {"storeCount", 2 * s.regions}, {"storeFileCount", 3 * s.regions},
			{"storeFileSize", s.regions * 256 << 20}, {"regionServerStartTime", s.start},
		}
	}
	live, dead := []string{}, []string{}
	avg := math.NaN()
	if i == m.active {
		live, dead = m.live(), m.dead
		if len(live) > 0 {
			var n int64
			for _, j := range m.c.running(hbaseRSRole) {
				n += m.srv[j].regions
			}
			avg = float64(n) / float64(len(live))
		}
	}
	return bean{
		{"name", hbase.MasterBean}, {"modelerType", "Master,sub=Server"},
		{"tag.liveRegionServers", strings.Join(live, ";")}, {"tag.deadRegionServers", strings.Join(dead, ";")},
		{"tag.drainingRegionServers", ""}, {"tag.zookeeperQuorum", quorum},
		{"tag.serverName", name}, {"tag.clusterId", m.c.cfg.ClusterID},
		{"tag.isActiveMaster", strconv.FormatBool(i == m.active)}, {"tag.Context", "master"}, {"tag.Hostname", host}, hbaseSimTag,
		{"masterStartTime", m.srv[i].start}, {"averageLoad", avg},
		{"numRegionServers", int64(len(live))}, {"numDeadRegionServers", int64(len(dead))},
	}
}

// live is the server names of the running RegionServers the master does
// not count dead.
func (m *hbaseModel) live() []string {
	var out []string
	for _, j := range m.c.running(hbaseRSRole) {
		if !m.srv[j].zombie {
			out = append(out, m.serverName(j))
		}
	}
	return out
}

func (m *hbaseModel) state(i int) string {
	switch {
	case !m.isMaster(i) && m.srv[i].zombie:
		return "dead"
	case !m.isMaster(i):
		return hbase.RoleServing
	case i == m.active:
		return hbase.RoleActive
	}
	return hbase.RoleBackup
}

func (m *hbaseModel) setState(i int, state string) error {
	switch {
	case m.isMaster(i) && state == hbase.RoleActive:
		m.active = i
	case m.isMaster(i) && state == hbase.RoleBackup:
		if m.active == i {
			m.active = -1
		}
	case !m.isMaster(i) && state == "dead" && !m.srv[i].zombie:
		m.srv[i].zombie = true
		m.dead = append(m.dead, m.serverName(i))
	case !m.isMaster(i) && state == hbase.RoleServing:
		m.srv[i].zombie = false
		m.dead = slices.DeleteFunc(m.dead, func(s string) bool { return s == m.serverName(i) })
	case !m.isMaster(i) && state == "dead":
	default:
		return fmt.Errorf("sim: %s is a %s; its state is one of %s, not %q", m.c.members[i].name, m.c.members[i].role, m.states(), state)
	}
	return nil
}

func (m *hbaseModel) up(i int, running bool) {
	switch {
	case m.isMaster(i) && running:
		m.srv[i].start = startCode()
		if m.active < 0 {
			m.active = i
		}
	case m.isMaster(i):
		if m.active == i {
			m.active = -1
			for _, j := range m.c.running(hbaseMasterRole) {
				m.active = j
				m.c.log.Info("the backup HBase master took over", "member", m.c.members[j].name)
				break
			}
		}
	case running:
		// A new server to HBase: its old name stays dead.
		m.srv[i].start, m.srv[i].zombie = startCode(), false
	default:
		if !m.srv[i].zombie {
			m.dead = append(m.dead, m.serverName(i))
		}
		m.srv[i].zombie = false
	}
	if len(m.dead) > 16 {
		m.dead = m.dead[len(m.dead)-16:] // HBase forgets processed dead servers too
	}
}

func (m *hbaseModel) set(i int, key, value string) error {
	if key != "regions" || m.isMaster(i) {
		return fmt.Errorf("sim: an HBase master has version; a RegionServer version and regions=N, not %q", key)
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 0 || n > 1<<20 {
		return fmt.Errorf("sim: regions=%q is not a count of regions", value)
	}
	m.srv[i].regions = n
	return nil
}

func (m *hbaseModel) states() string {
	return "a master active (takes over) or backup; a RegionServer dead (the master counts it dead) or serving"
}

// hbaseSimTag marks every simulated HBase Server bean.
var hbaseSimTag = attr{"tag.Simulator", "heureka sim (not HBase)"}

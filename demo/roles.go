package demo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/elasticsearchrole"
	"github.com/heureka-project/heureka/agent/hbaserole"
	"github.com/heureka-project/heureka/agent/kafkarole"
	"github.com/heureka-project/heureka/agent/yarnrole"
	"github.com/heureka-project/heureka/agent/zookeeperrole"
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/yarn"
	"github.com/heureka-project/heureka/zookeeper"
)

// Systems are the other systems Config.Roles runs, in the order they are
// started and shown.
var Systems = []string{sim.SystemYARN, sim.SystemHBase, sim.SystemElasticsearch, sim.SystemZooKeeper, sim.SystemKafka}

// System is one simulated cluster of a system other than HDFS, each
// member with an agent beside it.
type System struct {
	Name    string // a sim.System constant
	Sim     *sim.Cluster
	Members []*Member
}

// Member is one member of a System with its agent.
type Member struct {
	Name  string // its name in the simulator: rm1, master1, rs1, es1, zk1, broker0
	Role  string // its registry role, e.g. yarn-resourcemanager
	Rack  string
	Agent *agent.Agent
	ID    string // its instance ID
	role  agent.Role
}

// Systems are the simulated clusters of the other systems (Config.Roles),
// in the order of the package's Systems.
func (d *Cluster) Systems() []*System { return d.systems }

// openSystems starts a small simulated cluster of each of Systems, on
// loopback, each member's rack one of Racks in turn (Kafka's broker.rack
// and Elasticsearch's rack_id attribute too), and an agent beside every
// member.
func (d *Cluster) openSystems() error {
	for _, name := range Systems {
		cfg := sim.DefaultClusterConfig(name)
		cfg.Logger = d.log
		if len(cfg.Racks) > 0 {
			cfg.Racks = Racks
		}
		c, err := sim.NewCluster(cfg)
		if err != nil {
			return err
		}
		if err := c.Open(); err != nil {
			return fmt.Errorf("demo: simulated %s cluster: %w", name, err)
		}
		s := &System{Name: name, Sim: c}
		d.systems = append(d.systems, s)
		st := c.State()
		for i, ms := range st.Members {
			m := &Member{Name: ms.Name, Role: ms.Role, Rack: Racks[i%len(Racks)]}
			if ms.Rack != "" {
				m.Rack = ms.Rack
			}
			if m.role, err = roleFor(st, i); err != nil {
				return fmt.Errorf("demo: %s %s: %w", name, ms.Name, err)
			}
			acfg := agent.DefaultConfig()
			acfg.Role, acfg.Cluster, acfg.Host, acfg.IPAddr, acfg.Rack = ms.Role, d.cfg.Cluster, ms.Name+"."+d.cfg.Cluster, "127.0.0.1", m.Rack
			acfg.DrainPeriod, acfg.Logger = time.Second, d.log
			if m.Agent, err = agent.New(acfg, d.client, m.role); err != nil {
				if c, ok := m.role.(interface{ Close() }); ok {
					c.Close() // Close only closes the roles of the members it holds
				}
				return fmt.Errorf("demo: %s %s: %w", name, ms.Name, err)
			}
			m.ID = acfg.InstanceID()
			s.Members = append(s.Members, m)
			d.agentsGroup.Go(func() {
				if err := m.Agent.Run(d.agentCtx); err != nil {
					d.log.Warn("demo agent ended", "member", m.Name, "err", err)
				}
			})
		}
	}
	return nil
}

// roleFor is the agent role beside member i of a simulated cluster, told
// the cluster's identity as an operator's flags would tell it.
func roleFor(st sim.ClusterState, i int) (agent.Role, error) {
	m := st.Members[i]
	url := "http://" + m.Addr
	switch m.Role {
	case yarn.RoleName:
		c := yarnrole.DefaultConfig()
		c.URL, c.ClusterID = url, st.ClusterID
		return yarnrole.New(c)
	case hbase.MasterRoleName, hbase.RegionServerRoleName:
		c := hbaserole.DefaultConfig()
		c.Role, c.URL, c.ClusterID = m.Role, url, st.ClusterID
		if m.Role == hbase.RegionServerRoleName {
			for _, o := range st.Members {
				if o.Role == hbase.MasterRoleName {
					c.MasterURLs = append(c.MasterURLs, "http://"+o.Addr)
				}
			}
			c.MasterCheckInterval = 2 * time.Second // a demo shows a zombie soon
		}
		return hbaserole.New(c)
	case elasticsearch.RoleName:
		c := elasticsearchrole.DefaultConfig()
		c.URL, c.ClusterUUID = url, st.ClusterID
		return elasticsearchrole.New(c)
	case zookeeper.RoleName:
		c := zookeeperrole.DefaultConfig()
		c.URL, c.Ensemble = url, st.Ensemble
		return zookeeperrole.New(c)
	case kafka.RoleName:
		c := kafkarole.DefaultConfig()
		id, err := strconv.Atoi(strings.TrimPrefix(m.Name, "broker")) // the simulator's brokers are broker<node id>
		if err != nil {
			return nil, fmt.Errorf("kafka broker %q has no node id in its name", m.Name)
		}
		c.Addr, c.NodeID, c.ClusterID = m.Addr, int32(id), st.ClusterID
		return kafkarole.New(c)
	}
	return nil, fmt.Errorf("no agent role for %s", m.Role)
}

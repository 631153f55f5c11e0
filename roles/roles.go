package roles

import (
	"slices"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/yarn"
	"github.com/heureka-project/heureka/zookeeper"
)

// Role is one role agents register as "<Name>.<cluster>" (heureka.RoleApp).
type Role struct {
	// Name is the role's name in application names, e.g.
	// "yarn-resourcemanager".
	Name string `json:"name"`
	// System is the system it belongs to, for people: "YARN". Roles of one
	// system and cluster (HBase's masters and RegionServers) are one
	// cluster to show.
	System string `json:"system"`
	// Member and Members name one member and several, for people:
	// "ResourceManager", "ResourceManagers".
	Member  string `json:"member"`
	Members string `json:"members"`
	// States are the role states its agents report, the lead first; an
	// agent may report others (Elasticsearch's first node role), which
	// consumers that count states by name count as Other.
	States []string `json:"states"`
	// Leads are the role states of a member that leads its cluster, the
	// one to name first: "active", or ZooKeeper's "leader" and
	// "standalone" (a server alone is its own leader). Empty for a role
	// whose members are peers (DataNodes, RegionServers).
	Leads []string `json:"leads,omitempty"`
	// Alert is the alert a cluster of this role raises when members are
	// UP and none leads (see NeedsLead); "" for a role without one.
	Alert string `json:"alert,omitempty"`
	// NoLead says, for people, what such a cluster lacks: "no active
	// ResourceManager"; "" for a role without a lead.
	NoLead string `json:"noLead,omitempty"`
	// unled says, for a member's metadata, that its cluster has no lead
	// to expect (a Kafka broker of a KRaft cluster); nil: every cluster
	// of the role expects one.
	unled func(heureka.Metadata) bool
}

// Other is the state that Count-style consumers put every role state not
// in a role's States under, and Unknown the one they put a member without
// a role state under.
const (
	Other   = "other"
	Unknown = "unknown"
)

// The alerts raised for a cluster with members UP and none leading.
const (
	AlertNoActiveResourceManager = "HeurekaNoActiveResourceManager"
	AlertNoActiveHBaseMaster     = "HeurekaNoActiveHBaseMaster"
	AlertZooKeeperNoLeader       = "HeurekaZooKeeperNoLeader"
	AlertKafkaNoController       = "HeurekaKafkaNoController"
)

// all is every role, in the order consumers show them: HDFS's, then the
// other systems', each system's leading role first.
var all = []Role{
	{Name: hdfs.RoleName(hdfs.RoleNameNode), System: "HDFS", Member: "NameNode", Members: "NameNodes",
		States: []string{string(hdfs.HAActive), string(hdfs.HAStandby), string(hdfs.HAObserver)}, Leads: []string{string(hdfs.HAActive)},
		NoLead: "no active NameNode"},
	{Name: hdfs.RoleName(hdfs.RoleDataNode), System: "HDFS", Member: "DataNode", Members: "DataNodes"},
	{Name: yarn.RoleName, System: "YARN", Member: "ResourceManager", Members: "ResourceManagers",
		States: []string{string(yarn.HAActive), string(yarn.HAStandby)}, Leads: []string{string(yarn.HAActive)},
		Alert: AlertNoActiveResourceManager, NoLead: "no active ResourceManager"},
	{Name: hbase.MasterRoleName, System: "HBase", Member: "master", Members: "masters",
		States: []string{hbase.RoleActive, hbase.RoleBackup}, Leads: []string{hbase.RoleActive}, Alert: AlertNoActiveHBaseMaster,
		NoLead: "no active master"},
	{Name: hbase.RegionServerRoleName, System: "HBase", Member: "RegionServer", Members: "RegionServers",
		States: []string{hbase.RoleServing}},
	{Name: elasticsearch.RoleName, System: "Elasticsearch", Member: "node", Members: "nodes",
		States: []string{elasticsearch.RoleMaster, elasticsearch.RoleMasterEligible, elasticsearch.RoleData, elasticsearch.RoleCoordinating},
		Leads:  []string{elasticsearch.RoleMaster}, NoLead: "no elected master"},
	{Name: zookeeper.RoleName, System: "ZooKeeper", Member: "server", Members: "servers",
		States: []string{string(zookeeper.StateLeader), string(zookeeper.StateStandalone), string(zookeeper.StateFollower),
			string(zookeeper.StateObserver), string(zookeeper.StateReadOnly), string(zookeeper.StateNotServing)},
		Leads: []string{string(zookeeper.StateLeader), string(zookeeper.StateStandalone)}, Alert: AlertZooKeeperNoLeader,
		NoLead: "no leader"},
	{Name: kafka.RoleName, System: "Kafka", Member: "broker", Members: "brokers",
		States: []string{kafka.RoleController, kafka.RoleBroker}, Leads: []string{kafka.RoleController},
		Alert: AlertKafkaNoController, NoLead: "no controller", unled: func(md heureka.Metadata) bool { return md.Get(kafka.MetaKRaft) == "true" }},
}

// All returns every role, in the order consumers show them.
func All() []Role { return slices.Clone(all) }

// Lookup returns the role called name (in any case).
func Lookup(name string) (Role, bool) {
	name = strings.ToLower(name)
	for _, r := range all {
		if r.Name == name {
			return r, true
		}
	}
	return Role{}, false
}

// Parse returns the role and cluster of an application made by
// heureka.RoleApp, in any case; ok is false for an application that is
// not of a role this package knows.
func Parse(app string) (r Role, cluster string, ok bool) {
	name, cluster, ok := heureka.ParseRoleApp(app)
	if !ok {
		return Role{}, "", false
	}
	if r, ok = Lookup(name); !ok {
		return Role{}, "", false
	}
	return r, cluster, true
}

// ByAlert returns the role whose Alert is alert.
func ByAlert(alert string) (Role, bool) {
	for _, r := range all {
		if r.Alert != "" && r.Alert == alert {
			return r, true
		}
	}
	return Role{}, false
}

// Lead is the role state to name as the cluster's lead ("active",
// "leader", "controller"); "" for a role whose members are peers.
func (r Role) Lead() string {
	if len(r.Leads) == 0 {
		return ""
	}
	return r.Leads[0]
}

// IsLead reports whether a member in role state state leads its cluster.
func (r Role) IsLead(state string) bool { return slices.Contains(r.Leads, state) }

// Label is state as consumers that count states by name count it: one of
// States, Unknown for none, or Other.
func (r Role) Label(state string) string {
	switch {
	case state == "":
		return Unknown
	case slices.Contains(r.States, state):
		return state
	}
	return Other
}

// NeedsLead reports whether the cluster of a member whose metadata is md
// must have a lead: the role has one and, for Kafka, the broker runs with
// ZooKeeper (with KRaft the controllers are a quorum of their own, and no
// broker is registered as the controller).
func (r Role) NeedsLead(md heureka.Metadata) bool {
	return len(r.Leads) > 0 && (r.unled == nil || !r.unled(md))
}

// State is an instance's role state as its agent registered it
// (heureka.MetaRoleState), lower case, or, for a NameNode registered by
// an agent from before that key, its HA state.
func State(md heureka.Metadata) string {
	st, ok := md.Lookup(heureka.MetaRoleState)
	if !ok {
		st = md.Get(hdfs.MetaHAState)
	}
	return strings.ToLower(strings.TrimSpace(st))
}

// Member is one instance as its cluster's lead is judged: its status, its
// role state and whether its cluster needs a lead.
type Member struct {
	Status    heureka.Status `json:"status"`
	State     string         `json:"state,omitempty"`
	NeedsLead bool           `json:"needsLead,omitempty"`
}

// MemberOf is an instance of r with this status and metadata.
func (r Role) MemberOf(status heureka.Status, md heureka.Metadata) Member {
	return Member{Status: status, State: State(md), NeedsLead: r.NeedsLead(md)}
}

// Count is a cluster's members as its lead is judged.
type Count struct {
	Up      int  // members UP
	Leading int  // UP members in a lead state
	Needs   bool // an UP member's cluster needs a lead
}

// Add counts m.
func (r Role) Add(c *Count, m Member) {
	if m.Status != heureka.StatusUp {
		return
	}
	c.Up++
	if r.IsLead(m.State) {
		c.Leading++
	}
	c.Needs = c.Needs || m.NeedsLead
}

// Unled reports a cluster with members UP, none of them leading, and a
// lead needed: what a role's Alert is raised for.
func (c Count) Unled() bool { return c.Needs && c.Up > 0 && c.Leading == 0 }

package httpapi

import (
	"iter"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/roles"
)

// roleCollector exports the registry's role applications (package roles:
// NameNodes, ResourceManagers, HBase servers, Elasticsearch nodes,
// ZooKeeper servers, Kafka brokers; not DataNodes, which have no role
// state): UP members by role state, and, for a cluster that needs a lead,
// how many UP members lead it. Like hdfsCollector it counts each block of
// a snapshot once and keeps the counts while the block is current.
//
// Cardinality: per cluster of a role, one series per state the role
// names (roles.Role.States, 0s included, so "no leader" is a 0 and not a
// missing series), "other" and "unknown" when any member is in them, and
// one leader series; never a label from a value an agent made up.
type roleCollector struct {
	reg     *registry.Registry
	members *prometheus.Desc
	leaders *prometheus.Desc

	mu   sync.Mutex
	memo map[*registry.Block]*roleCounts
}

// roleCounts is one block's or cluster's counts; a block's are immutable
// once made.
type roleCounts struct {
	role    roles.Role
	cluster string
	states  map[string]int // UP members by roles.Role.Label
	lead    roles.Count
}

func newRoleCollector(reg *registry.Registry) *roleCollector {
	return &roleCollector{
		reg: reg,
		members: prometheus.NewDesc("heureka_role_members",
			"UP members of a role's cluster by role state (every state the role knows, 0s included; other, unknown).",
			[]string{"role", "cluster", "state"}, nil),
		leaders: prometheus.NewDesc("heureka_role_leaders",
			"UP members leading their cluster (the active ResourceManager, the ZooKeeper leader, the Kafka controller, ...), "+
				"for each cluster with UP members that needs a lead.",
			[]string{"role", "cluster"}, nil),
		memo: map[*registry.Block]*roleCounts{},
	}
}

func (c *roleCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.members
	ch <- c.leaders
}

func (c *roleCollector) Collect(ch chan<- prometheus.Metric) {
	for _, n := range c.counts() {
		for _, st := range n.role.States {
			ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(n.states[st]), n.role.Name, n.cluster, st)
		}
		for _, st := range []string{roles.Other, roles.Unknown} {
			if v := n.states[st]; v > 0 {
				ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(v), n.role.Name, n.cluster, st)
			}
		}
		if n.lead.Needs {
			ch <- prometheus.MustNewConstMetric(c.leaders, prometheus.GaugeValue, float64(n.lead.Leading), n.role.Name, n.cluster)
		}
	}
}

// counts returns the counts of every role application with states in the
// current snapshot, from the memo where a block is unchanged, and forgets
// the blocks no longer current.
func (c *roleCollector) counts() []*roleCounts {
	apps := c.reg.Snapshot().Blocks()
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[*registry.Block]*roleCounts, len(c.memo))
	var out []*roleCounts
	for _, a := range apps {
		role, cluster, ok := roles.Parse(a.Name)
		if !ok || len(role.States) == 0 || len(a.Blocks) == 0 {
			continue
		}
		sum := &roleCounts{role: role, cluster: cluster, states: map[string]int{}}
		for _, b := range a.Blocks {
			n, ok := c.memo[b]
			if !ok {
				n = countRole(role, cluster, b.All())
			}
			next[b] = n
			for k, v := range n.states {
				sum.states[k] += v
			}
			sum.lead.Up += n.lead.Up
			sum.lead.Leading += n.lead.Leading
			sum.lead.Needs = sum.lead.Needs || n.lead.Needs
		}
		out = append(out, sum)
	}
	c.memo = next
	return out
}

// countRole counts instances, which it does not keep.
func countRole(role roles.Role, cluster string, instances iter.Seq[*heureka.Instance]) *roleCounts {
	n := &roleCounts{role: role, cluster: cluster, states: map[string]int{}}
	for in := range instances {
		m := role.MemberOf(in.Status, in.Metadata)
		role.Add(&n.lead, m)
		if m.Status == heureka.StatusUp {
			n.states[role.Label(m.State)]++
		}
	}
	return n
}

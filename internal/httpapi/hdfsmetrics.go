package httpapi

import (
	"iter"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/registry"
)

// nameNodeStates are the ha_state label values of heureka_hdfs_namenodes,
// every one exported for each cluster that has NameNodes, so that "no
// active NameNode" is a 0 and not a missing series. Hadoop's transient
// states (initializing, stopping) and a missing or unreadable ha_state count
// as unknown.
var nameNodeStates = []string{string(hdfs.HAActive), string(hdfs.HAStandby), string(hdfs.HAObserver), "unknown"}

// hdfsCollector exports the registry's HDFS applications: UP NameNodes by
// HA state and DataNodes by rack and status. A block of a snapshot
// (registry.Block) is replaced only when one of its instances changed, so
// the counts are memoised per block: a scrape recounts only the blocks
// that changed since the last one, and adds up the rest. It reads the
// blocks rather than the flat lists, which would keep a full copy of every
// HDFS instance alive for the collector to scan (registry.Snapshot.Apps).
type hdfsCollector struct {
	reg       *registry.Registry
	nameNodes *prometheus.Desc
	dataNodes *prometheus.Desc

	mu   sync.Mutex
	memo map[*registry.Block]*hdfsCounts
}

// hdfsCounts is one block's or application's counts; a block's are
// immutable once made.
type hdfsCounts struct {
	role    hdfs.Role
	cluster string
	ha      map[string]int    // NameNodes: UP instances by HA state
	racks   map[[2]string]int // DataNodes: instances by rack and status
}

func newHDFSCollector(reg *registry.Registry) *hdfsCollector {
	return &hdfsCollector{
		reg: reg,
		nameNodes: prometheus.NewDesc("heureka_hdfs_namenodes",
			"UP NameNodes by HDFS cluster and HA state (active, standby, observer, unknown; 0s included).",
			[]string{"cluster", "ha_state"}, nil),
		dataNodes: prometheus.NewDesc("heureka_hdfs_datanodes",
			"DataNodes by HDFS cluster, rack and registry status.", []string{"cluster", "rack", "status"}, nil),
		memo: map[*registry.Block]*hdfsCounts{},
	}
}

func (c *hdfsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.nameNodes
	ch <- c.dataNodes
}

func (c *hdfsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, n := range c.counts() {
		switch n.role {
		case hdfs.RoleNameNode:
			for _, st := range nameNodeStates {
				ch <- prometheus.MustNewConstMetric(c.nameNodes, prometheus.GaugeValue, float64(n.ha[st]), n.cluster, st)
			}
		case hdfs.RoleDataNode:
			for k, v := range n.racks {
				ch <- prometheus.MustNewConstMetric(c.dataNodes, prometheus.GaugeValue, float64(v), n.cluster, k[0], string(k[1]))
			}
		}
	}
}

// counts returns the counts of every HDFS application in the current
// snapshot, from the memo where a block is unchanged, and forgets the
// blocks no longer current.
func (c *hdfsCollector) counts() []*hdfsCounts {
	apps := c.reg.Snapshot().Blocks()
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[*registry.Block]*hdfsCounts, len(c.memo))
	var out []*hdfsCounts
	for _, a := range apps {
		role, cluster, ok := hdfs.ParseAppName(a.Name)
		if !ok || len(a.Blocks) == 0 {
			continue
		}
		sum := newHDFSCounts(role, cluster)
		for _, b := range a.Blocks {
			n, ok := c.memo[b]
			if !ok {
				n = countHDFS(role, cluster, b.All())
			}
			next[b] = n
			for k, v := range n.ha {
				sum.ha[k] += v
			}
			for k, v := range n.racks {
				sum.racks[k] += v
			}
		}
		out = append(out, sum)
	}
	c.memo = next
	return out
}

func newHDFSCounts(role hdfs.Role, cluster string) *hdfsCounts {
	n := &hdfsCounts{role: role, cluster: cluster}
	switch role {
	case hdfs.RoleNameNode:
		n.ha = map[string]int{}
	case hdfs.RoleDataNode:
		n.racks = map[[2]string]int{}
	}
	return n
}

// countHDFS counts instances, which it does not keep.
func countHDFS(role hdfs.Role, cluster string, instances iter.Seq[*heureka.Instance]) *hdfsCounts {
	n := newHDFSCounts(role, cluster)
	switch role {
	case hdfs.RoleNameNode:
		for in := range instances {
			if in.Status != heureka.StatusUp {
				continue
			}
			st := "unknown"
			if s, ok := hdfs.ParseHAState(in.Metadata.Get(hdfs.MetaHAState)); ok {
				switch s {
				case hdfs.HAActive, hdfs.HAStandby, hdfs.HAObserver:
					st = string(s)
				}
			}
			n.ha[st]++
		}
	case hdfs.RoleDataNode:
		for in := range instances {
			n.racks[[2]string{hdfs.NormalizeRack(in.Metadata.Get(hdfs.MetaRack)), string(in.Status)}]++
		}
	}
	return n
}

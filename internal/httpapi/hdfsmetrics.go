package httpapi

import (
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
// HA state and DataNodes by rack and status. An application's view in a
// snapshot is replaced only when one of its instances changed, so the
// counts are memoised per view: a scrape recounts only the applications
// that changed since the last one.
type hdfsCollector struct {
	reg       *registry.Registry
	nameNodes *prometheus.Desc
	dataNodes *prometheus.Desc

	mu   sync.Mutex
	memo map[*heureka.Application]*hdfsCounts
}

// hdfsCounts is one application view's counts; immutable once made.
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
		memo: map[*heureka.Application]*hdfsCounts{},
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
// snapshot, from the memo where the view is unchanged, and forgets the views
// no longer current.
func (c *hdfsCollector) counts() []*hdfsCounts {
	apps := c.reg.Snapshot().Apps().Apps
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[*heureka.Application]*hdfsCounts, len(c.memo))
	var out []*hdfsCounts
	for _, a := range apps {
		role, cluster, ok := hdfs.ParseAppName(a.Name)
		if !ok || len(a.Instances) == 0 {
			continue
		}
		n, ok := c.memo[a]
		if !ok {
			n = countHDFS(role, cluster, a.Instances)
		}
		next[a] = n
		out = append(out, n)
	}
	c.memo = next
	return out
}

func countHDFS(role hdfs.Role, cluster string, instances []*heureka.Instance) *hdfsCounts {
	n := &hdfsCounts{role: role, cluster: cluster}
	switch role {
	case hdfs.RoleNameNode:
		n.ha = map[string]int{}
		for _, in := range instances {
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
		n.racks = map[[2]string]int{}
		for _, in := range instances {
			n.racks[[2]string{hdfs.NormalizeRack(in.Metadata.Get(hdfs.MetaRack)), string(in.Status)}]++
		}
	}
	return n
}

package hdfsrole

import (
	"testing"

	"github.com/heureka-project/heureka/hdfs"
)

func TestMaterial(t *testing.T) {
	base := hdfs.NodeInfo{Rack: "/r", DiskUsed: 500, DiskTotal: 1000, BlockCount: 1000, Version: "3.3.6", Status: "NORMAL"}
	for _, c := range []struct {
		name string
		f    func(*hdfs.NodeInfo)
		want bool
	}{
		{"same", func(*hdfs.NodeInfo) {}, false},
		{"used +1% of capacity", func(n *hdfs.NodeInfo) { n.DiskUsed += 10 }, false},
		{"used +1.1% of capacity", func(n *hdfs.NodeInfo) { n.DiskUsed += 11 }, true},
		{"used -1.1% of capacity", func(n *hdfs.NodeInfo) { n.DiskUsed -= 11 }, true},
		{"capacity +1%", func(n *hdfs.NodeInfo) { n.DiskTotal += 10 }, false},
		{"capacity -5%", func(n *hdfs.NodeInfo) { n.DiskTotal -= 50 }, true},
		{"capacity unknown", func(n *hdfs.NodeInfo) { n.DiskTotal = 0 }, true},
		{"blocks +1%", func(n *hdfs.NodeInfo) { n.BlockCount += 10 }, false},
		{"blocks +2%", func(n *hdfs.NodeInfo) { n.BlockCount += 20 }, true},
		{"blocks unknown", func(n *hdfs.NodeInfo) { n.BlockCount = 0 }, true},
		{"version", func(n *hdfs.NodeInfo) { n.Version = "3.4.0" }, true},
		{"admin state", func(n *hdfs.NodeInfo) { n.Status = "DECOMMISSION_INPROGRESS" }, true},
		{"ha state", func(n *hdfs.NodeInfo) { n.HAState = hdfs.HAActive }, true},
		{"ha time", func(n *hdfs.NodeInfo) { n.HATransitionTime = 5 }, true},
		{"rack", func(n *hdfs.NodeInfo) { n.Rack = "/s" }, true},
		{"port", func(n *hdfs.NodeInfo) { n.DataPort = 1 }, true},
	} {
		n := base
		c.f(&n)
		if got := material(base, n, 0.01, 0.01); got != c.want {
			t.Errorf("%s: material = %v, want %v", c.name, got, c.want)
		}
	}
	if !material(base, hdfs.NodeInfo{Rack: "/r", DiskUsed: 501, DiskTotal: 1000, BlockCount: 1000, Version: "3.3.6", Status: "NORMAL"}, 0, 0) {
		t.Error("with zero thresholds every change is material")
	}
	unknownCap := hdfs.NodeInfo{DiskUsed: 1000}
	if material(unknownCap, hdfs.NodeInfo{DiskUsed: 1005}, 0.01, 0.01) || !material(unknownCap, hdfs.NodeInfo{DiskUsed: 1020}, 0.01, 0.01) {
		t.Error("capacity unknown: use is compared with itself")
	}
}

package hdfs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/registry/registrytest"
)

// BenchmarkChooseDataNodes100k is one choice of three among 100k
// DataNodes listed in ID order, as the server's /v1/hdfs/pick makes it:
//
//	go test ./hdfs -run '^$' -bench ChooseDataNodes -benchmem -count 5
func BenchmarkChooseDataNodes100k(b *testing.B) {
	nodes := make([]*heureka.Instance, 100000)
	for i := range nodes {
		nodes[i] = registrytest.DataNode(i)
	}
	slices.SortFunc(nodes, func(a, b *heureka.Instance) int { return strings.Compare(a.ID, b.ID) })
	app := &heureka.Application{Name: registrytest.DataNodeApp, Instances: nodes}
	b.ReportAllocs()
	for b.Loop() {
		pl, err := hdfs.ChooseDataNodes(app.Instances, hdfs.PlacementRequest{Replicas: 3})
		if err != nil || len(pl.Nodes) != 3 {
			b.Fatal(pl, err)
		}
	}
}

// BenchmarkDataNodeSetChoose100k is the same choice from a prepared set,
// as the server makes it while the application is unchanged.
func BenchmarkDataNodeSetChoose100k(b *testing.B) {
	nodes := make([]*heureka.Instance, 100000)
	for i := range nodes {
		nodes[i] = registrytest.DataNode(i)
	}
	slices.SortFunc(nodes, func(a, b *heureka.Instance) int { return strings.Compare(a.ID, b.ID) })
	set := hdfs.NewDataNodeSet(nodes, nil)
	b.ReportAllocs()
	for b.Loop() {
		pl, err := set.Choose(hdfs.PlacementRequest{Replicas: 3})
		if err != nil || len(pl.Nodes) != 3 {
			b.Fatal(pl, err)
		}
	}
}

package hdfs_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/hdfs"
)

// A long-lived writer keeps a client.Cache of the cluster's DataNodes
// (watching a heureka registry, polling any other Eureka server) and a
// Picker over it. Each block asks the Picker; a write that fails is
// reported, and the next choices avoid that node until the registry has
// caught up. Here a stand-in Eureka server lists three DataNodes.
func ExamplePicker() {
	// A cache limited to one application reads GET /eureka/apps/{APP}.
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/eureka/apps/HDFS-DATANODE.PROD" {
			http.NotFound(w, r)
			return
		}
		app := &heureka.Application{Name: "HDFS-DATANODE.PROD", Instances: []*heureka.Instance{
			exampleDataNode("dn1", "/r1"), exampleDataNode("dn2", "/r2"), exampleDataNode("dn3", "/r2"),
		}}
		w.Header().Set("Content-Type", "application/json")
		w.Write(eureka.EncodeApplication(eureka.JSON, app))
	}))
	defer registry.Close()

	ccfg := client.DefaultConfig()
	ccfg.URLs = []string{registry.URL + "/eureka"}
	c, err := client.New(ccfg)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	app := hdfs.AppName(hdfs.RoleDataNode, "prod")
	cacheCfg := client.DefaultCacheConfig()
	cacheCfg.Apps = []string{app}
	cache, err := client.NewCache(c, cacheCfg)
	if err != nil {
		panic(err)
	}
	if err := cache.Start(context.Background()); err != nil {
		panic(err)
	}
	defer cache.Close(context.Background())
	<-cache.Synced()

	picker := &hdfs.Picker{
		DataNodes: func() []*heureka.Instance { return cache.Instances(app) },
		// Probe: hdfs.DialProbe(time.Second) would also dial each node first.
	}
	req := hdfs.PlacementRequest{Replicas: 2, Rand: rand.New(rand.NewPCG(1, 2))}
	pl, err := picker.Choose(context.Background(), req)
	if err != nil {
		panic(err)
	}
	fmt.Println("chosen:", len(pl.Nodes), "on", pl.Racks, "racks")

	// The write pipeline broke at the first node: report it.
	failed := pl.Nodes[0]
	picker.Report(failed.ID, errors.New("connection reset during the write"))

	for range 10 {
		pl, _ = picker.Choose(context.Background(), req)
		for _, in := range pl.Nodes {
			if in.ID == failed.ID {
				fmt.Println("chose the failed node again")
			}
		}
	}
	fmt.Println("after the report:", len(pl.Nodes), "chosen, the failed node avoided")
	// Output:
	// chosen: 2 on 2 racks
	// after the report: 2 chosen, the failed node avoided
}

func exampleDataNode(host, rack string) *heureka.Instance {
	return &heureka.Instance{
		ID: hdfs.InstanceID("prod", host, rack), App: "HDFS-DATANODE.PROD", HostName: host + ".example.com",
		IPAddr: "10.0.0." + strings.TrimPrefix(host, "dn"), Status: heureka.StatusUp,
		Port:       heureka.Port{Number: 9866, Enabled: true},
		DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Metadata:   hdfs.NodeInfo{Rack: rack, DiskTotal: 4 << 40, DiskUsed: 1 << 40, DataPort: 9866}.WriteMetadata(heureka.Metadata{}),
	}
}

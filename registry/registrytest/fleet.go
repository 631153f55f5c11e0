// Package registrytest builds registrations for the tests and benchmarks of
// the registry and of the servers around it: fleets of DataNodes shaped as
// heureka's agent registers them.
package registrytest

import (
	"fmt"

	"github.com/heureka-project/heureka"
)

// DataNodeApp is the application every DataNode of DataNode belongs to.
const DataNodeApp = "HDFS-DATANODE.PROD"

// Racks is how many racks the DataNodes of DataNode are spread over.
const Racks = 40

// DataNode returns the i-th DataNode of a production fleet: the Eureka
// fields the agent fills, and 20 metadata entries (the agent's rack, disk,
// block, version, state and port keys, and the usual extras an operator
// adds), about 1 KiB as JSON. It is normalised; every string is built
// afresh, as a decoder would.
func DataNode(i int) *heureka.Instance {
	host := fmt.Sprintf("dn%06d.prod.example.com", i)
	rack := fmt.Sprintf("/dc1/rack%02d", i%Racks)
	in := &heureka.Instance{
		ID:  fmt.Sprintf("prod-%s-rack%02d", host, i%Racks),
		App: DataNodeApp, HostName: host,
		IPAddr: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
		Status: heureka.StatusUp, Port: heureka.Port{Number: 9866, Enabled: true},
		SecurePort: heureka.Port{Number: 9865},
		VIPAddress: "hdfs-datanode.prod", SecureVIPAddress: "hdfs-datanode.prod",
		HomePageURL: "http://" + host + ":9864/", StatusPageURL: "http://" + host + ":9864/jmx",
		HealthCheckURL: "http://" + host + ":9864/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo",
		Lease:          heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
		Metadata: heureka.MetadataOf(map[string]string{
			"rack":              rack,
			"disk_used":         fmt.Sprint(123456789012 + i*7919),
			"disk_total":        "480000000000000",
			"disk_remaining":    fmt.Sprint(479876543210988 - i*7919),
			"block_count":       fmt.Sprint(1234567 + i%1000),
			"version":           "3.3.6",
			"status":            "NORMAL",
			"data_port":         "9866",
			"rpc_port":          "9867",
			"http_port":         "9864",
			"cluster":           "prod",
			"role":              "datanode",
			"volumes":           "12",
			"volumes_failed":    "0",
			"xceivers":          fmt.Sprint(i % 64),
			"cache_used":        "0",
			"cache_capacity":    "0",
			"start_time":        fmt.Sprint(1764000000000 + int64(i)),
			"software_revision": "2b1f8c1e5f0b6a29c5f3a6a1b7e4d9c0aa1c2b3d",
			"agent_version":     "heureka-0.9.0",
		}),
	}
	in.Normalize()
	return in
}

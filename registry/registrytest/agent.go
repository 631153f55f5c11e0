package registrytest

import (
	"fmt"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

// Shape is what differs between the synthetic fleets of the load
// generators: where the hosts live and how their leases are set.
type Shape struct {
	Domain    string        // host names are dn<i>.<cluster>.<Domain>
	Loopback  bool          // addresses in 127.1.0.0/8 instead of 10.0.0.0/8
	Renew     time.Duration // the lease's renewal interval
	Lease     time.Duration // the lease's duration
	LastDirty int64         // LastDirtyTimestamp, in Unix milliseconds
}

// AgentDataNode returns the i-th DataNode of app (HDFS-DATANODE.<cluster>)
// exactly as heureka's agent registers one: the metadata is written by
// hdfs.NodeInfo, the ID by hdfs.InstanceID, about 1 KiB as Eureka JSON.
func AgentDataNode(app string, i int, s Shape) *heureka.Instance {
	cluster := strings.ToLower(strings.TrimPrefix(app, "HDFS-DATANODE."))
	rack := fmt.Sprintf("/dc1/rack-%02d", i%Racks)
	host := fmt.Sprintf("dn%07d.%s.%s", i, cluster, s.Domain)
	ip := fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
	if s.Loopback {
		ip = fmt.Sprintf("127.%d.%d.%d", 1+i>>16&0xff, i>>8&0xff, i&0xff)
	}
	used := int64(4<<40) / 3
	info := hdfs.NodeInfo{
		Rack: rack, Version: "3.3.6",
		DiskTotal: 4 << 40, DiskUsed: used + int64(i)<<20, BlockCount: used / (128 << 20),
		Status: string(hdfs.AdminNormal), DataPort: 9866, RPCPort: 9867,
	}
	return &heureka.Instance{
		ID:         hdfs.InstanceID(cluster, host, rack),
		App:        app,
		HostName:   host,
		IPAddr:     ip,
		Status:     heureka.StatusUp,
		Port:       heureka.Port{Number: 9866, Enabled: true},
		SecurePort: heureka.Port{Number: 443},
		VIPAddress: strings.ToLower(app),
		DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Lease: heureka.LeaseInfo{
			RenewalIntervalSecs: int(s.Renew / time.Second),
			DurationSecs:        int(s.Lease / time.Second),
		},
		Metadata:           info.WriteMetadata(heureka.Metadata{}),
		StatusPageURL:      "http://" + host + ":9864/jmx",
		HomePageURL:        "http://" + host + ":9864/",
		HealthCheckURL:     "http://" + host + ":9864/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo",
		LastDirtyTimestamp: s.LastDirty,
	}
}

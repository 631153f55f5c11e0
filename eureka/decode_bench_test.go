package eureka

import (
	"fmt"
	"testing"

	"github.com/heureka-project/heureka"
)

// dataNodeInstance is a registration as heureka's HDFS agent sends it for a
// DataNode: about 1 KiB of JSON with 20 metadata entries.
func dataNodeInstance() *heureka.Instance {
	md := map[string]string{
		"rack": "/dc1/rack07", "disk_used": "8123456789012", "disk_total": "12000138625024",
		"block_count": "412345", "version": "3.3.6", "status": "NORMAL", "data_port": "9866",
		"rpc_port": "9867", "management.port": "9864", "http_port": "9864", "https_port": "9865",
		"xceivers": "42", "volumes": "12", "volumes_failed": "0", "cache_used": "0",
		"cache_capacity": "0", "cluster_id": "CID-3f1c2b7a-9d4e-4c1a-8b2e-5f6a7b8c9d0e",
		"nameservice": "prod", "software_revision": "1be78238728da9266a4f88195058f08fd012bf9c",
		"started": "1717171000000",
	}
	return &heureka.Instance{
		ID: "dn0042.rack07.prod.example.com:hdfs-datanode:9866", App: "HDFS-DATANODE.PROD",
		HostName: "dn0042.rack07.prod.example.com", IPAddr: "10.7.0.42",
		Status: heureka.StatusUp, OverriddenStatus: heureka.StatusUnknown,
		Port: heureka.Port{Number: 9866, Enabled: true}, SecurePort: heureka.Port{Number: 9865},
		CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Lease:          heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
		Metadata:       heureka.MetadataOf(md),
		HealthCheckURL: "http://dn0042.rack07.prod.example.com:9864/jmx?qry=Hadoop:service=DataNode,name=FSDatasetState",
		StatusPageURL:  "http://dn0042.rack07.prod.example.com:9864/",
		VIPAddress:     "hdfs-datanode.prod", SecureVIPAddress: "hdfs-datanode.prod",
		LastUpdatedTimestamp: 1717171030000, LastDirtyTimestamp: 1717171029000,
	}
}

// BenchmarkDecodeInstance decodes a DataNode registration in each format, as
// the registration handler does.
func BenchmarkDecodeInstance(b *testing.B) {
	for _, f := range []Format{JSON, XML} {
		body := EncodeInstance(f, dataNodeInstance())
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := DecodeInstance(body, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeReplicationList decodes a peer batch of 100 registrations
// of DataNodes.
func BenchmarkDecodeReplicationList(b *testing.B) {
	body := replicationBatchBody()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, errs, err := DecodeReplicationList(body); err != nil || errs[0] != nil {
			b.Fatal(err, errs[0])
		}
	}
}

// replicationBatchBody is a peer batch of 100 DataNode registrations.
func replicationBatchBody() []byte {
	items := make([]ReplicationItem, 100)
	for i := range items {
		in := dataNodeInstance()
		in.HostName = fmt.Sprintf("dn%04d.rack07.prod.example.com", i)
		in.ID = in.HostName + ":hdfs-datanode:9866"
		items[i] = ReplicationItem{AppName: in.App, ID: in.ID, LastDirtyTimestamp: in.LastDirtyTimestamp,
			Status: in.Status, Instance: in, Action: "Register"}
	}
	return EncodeReplicationList(items)
}

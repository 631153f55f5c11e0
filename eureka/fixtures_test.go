package eureka

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/heureka-project/heureka"
)

// Test registry: one Amazon instance, one MyOwn instance whose metadata has
// an underscore key, a '$' key, markup in a value and a key XML cannot carry,
// one Netflix instance with empty metadata, one with a status override; four
// different statuses. All normalised, as the registry stores them.

func amazonInstance() *heureka.Instance {
	return &heureka.Instance{
		ID: "i-0abc123", App: "ORDERS", AppGroupName: "COMMERCE",
		HostName: "ec2-3-4-5-6.compute-1.amazonaws.com", IPAddr: "10.0.0.5",
		Status: heureka.StatusUp, OverriddenStatus: heureka.StatusUnknown,
		Port: heureka.Port{Number: 8080, Enabled: true}, SecurePort: heureka.Port{Number: 443},
		CountryID: 1,
		DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterAmazon, Metadata: heureka.MetadataOf(map[string]string{
			"instance-id": "i-0abc123", "availability-zone": "us-east-1a", "local-ipv4": "10.0.0.5",
			"public-hostname": "ec2-3-4-5-6.compute-1.amazonaws.com", "ami-id": "ami-1", "instance-type": "m5.large",
		})},
		Lease: heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90,
			RegistrationTimestamp: 1717171717123, LastRenewalTimestamp: 1717171837123, ServiceUpTimestamp: 1717171717200},
		Metadata:      heureka.MetadataOf(map[string]string{"zone": "us-east-1a"}),
		HomePageURL:   "http://10.0.0.5:8080/",
		StatusPageURL: "http://10.0.0.5:8080/actuator/info", HealthCheckURL: "http://10.0.0.5:8080/actuator/health",
		VIPAddress: "orders", SecureVIPAddress: "orders", ASGName: "orders-v042",
		LastUpdatedTimestamp: 1717171717123, LastDirtyTimestamp: 1717171717000, ActionType: heureka.ActionAdded,
	}
}

func myOwnInstance() *heureka.Instance {
	return &heureka.Instance{
		ID: "dn1.rack1:hdfs-datanode:9866", App: "HDFS-DATANODE.PROD", HostName: "dn1.rack1", IPAddr: "10.1.0.11", SID: "s-17",
		Status: heureka.StatusOutOfService, OverriddenStatus: heureka.StatusOutOfService,
		Port: heureka.Port{Number: 9866, Enabled: true}, SecurePort: heureka.Port{Number: 9865},
		CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Lease: heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30,
			RegistrationTimestamp: 1717171000000, LastRenewalTimestamp: 1717171030000, EvictionTimestamp: 0, ServiceUpTimestamp: 1717171000100},
		Metadata: heureka.MetadataOf(map[string]string{
			"disk_used": "0.42", "rack": "/dc1/rack1", "price$usd": "3", "management.port": "9864",
			"note": `a<b & "c" 'd' > e`, "not an xml name": "JSON only",
		}),
		HealthCheckURL:       "http://dn1.rack1:9864/jmx?qry=Hadoop:service=DataNode,name=FSDatasetState",
		VIPAddress:           "hdfs-datanode.prod",
		LastUpdatedTimestamp: 1717171030000, LastDirtyTimestamp: 1717171029000, ActionType: heureka.ActionModified,
	}
}

func emptyMetadataInstance() *heureka.Instance {
	return &heureka.Instance{
		ID: "10.1.0.12:hdfs-datanode:9866", App: "HDFS-DATANODE.PROD", HostName: "10.1.0.12", IPAddr: "10.1.0.12",
		Status: heureka.StatusDown, OverriddenStatus: heureka.StatusUnknown,
		Port: heureka.Port{Number: 9866, Enabled: true}, SecurePort: heureka.Port{Number: 8443, Enabled: true},
		CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterNetflix},
		Lease:                         heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90, RegistrationTimestamp: 1717170000000, LastRenewalTimestamp: 1717170090000, EvictionTimestamp: 1717170100000},
		Metadata:                      heureka.Metadata{},
		IsCoordinatingDiscoveryServer: true,
		LastUpdatedTimestamp:          1717170000000, LastDirtyTimestamp: 1717170000000, ActionType: heureka.ActionDeleted,
	}
}

func startingInstance() *heureka.Instance {
	return &heureka.Instance{
		ID: "10.0.0.7:orders:8080", App: "ORDERS", HostName: "10.0.0.7", IPAddr: "10.0.0.7",
		Status: heureka.StatusStarting, OverriddenStatus: heureka.StatusUnknown,
		Port: heureka.Port{Number: 8080, Enabled: true}, SecurePort: heureka.Port{Number: 7002},
		CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Lease:      heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90, RegistrationTimestamp: 1717171800000, LastRenewalTimestamp: 1717171800000},
		Metadata:   heureka.MetadataOf(map[string]string{"management.port": "8081", "version": "2.4.1"}),
		VIPAddress: "orders", LastUpdatedTimestamp: 1717171800000, LastDirtyTimestamp: 1717171799000,
	}
}

func testApplications() *heureka.Applications {
	apps := []*heureka.Application{
		{Name: "ORDERS", Instances: []*heureka.Instance{amazonInstance(), startingInstance()}},
		{Name: "HDFS-DATANODE.PROD", Instances: []*heureka.Instance{myOwnInstance(), emptyMetadataInstance()}},
	}
	return &heureka.Applications{VersionDelta: 1, HashCode: heureka.ReconcileHashCode(apps), Apps: apps}
}

func allTestInstances() []*heureka.Instance {
	return []*heureka.Instance{amazonInstance(), myOwnInstance(), emptyMetadataInstance(), startingInstance()}
}

// withoutLeaseTimes is what a registration decode of in gives: the registry,
// not the registrant, owns lease timestamps.
func withoutLeaseTimes(in *heureka.Instance) *heureka.Instance {
	c := in.Clone()
	c.Lease = heureka.LeaseInfo{RenewalIntervalSecs: in.Lease.RenewalIntervalSecs, DurationSecs: in.Lease.DurationSecs}
	return c
}

// withoutNonXMLKeys is in as XML can carry it.
func withoutNonXMLKeys(in *heureka.Instance) *heureka.Instance {
	c := in.Clone()
	var bad []string
	for k := range c.Metadata.Keys() {
		if !ValidXMLMetadataKey(k) {
			bad = append(bad, k)
		}
	}
	c.Metadata = c.Metadata.Without(bad...)
	return c
}

// canon is in as a value, to compare. (Empty metadata has one form, the
// zero value, so nothing needs making equal.)
func canon(in *heureka.Instance) heureka.Instance { return *in }

func sameInstance(a, b *heureka.Instance) bool {
	if a == nil || b == nil {
		return a == b
	}
	return reflect.DeepEqual(canon(a), canon(b))
}

func assertSameInstance(t *testing.T, got, want *heureka.Instance) {
	t.Helper()
	if !sameInstance(got, want) {
		t.Errorf("instances differ\n got: %s\nwant: %s", dump(got), dump(want))
	}
}

func dump(in *heureka.Instance) string {
	if in == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%+v", canon(in))
}

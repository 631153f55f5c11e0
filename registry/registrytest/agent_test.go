package registrytest_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/registry/registrytest"
)

func TestAgentDataNodeIsWhatTheAgentRegisters(t *testing.T) {
	s := registrytest.Shape{Domain: "bench.invalid", Loopback: true, Renew: 10 * time.Second, Lease: 30 * time.Second, LastDirty: 42}
	in := registrytest.AgentDataNode("HDFS-DATANODE.C007", 70_000, s)
	if err := in.Validate(heureka.DefaultLimits()); err != nil {
		t.Fatalf("invalid instance: %v", err)
	}
	info, err := hdfs.ReadNodeInfo(in.Metadata)
	if err != nil {
		t.Fatalf("metadata the agent's reader refuses: %v", err)
	}
	if want := hdfs.InstanceID("c007", in.HostName, info.Rack); in.ID != want {
		t.Errorf("ID %q, want %q", in.ID, want)
	}
	if ip := netip.MustParseAddr(in.IPAddr); !ip.IsLoopback() {
		t.Errorf("Loopback shape gave address %s", ip)
	}
	if in.Lease.RenewalIntervalSecs != 10 || in.Lease.DurationSecs != 30 || in.LastDirtyTimestamp != 42 {
		t.Errorf("lease %+v, last dirty %d: not the shape's", in.Lease, in.LastDirtyTimestamp)
	}
	if n := len(eureka.EncodeInstance(eureka.JSON, in)); n < 700 || n > 1500 {
		t.Errorf("%d bytes of JSON, want about 1 KiB", n)
	}
	other := registrytest.AgentDataNode("HDFS-DATANODE.C007", 70_001, registrytest.Shape{Domain: "soak.invalid"})
	if other.ID == in.ID || other.IPAddr == in.IPAddr || netip.MustParseAddr(other.IPAddr).IsLoopback() {
		t.Errorf("neighbours %s %s and %s %s: want distinct, the second in 10/8", in.ID, in.IPAddr, other.ID, other.IPAddr)
	}
}

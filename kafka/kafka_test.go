package kafka

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const clusterID = "heureka-kfake-1"

func startCluster(t *testing.T, n int) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(n), kfake.ClusterID(clusterID), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func probe(t *testing.T, addr string, self Self, want string, timeout time.Duration) (Report, error) {
	t.Helper()
	cl, err := NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return Probe(ctx, cl, self, want)
}

// TestProbeKfake probes each broker of a real Kafka-protocol
// implementation (franz-go's kfake), finding each by the address it was
// reached on, then by node id.
func TestProbeKfake(t *testing.T) {
	c := startCluster(t, 3)
	addrs := c.ListenAddrs()
	seen := map[int32]bool{}
	controllers := 0
	for _, addr := range addrs {
		r, err := probe(t, addr, Self{NodeID: -1, Addr: addr}, clusterID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Listed || r.Addr() != addr || r.ClusterID != clusterID || r.Brokers != 3 {
			t.Errorf("%s: %+v", addr, r)
		}
		// kfake gives every broker the rack "krack"; it cannot set one a broker.
		if r.Rack != "krack" {
			t.Errorf("%s: rack %q", addr, r.Rack)
		}
		if ok, cause := r.Health(); !ok {
			t.Errorf("%s: unhealthy: %s", addr, cause)
		}
		if r.RoleState() == RoleController {
			controllers++
		}
		seen[r.NodeID] = true
		byID, err := probe(t, addr, Self{NodeID: r.NodeID, Addr: addr}, "", 10*time.Second)
		if err != nil || byID.Broker != r.Broker {
			t.Errorf("by node id %d: %+v, %v", r.NodeID, byID, err)
		}
	}
	if len(seen) != 3 {
		t.Errorf("node ids %v", seen)
	}
	// kfake finalizes metadata.version, as a KRaft cluster does, so no
	// broker is called the controller (see the package doc).
	if controllers != 0 {
		t.Errorf("%d brokers called controller of a KRaft cluster", controllers)
	}
}

func TestProbeRefusals(t *testing.T) {
	c := startCluster(t, 2)
	addr := c.ListenAddrs()[0]

	_, err := probe(t, addr, Self{NodeID: -1, Addr: addr}, "another-cluster", 10*time.Second)
	if heureka.ErrorCode(err) != heureka.ECONFLICT || !strings.Contains(err.Error(), `belongs to cluster "heureka-kfake-1"`) || !strings.Contains(err.Error(), addr) {
		t.Errorf("another cluster: %v", err)
	}
	_, err = probe(t, addr, Self{NodeID: -1, Addr: "broker9.example.net:9092"}, "", 10*time.Second)
	if heureka.ErrorCode(err) != heureka.EINVALID || !strings.Contains(err.Error(), "no broker advertises broker9.example.net:9092") {
		t.Errorf("unknown address: %v", err)
	}
	r, err := probe(t, addr, Self{NodeID: 42, Addr: addr}, "", 10*time.Second)
	if ok, cause := r.Health(); err != nil || ok || !strings.Contains(cause, "broker 42 is not in its cluster's metadata") {
		t.Errorf("unlisted node id: %+v %v, %v %q", r, err, ok, cause)
	}

	// A removed broker stops listening: the probe says it cannot reach it.
	id, _ := probe(t, addr, Self{NodeID: -1, Addr: addr}, "", 10*time.Second)
	if err := c.RemoveNode(id.NodeID); err != nil {
		t.Fatal(err)
	}
	_, err = probe(t, addr, Self{NodeID: -1, Addr: addr}, "", 2*time.Second)
	if heureka.ErrorCode(err) != heureka.EUNAVAILABLE || !strings.Contains(err.Error(), addr) {
		t.Errorf("removed broker: %v", err)
	}
}

// TestProbeBadPeers probes listeners that are not brokers: one that never
// answers (a paused broker looks the same) and one that answers garbage.
func TestProbeBadPeers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(net.Conn)
	}{
		{"silent", func(c net.Conn) {
			buf := make([]byte, 1024)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
			}
		}},
		{"garbage", func(c net.Conn) {
			buf := make([]byte, 1024)
			c.Read(buf)
			c.Write([]byte("\x00\x00\x00\x08HTTP/1.1 400"))
			c.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() { defer c.Close(); tc.serve(c) }()
				}
			}()
			addr := ln.Addr().String()
			_, err = probe(t, addr, Self{NodeID: -1, Addr: addr}, "", 500*time.Millisecond)
			if heureka.ErrorCode(err) != heureka.EUNAVAILABLE || !strings.Contains(err.Error(), "kafka broker "+addr+": ApiVersions") {
				t.Errorf("%v", err)
			}
		})
	}
}

// TestClientBootstrapsFromReports bootstraps a real Kafka client (kgo)
// from the advertised addresses the reports give, as a registry would
// hand them out, and produces and consumes through it.
func TestClientBootstrapsFromReports(t *testing.T) {
	c := startCluster(t, 3)
	var seeds []string
	for _, addr := range c.ListenAddrs() {
		r, err := probe(t, addr, Self{NodeID: -1, Addr: addr}, clusterID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, r.Addr())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 20
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("%s/%d: %v", topic, p, err) })
		got += fs.NumRecords()
	}
}

// TestRecordedAnswers decodes ApiVersions and Metadata response bodies
// recorded from kfake (see testdata/kfake/README.md). HEUREKA_RECORD=1
// records them again.
func TestRecordedAnswers(t *testing.T) {
	if os.Getenv("HEUREKA_RECORD") == "1" {
		record(t)
	}
	av, err := ParseApiVersions(3, readFile(t, "kfake/apiversions-v3.bin"))
	if err != nil || !av.KRaft || av.Keys < 20 {
		t.Fatalf("ApiVersions: %+v, %v", av, err)
	}
	md, err := ParseMetadata(12, readFile(t, "kfake/metadata-v12.bin"))
	if err != nil || md.ClusterID != clusterID || len(md.Brokers) != 3 || md.Brokers[0].Rack != "krack" || md.ControllerID != 2 {
		t.Fatalf("Metadata: %+v, %v", md, err)
	}
	// Recorded on ports that are gone; find broker 1 by node id.
	r, err := NewReport(av, md, Self{NodeID: 1}, clusterID)
	if err != nil || !r.Listed || r.NodeID != 1 || r.ControllerID != NoNode || r.RoleState() != RoleBroker {
		t.Fatalf("report: %+v, %v", r, err)
	}
	// The same Metadata from a cluster without KRaft names a controller.
	zk := APIVersions{Keys: av.Keys}
	r, _ = NewReport(zk, md, Self{NodeID: 2}, "")
	if r.RoleState() != RoleController || r.ControllerID != 2 {
		t.Errorf("ZooKeeper-mode controller: %+v", r)
	}
	md.ControllerID = NoNode
	r, _ = NewReport(zk, md, Self{NodeID: 2}, "")
	if ok, cause := r.Health(); ok || cause != "kafka broker knows no controller" {
		t.Errorf("no controller: %v %q", ok, cause)
	}
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// record asks a three-broker kfake cluster ApiVersions v3 and Metadata
// v12 and saves the response bodies as kmsg encodes what kgo decoded.
func record(t *testing.T) {
	c := startCluster(t, 3)
	cl, err := NewClient(c.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seed := cl.SeedBrokers()[0]
	areq := apiVersionsRequest()
	areq.Version = 3
	ar, err := seed.Request(ctx, areq)
	if err != nil {
		t.Fatal(err)
	}
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	mreq.Topics = []kmsg.MetadataRequestTopic{}
	mr, err := seed.Request(ctx, mreq)
	if err != nil {
		t.Fatal(err)
	}
	for name, resp := range map[string]kmsg.Response{"apiversions-v3.bin": ar, "metadata-v12.bin": mr} {
		if err := os.WriteFile("testdata/kfake/"+name, resp.AppendTo(nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

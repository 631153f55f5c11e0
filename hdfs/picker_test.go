package hdfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// liveDataNode is a registered DataNode whose data port is a real
// listener on loopback (or a closed one, when dead).
func liveDataNode(t *testing.T, id, rack string, dead bool) *heureka.Instance {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if dead {
		ln.Close()
	} else {
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	in := &heureka.Instance{ID: id, App: "HDFS-DATANODE.PROD", HostName: id, IPAddr: "127.0.0.1",
		Status: heureka.StatusUp, Metadata: heureka.MetadataOf(map[string]string{
			MetaRack: rack, MetaDataPort: strconv.Itoa(port), MetaDiskUsed: "10", MetaDiskTotal: "100"})}
	in.Normalize()
	return in
}

func TestPickerProbesAndPenalises(t *testing.T) {
	nodes := []*heureka.Instance{
		liveDataNode(t, "a1", "/a", false), liveDataNode(t, "a2", "/a", true),
		liveDataNode(t, "b1", "/b", false), liveDataNode(t, "b2", "/b", true),
		liveDataNode(t, "c1", "/c", false), liveDataNode(t, "c2", "/c", false),
	}
	p := &Picker{DataNodes: func() []*heureka.Instance { return nodes }, Probe: DialProbe(time.Second)}
	for i := range 20 {
		pl, err := p.Choose(context.Background(), PlacementRequest{Replicas: 3, Rand: rand.New(rand.NewPCG(uint64(i), 1))})
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		for _, in := range pl.Nodes {
			if in.ID == "a2" || in.ID == "b2" {
				t.Fatalf("round %d: handed out %s, whose data port is closed", i, in.ID)
			}
		}
		if len(pl.Nodes) != 3 {
			t.Fatalf("round %d: %d nodes, want 3", i, len(pl.Nodes))
		}
	}
	// The dead nodes that were probed are on the penalty list.
	for id, cause := range p.Penalties.Active(time.Now()) {
		if id != "a2" && id != "b2" || !strings.Contains(cause, "probe failed") {
			t.Errorf("penalty %s: %s", id, cause)
		}
	}

	// A caller's report keeps a node out too.
	p.Report("c1", errors.New("pipeline broke"))
	for i := range 10 {
		pl, _ := p.Choose(context.Background(), PlacementRequest{Replicas: 3, Rand: rand.New(rand.NewPCG(uint64(i), 2))})
		for _, in := range pl.Nodes {
			if in.ID == "c1" {
				t.Fatal("handed out c1 right after the caller reported it failed")
			}
		}
	}
}

func TestPickerSaysSoWhenNothingAnswers(t *testing.T) {
	var nodes []*heureka.Instance
	for i := range 4 {
		nodes = append(nodes, liveDataNode(t, fmt.Sprint("d", i), fmt.Sprint("/r", i%2), true))
	}
	p := &Picker{DataNodes: func() []*heureka.Instance { return nodes }, Probe: DialProbe(200 * time.Millisecond)}
	_, err := p.Choose(context.Background(), PlacementRequest{Replicas: 3})
	if heureka.ErrorCode(err) != heureka.EUNAVAILABLE {
		t.Fatalf("error %v, want EUNAVAILABLE", err)
	}
}

func TestPickerReportsNameNodeConflicts(t *testing.T) {
	nn := func(id, state string, at int64) *heureka.Instance {
		in := &heureka.Instance{ID: id, App: "HDFS-NAMENODE.PROD", HostName: id, IPAddr: "127.0.0.1", Status: heureka.StatusUp,
			Metadata: heureka.MetadataOf(map[string]string{MetaHAState: state, MetaHATransitionTime: strconv.FormatInt(at, 10), MetaRPCPort: "8020"})}
		in.Normalize()
		return in
	}
	var seen []Resolution
	p := &Picker{
		NameNodes: func() []*heureka.Instance {
			return []*heureka.Instance{nn("nn1", "active", 100), nn("nn2", "active", 200)}
		},
		OnConflict: func(r Resolution) { seen = append(seen, r) },
	}
	res, err := p.ResolveNameNodes()
	if err != nil {
		t.Fatal(err)
	}
	if res.Active == nil || res.Active.ID != "nn2" || len(seen) != 1 || seen[0].Conflict == "" {
		t.Fatalf("active %v, conflicts %v: want nn2 (latest transition) and one conflict reported", res.Active, seen)
	}
}

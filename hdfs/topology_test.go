package hdfs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

func topologyNodes() []*heureka.Instance {
	a := dn("a1", "/dc1/rack-a", 0, 0)
	a.HostName, a.IPAddr = "a1.example.net", "10.0.1.1"
	b := dn("b1", "dc1/rack-b/", 0, 0) // not normalised
	b.HostName, b.IPAddr = "B1.Example.NET", "10.0.2.1"
	n := nn("nn1", "active", 0, 8020)
	n.HostName, n.IPAddr = "nn1.example.net", "10.0.9.1"
	n.Metadata = n.Metadata.With(MetaRack, "/dc1/rack-n")
	v6 := dn("v6", "/dc2/rack-x", 0, 0)
	v6.HostName, v6.IPAddr = "v6.example.net", "fd00::17"
	noRack := dn("z1", "", 0, 0)
	noRack.HostName, noRack.IPAddr = "z1.example.net", "10.0.3.1"
	badRack := dn("y1", "/rack with spaces", 0, 0)
	badRack.HostName, badRack.IPAddr = "y1.example.net", "10.0.4.1"
	// An old registration of the same host on another rack, DOWN: the UP
	// one wins.
	old := with(a, func(i *heureka.Instance) {
		i.ID = "a1-old"
		i.Status = heureka.StatusDown
		i.Metadata = i.Metadata.With(MetaRack, "/dc0/old")
		i.LastUpdatedTimestamp = 1 << 40
	})
	// A DOWN DataNode still has its rack.
	dead := dn("d1", "/dc1/rack-d", 0, 0)
	dead.HostName, dead.IPAddr, dead.Status = "d1.example.net", "10.0.5.1", heureka.StatusDown
	return []*heureka.Instance{old, a, b, n, v6, noRack, badRack, dead, nil}
}

func topology(t *testing.T, args []string, nodes []*heureka.Instance) []string {
	t.Helper()
	var b strings.Builder
	if err := TopologyLookup(&b, args, nodes); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if len(args) > 0 && !strings.HasSuffix(out, "\n") {
		t.Fatalf("output %q does not end in a newline", out)
	}
	// Hadoop splits on any whitespace.
	return strings.Fields(out)
}

func TestTopologyLookup(t *testing.T) {
	nodes := topologyNodes()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no arguments", nil, nil},
		{"ip", []string{"10.0.1.1"}, []string{"/dc1/rack-a"}},
		{"host name, any case", []string{"b1.example.net"}, []string{"/dc1/rack-b"}},
		{"order and count kept",
			[]string{"10.0.2.1", "unknown.example.net", "10.0.1.1", "nn1.example.net", "10.0.1.1", "192.0.2.7"},
			[]string{"/dc1/rack-b", DefaultRack, "/dc1/rack-a", "/dc1/rack-n", "/dc1/rack-a", DefaultRack}},
		{"ipv6", []string{"fd00::17", "fd00::18"}, []string{"/dc2/rack-x", DefaultRack}},
		{"no rack metadata", []string{"10.0.3.1"}, []string{DefaultRack}},
		{"unusable rack", []string{"y1.example.net"}, []string{DefaultRack}},
		{"DOWN node keeps its rack", []string{"d1.example.net"}, []string{"/dc1/rack-d"}},
		{"empty and blank arguments", []string{"", " "}, []string{DefaultRack, DefaultRack}},
		{"surrounding spaces", []string{" 10.0.1.1 "}, []string{"/dc1/rack-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := topology(t, tc.args, nodes)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("TopologyLookup(%q) = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
}

// Hadoop sends up to net.topology.script.number.args = 100 arguments at once.
func TestTopologyLookupHundredArgs(t *testing.T) {
	var nodes []*heureka.Instance
	for i := range 60 {
		in := dn(fmt.Sprintf("n%02d", i), fmt.Sprintf("/dc%d/rack-%d", i%2, i%7), 0, 0)
		in.IPAddr = fmt.Sprintf("10.2.0.%d", i)
		nodes = append(nodes, in)
	}
	var args, want []string
	for i := range 100 {
		if j := (i * 37) % 80; j < 60 { // a known node, in scrambled order, some twice
			args = append(args, fmt.Sprintf("10.2.0.%d", j))
			want = append(want, fmt.Sprintf("/dc%d/rack-%d", j%2, j%7))
		} else {
			args = append(args, fmt.Sprintf("10.3.0.%d", j))
			want = append(want, DefaultRack)
		}
	}
	got := topology(t, args, nodes)
	if len(got) != 100 {
		t.Fatalf("%d racks for 100 arguments", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("argument %d (%s): rack %q, want %q", i, args[i], got[i], want[i])
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTopologyLookupWriteError(t *testing.T) {
	if err := TopologyLookup(failWriter{}, []string{"x"}, nil); err == nil {
		t.Error("write error lost")
	}
}

// TestAnswerRacks: the registry answers when it knows any host, and the
// memory learns from it; a registry that knows none (restarted, or not
// read) is not believed over a memory that knows some; with neither, every
// host is DefaultRack.
func TestAnswerRacks(t *testing.T) {
	nodes := topologyNodes()
	hosts := []string{"10.0.1.1", "unknown.example.net"}
	mem := &RackMemory{Max: 10}
	racks, src, learnt := AnswerRacks(hosts, nodes, mem)
	if src != RacksFromRegistry || !learnt || fmt.Sprint(racks) != "[/dc1/rack-a /default-rack]" {
		t.Fatalf("from the registry: %v %v %v", racks, src, learnt)
	}
	// Asked by address, it learns the node's name too, and the other way
	// round: Hadoop calls the script with either.
	if _, _, learnt := AnswerRacks([]string{"b1.example.net"}, nodes, mem); !learnt {
		t.Error("learnt nothing from a second host")
	}
	for _, h := range []string{"10.0.1.1", "A1.example.NET", "b1.example.net", "10.0.2.1"} {
		if r, ok := mem.Rack(h); !ok || !strings.HasPrefix(r, "/dc1/rack-") {
			t.Errorf("the memory knows %s as %q %v", h, r, ok)
		}
	}
	if mem.Len() != 4 {
		t.Errorf("the memory holds %d entries, want 4: two nodes by name and address", mem.Len())
	}
	if racks, src, _ := AnswerRacks([]string{"a1.example.net", "10.0.2.1"}, nil, mem); src != RacksFromMemory || fmt.Sprint(racks) != "[/dc1/rack-a /dc1/rack-b]" {
		t.Errorf("registry down, asked by the other key: %v %v", racks, src)
	}
	if _, _, learnt := AnswerRacks(hosts, nodes, mem); learnt {
		t.Error("learnt the same answer twice")
	}
	for _, registry := range [][]*heureka.Instance{nil, {}} {
		racks, src, learnt = AnswerRacks(hosts, registry, mem)
		if src != RacksFromMemory || learnt || fmt.Sprint(racks) != "[/dc1/rack-a /default-rack]" {
			t.Errorf("registry %v: %v %v %v", registry, racks, src, learnt)
		}
	}
	for _, m := range []*RackMemory{nil, {Max: 10}, mem} {
		racks, src, _ = AnswerRacks([]string{"unknown.example.net"}, nil, m)
		if src != RacksDefault || fmt.Sprint(racks) != "[/default-rack]" {
			t.Errorf("memory %v: %v %v", m, racks, src)
		}
	}
	if _, _, learnt := AnswerRacks(hosts, nodes, nil); learnt {
		t.Error("learnt without a memory")
	}
}

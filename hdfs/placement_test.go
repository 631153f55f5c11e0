package hdfs

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

const tb = int64(1) << 40

// cluster3 is three racks: r1 {a1 a2 a3}, r2 {b1 b2 b3}, r3 {c1 c2}, all
// half full.
func cluster3() []*heureka.Instance {
	var nodes []*heureka.Instance
	for _, n := range []struct{ id, rack string }{
		{"a1", "/r1"}, {"a2", "/r1"}, {"a3", "/r1"},
		{"b1", "/r2"}, {"b2", "/r2"}, {"b3", "/r2"},
		{"c1", "/r3"}, {"c2", "/r3"},
	} {
		nodes = append(nodes, dn(n.id, n.rack, tb/2, tb))
	}
	return nodes
}

// modify returns nodes with f applied to copies of those whose ID is in idSet.
func modify(nodes []*heureka.Instance, f func(*heureka.Instance), idSet ...string) []*heureka.Instance {
	out := make([]*heureka.Instance, len(nodes))
	for i, in := range nodes {
		if slices.Contains(idSet, in.ID) {
			out[i] = with(in, f)
		} else {
			out[i] = in
		}
	}
	return out
}

func rackOf(in *heureka.Instance) string { return NormalizeRack(in.Metadata.Get(MetaRack)) }

// checkDefaultPolicy checks the rules every default placement obeys.
func checkDefaultPolicy(t *testing.T, pl Placement) {
	t.Helper()
	seen := map[string]bool{}
	perRack := map[string]int{}
	for _, in := range pl.Nodes {
		if seen[in.ID] {
			t.Fatalf("%s chosen twice: %v", in.ID, ids(pl.Nodes))
		}
		seen[in.ID] = true
		perRack[rackOf(in)]++
	}
	for r, k := range perRack {
		if pl.MaxPerRack > 0 && k > pl.MaxPerRack {
			t.Fatalf("rack %s holds %d replicas, cap %d: %v", r, k, pl.MaxPerRack, ids(pl.Nodes))
		}
	}
	if pl.Racks > 1 && len(pl.Nodes) >= 2 && rackOf(pl.Nodes[0]) == rackOf(pl.Nodes[1]) {
		t.Fatalf("second replica on the first's rack although %d racks exist: %v", pl.Racks, ids(pl.Nodes))
	}
}

func TestChooseDataNodes(t *testing.T) {
	all := cluster3()
	type check func(t *testing.T, pl Placement, err error)
	noErr := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	thirdOnSecondsRack := func(t *testing.T, pl Placement) {
		t.Helper()
		if len(pl.Nodes) < 3 || rackOf(pl.Nodes[2]) != rackOf(pl.Nodes[1]) {
			t.Fatalf("third replica not on the second's rack: %v", ids(pl.Nodes))
		}
	}
	for _, tc := range []struct {
		name  string
		nodes []*heureka.Instance
		req   PlacementRequest
		check check
	}{
		{
			name: "writer is a DataNode: local, remote rack, same remote rack",
			req:  PlacementRequest{Writer: "a1.example.net"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if len(pl.Nodes) != 3 || pl.Nodes[0].ID != "a1" || rackOf(pl.Nodes[1]) == "/r1" {
					t.Fatalf("nodes = %v", ids(pl.Nodes))
				}
				thirdOnSecondsRack(t, pl)
				if pl.MaxPerRack != 2 || pl.Racks != 3 || pl.Eligible != 8 || pl.Short != 0 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name: "writer matched by IP address and host name case",
			req:  PlacementRequest{Writer: "B2.EXAMPLE.NET", Replicas: 1},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if ids(pl.Nodes)[0] != "b2" {
					t.Fatalf("nodes = %v", ids(pl.Nodes))
				}
			},
		},
		{
			name:  "writer is full: first replica on its rack",
			nodes: modify(all, func(i *heureka.Instance) { i.Metadata = i.Metadata.With(MetaDiskUsed, "1090000000000") }, "a1"),
			req:   PlacementRequest{Writer: "a1.example.net"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if pl.Nodes[0].ID == "a1" || rackOf(pl.Nodes[0]) != "/r1" || pl.Skipped[SkipFull] != 1 {
					t.Fatalf("nodes = %v, skipped %v", ids(pl.Nodes), pl.Skipped)
				}
				thirdOnSecondsRack(t, pl)
			},
		},
		{
			name: "writer not a DataNode, rack unknown: anywhere",
			req:  PlacementRequest{Writer: "laptop.example.org"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if len(pl.Nodes) != 3 {
					t.Fatalf("nodes = %v", ids(pl.Nodes))
				}
				thirdOnSecondsRack(t, pl)
			},
		},
		{
			name: "writer not a DataNode, rack given",
			req:  PlacementRequest{Writer: "10.99.0.1", WriterRack: "r3"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if rackOf(pl.Nodes[0]) != "/r3" || rackOf(pl.Nodes[1]) == "/r3" {
					t.Fatalf("nodes = %v", ids(pl.Nodes))
				}
			},
		},
		{
			name: "writer's rack has no candidate: anywhere",
			nodes: modify(all, func(i *heureka.Instance) { i.Status = heureka.StatusDown },
				"c1", "c2"),
			req: PlacementRequest{WriterRack: "/r3"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if len(pl.Nodes) != 3 || pl.Skipped[SkipNotUp] != 2 {
					t.Fatalf("nodes = %v skipped %v", ids(pl.Nodes), pl.Skipped)
				}
			},
		},
		{
			name: "down, starting and unknown nodes are skipped",
			nodes: append(modify(all, func(i *heureka.Instance) { i.Status = heureka.StatusDown }, "b1", "b2", "b3"),
				with(dn("d1", "/r4", 0, tb), func(i *heureka.Instance) { i.Status = heureka.StatusStarting }),
				with(dn("d2", "/r4", 0, tb), func(i *heureka.Instance) { i.Status = heureka.StatusUnknown })),
			req: PlacementRequest{Replicas: 5},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				for _, in := range pl.Nodes {
					if in.Status != heureka.StatusUp {
						t.Fatalf("chose %s (%s)", in.ID, in.Status)
					}
				}
				// 5 candidates on 2 racks: cap (5-1)/2+2 = 4.
				if pl.Skipped[SkipNotUp] != 5 || pl.MaxPerRack != 4 || len(pl.Nodes) != 5 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name: "draining nodes are skipped",
			nodes: modify(modify(all, func(i *heureka.Instance) { i.Status = heureka.StatusOutOfService }, "a1", "a2"),
				func(i *heureka.Instance) { i.Metadata = i.Metadata.With(MetaStatus, "Decommission In Progress") }, "a3", "b1"),
			req: PlacementRequest{Writer: "a1.example.net", Replicas: 4},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				for _, in := range pl.Nodes {
					if in.ID == "a1" || in.ID == "a2" || in.ID == "a3" || in.ID == "b1" {
						t.Fatalf("chose draining %s", in.ID)
					}
				}
				// a1 is not a candidate but its rack has none either.
				if pl.Skipped[SkipDraining] != 4 || len(pl.Nodes) != 4 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name:  "penalised nodes are skipped",
			nodes: all,
			req:   PlacementRequest{Writer: "a1.example.net", Penalized: map[string]string{"a1": "write timeout", "b1": "", "b2": "x", "b3": "y"}},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				for _, in := range pl.Nodes {
					if rackOf(in) == "/r2" || in.ID == "a1" {
						t.Fatalf("chose penalised %s", in.ID)
					}
				}
				if pl.Skipped[SkipPenalized] != 4 || rackOf(pl.Nodes[0]) != "/r1" {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name: "full nodes: above 90% skipped, exactly 90% allowed",
			nodes: []*heureka.Instance{
				dn("a1", "/r1", 91, 100), dn("a2", "/r1", 90, 100), dn("b1", "/r2", 100, 100), dn("b2", "/r2", 50, 100),
				dn("b3", "/r2", 150, 100), // more used than total: full
			},
			req: PlacementRequest{Writer: "a1.example.net", Replicas: 2},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if !slices.Equal(ids(pl.Nodes), []string{"a2", "b2"}) || pl.Skipped[SkipFull] != 3 {
					t.Fatalf("nodes = %v skipped %v", ids(pl.Nodes), pl.Skipped)
				}
			},
		},
		{
			name:  "custom threshold",
			nodes: []*heureka.Instance{dn("a1", "/r1", 60, 100), dn("a2", "/r1", 40, 100)},
			req:   PlacementRequest{Replicas: 1, FullnessThreshold: 0.5},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if ids(pl.Nodes)[0] != "a2" {
					t.Fatalf("nodes = %v", ids(pl.Nodes))
				}
			},
		},
		{
			name:  "block size: not enough free space",
			nodes: []*heureka.Instance{dn("a1", "/r1", 10, 100), dn("a2", "/r1", 90, 100)},
			req:   PlacementRequest{Replicas: 2, BlockSize: 20},
			check: func(t *testing.T, pl Placement, err error) {
				wantCode(t, err, heureka.EUNAVAILABLE)
				if !slices.Equal(ids(pl.Nodes), []string{"a1"}) || pl.Short != 1 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name:  "unknown capacity is ranked last",
			nodes: []*heureka.Instance{dn("a1", "/r1", 0, 0), dn("a2", "/r1", 80, 100), dn("a3", "/r1", 0, 0)},
			req:   PlacementRequest{Replicas: 2},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if pl.Nodes[0].ID != "a2" || pl.UnknownCapacity != 1 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name: "garbled capacity is unknown, not empty",
			nodes: []*heureka.Instance{
				with(dn("a1", "/r1", 1, 100), func(i *heureka.Instance) { i.Metadata = i.Metadata.With(MetaDiskUsed, "lots") }),
				dn("a2", "/r1", 85, 100),
			},
			req: PlacementRequest{Replicas: 1},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if pl.Nodes[0].ID != "a2" {
					t.Fatalf("nodes = %v", ids(pl.Nodes))
				}
			},
		},
		{
			name:  "one rack: no cap, all replicas there",
			nodes: []*heureka.Instance{dn("a1", "/r1", 1, 10), dn("a2", "/r1", 1, 10), dn("a3", "r1/", 1, 10)},
			req:   PlacementRequest{Writer: "a1.example.net"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if len(pl.Nodes) != 3 || pl.MaxPerRack != 0 || pl.Racks != 1 || pl.Nodes[0].ID != "a1" {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name:  "no rack metadata: the default rack",
			nodes: []*heureka.Instance{dn("a1", "", 1, 10), dn("a2", "/default-rack", 1, 10), dn("b1", "/r2", 1, 10)},
			req:   PlacementRequest{Replicas: 2, Writer: "a1.example.net"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if pl.Racks != 2 || !slices.Equal(ids(pl.Nodes), []string{"a1", "b1"}) {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name:  "too few racks: two racks of one node",
			nodes: []*heureka.Instance{dn("a1", "/r1", 1, 10), dn("b1", "/r2", 1, 10)},
			req:   PlacementRequest{},
			check: func(t *testing.T, pl Placement, err error) {
				wantCode(t, err, heureka.EUNAVAILABLE)
				if len(pl.Nodes) != 2 || pl.Short != 1 || rackOf(pl.Nodes[0]) == rackOf(pl.Nodes[1]) {
					t.Fatalf("placement = %+v", pl)
				}
				if !strings.Contains(err.Error(), "placed 2 of 3 replicas (1 short)") {
					t.Fatalf("error = %v", err)
				}
			},
		},
		{
			name:  "per-rack cap leaves replicas unplaced",
			nodes: []*heureka.Instance{dn("a1", "/r1", 1, 10), dn("a2", "/r1", 1, 10), dn("a3", "/r1", 1, 10), dn("a4", "/r1", 1, 10), dn("a5", "/r1", 1, 10), dn("b1", "/r2", 1, 10)},
			req:   PlacementRequest{Replicas: 6},
			check: func(t *testing.T, pl Placement, err error) {
				// 6 replicas over 2 racks: (6-1)/2+2 = 4 per rack, so 4 + 1.
				wantCode(t, err, heureka.EUNAVAILABLE)
				if len(pl.Nodes) != 5 || pl.MaxPerRack != 4 || !strings.Contains(err.Error(), "at most 4 per rack") {
					t.Fatalf("placement = %+v, %v", pl, err)
				}
			},
		},
		{
			name:  "four replicas over two racks: 3 + 1 at most",
			nodes: []*heureka.Instance{dn("a1", "/r1", 1, 10), dn("a2", "/r1", 1, 10), dn("a3", "/r1", 1, 10), dn("a4", "/r1", 1, 10), dn("b1", "/r2", 1, 10)},
			req:   PlacementRequest{Replicas: 4, Writer: "a1.example.net"},
			check: func(t *testing.T, pl Placement, err error) {
				noErr(t, err)
				if pl.MaxPerRack != 3 || pl.Nodes[1].ID != "b1" {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name: "more replicas than nodes",
			req:  PlacementRequest{Replicas: 10},
			check: func(t *testing.T, pl Placement, err error) {
				wantCode(t, err, heureka.EUNAVAILABLE)
				if len(pl.Nodes) != 8 || pl.Short != 2 || pl.Requested != 10 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name:  "no DataNodes at all",
			nodes: []*heureka.Instance{},
			req:   PlacementRequest{},
			check: func(t *testing.T, pl Placement, err error) {
				wantCode(t, err, heureka.EUNAVAILABLE)
				if len(pl.Nodes) != 0 || pl.Short != 3 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
		{
			name:  "every node unsuitable: the error says why",
			nodes: []*heureka.Instance{with(dn("a1", "/r1", 1, 10), func(i *heureka.Instance) { i.Status = heureka.StatusDown }), dn("a2", "/r1", 10, 10), nil},
			req:   PlacementRequest{Replicas: 1},
			check: func(t *testing.T, pl Placement, err error) {
				wantCode(t, err, heureka.EUNAVAILABLE)
				for _, s := range []string{"1 not UP", "1 full (over 90% used"} {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("error %q lacks %q", err, s)
					}
				}
			},
		},
		{
			name:  "duplicate IDs count once",
			nodes: []*heureka.Instance{dn("a1", "/r1", 1, 10), dn("a1", "/r1", 1, 10)},
			req:   PlacementRequest{Replicas: 2},
			check: func(t *testing.T, pl Placement, err error) {
				wantCode(t, err, heureka.EUNAVAILABLE)
				if len(pl.Nodes) != 1 || pl.Skipped[SkipDuplicate] != 1 {
					t.Fatalf("placement = %+v", pl)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := tc.nodes
			if nodes == nil {
				nodes = all
			}
			for seed := range uint64(40) {
				req := tc.req
				req.Rand = rand.New(rand.NewPCG(seed, 7))
				pl, err := ChooseDataNodes(nodes, req)
				checkDefaultPolicy(t, pl)
				tc.check(t, pl, err)
			}
		})
	}
}

func TestChooseDataNodesInvalid(t *testing.T) {
	for _, req := range []PlacementRequest{
		{Replicas: -1},
		{FullnessThreshold: 1.5},
		{FullnessThreshold: -0.1},
		{AvailableSpace: true, AvailableSpacePreference: 1},
		{AvailableSpace: true, AvailableSpaceTolerance: 101},
	} {
		_, err := ChooseDataNodes(cluster3(), req)
		wantCode(t, err, heureka.EINVALID)
	}
}

func TestChooseDataNodesDeterministic(t *testing.T) {
	nodes := cluster3()
	rev := slices.Clone(nodes)
	slices.Reverse(rev)
	var first []string
	for i, list := range [][]*heureka.Instance{nodes, rev, nodes} {
		pl, err := ChooseDataNodes(list, PlacementRequest{Replicas: 5, Rand: rand.New(rand.NewPCG(42, 42))})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = ids(pl.Nodes)
		} else if !slices.Equal(ids(pl.Nodes), first) {
			t.Fatalf("same seed, different choice: %v vs %v", ids(pl.Nodes), first)
		}
	}
	// The nil Rand works too.
	if pl, err := ChooseDataNodes(nodes, PlacementRequest{}); err != nil || len(pl.Nodes) != 3 {
		t.Fatalf("nil Rand: %+v %v", pl, err)
	}
}

// Every node gets chosen sometimes: the choice is random, not first-fit.
func TestChooseDataNodesSpreads(t *testing.T) {
	nodes := cluster3()
	count := map[string]int{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		pl, err := ChooseDataNodes(nodes, PlacementRequest{Rand: r})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range pl.Nodes {
			count[in.ID]++
		}
	}
	for _, in := range nodes {
		if count[in.ID] < 300 {
			t.Errorf("%s chosen %d times in 2000 placements: %v", in.ID, count[in.ID], count)
		}
	}
}

func TestChooseDataNodesAvailableSpace(t *testing.T) {
	nodes := []*heureka.Instance{dn("empty", "/r1", 10, 100), dn("busy", "/r1", 80, 100), dn("near", "/r2", 12, 100)}
	freq := func(req PlacementRequest, scope []*heureka.Instance) float64 {
		req.Replicas = 1
		req.Rand = rand.New(rand.NewPCG(3, 4))
		n := 0
		const runs = 20000
		for range runs {
			pl, err := ChooseDataNodes(scope, req)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Nodes[0].ID == "empty" {
				n++
			}
		}
		return float64(n) / runs
	}
	two := nodes[:2]
	if f := freq(PlacementRequest{}, two); f < 0.48 || f > 0.52 {
		t.Errorf("uniform: less-used chosen %.3f of the time, want 0.5", f)
	}
	if f := freq(PlacementRequest{AvailableSpace: true}, two); f < 0.58 || f > 0.62 {
		t.Errorf("available space: less-used chosen %.3f of the time, want 0.6", f)
	}
	if f := freq(PlacementRequest{AvailableSpace: true, AvailableSpacePreference: 0.9}, two); f < 0.88 || f > 0.92 {
		t.Errorf("preference 0.9: less-used chosen %.3f of the time", f)
	}
	// Within the tolerance (10% vs 12% used) the first drawn wins: uniform.
	pair := []*heureka.Instance{nodes[0], nodes[2]}
	if f := freq(PlacementRequest{AvailableSpace: true, WriterRack: "/r9"}, pair); f < 0.48 || f > 0.52 {
		t.Errorf("within tolerance: %.3f, want 0.5", f)
	}
	// The writer's own node still comes first.
	pl, err := ChooseDataNodes(nodes, PlacementRequest{AvailableSpace: true, Writer: "busy.example.net"})
	if err != nil || pl.Nodes[0].ID != "busy" {
		t.Errorf("writer not first: %v %v", ids(pl.Nodes), err)
	}
}

func TestMaxNodesPerRack(t *testing.T) {
	for _, tc := range []struct{ replicas, cluster, racks, want int }{
		{3, 10, 2, 2}, // (2)/2+2 = 3 == 3 → 2
		{3, 10, 3, 2}, // 2/3+2 = 2
		{4, 10, 2, 3}, // 3/2+2 = 3
		{6, 10, 2, 4},
		{10, 100, 3, 5},
		{1, 10, 3, 0}, // one replica: no cap
		{3, 10, 1, 0}, // one rack: no cap
		{3, 2, 2, 1},  // capped to 2 nodes: 1/2+2 = 2 == 2 → 1
		{5, 0, 0, 0},
	} {
		_, got := maxNodesPerRack(tc.replicas, tc.cluster, tc.racks)
		if got != tc.want {
			t.Errorf("maxNodesPerRack(%d, %d, %d) = %d, want %d", tc.replicas, tc.cluster, tc.racks, got, tc.want)
		}
	}
}

// A node marked probe_state=hung (its agent sees a long pause) is taken
// only when no other node fits: never while others are free, and still
// rather than a short placement.
func TestChooseDataNodesHungLast(t *testing.T) {
	hung := func(in *heureka.Instance) { in.Metadata = in.Metadata.With(MetaProbeState, ProbeStateHung) }
	nodes := modify(cluster3(), hung, "a1", "b1")
	for seed := range uint64(200) {
		pl, err := ChooseDataNodes(nodes, PlacementRequest{Replicas: 3, Rand: rand.New(rand.NewPCG(seed, 1))})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range pl.Nodes {
			if in.ID == "a1" || in.ID == "b1" {
				t.Fatalf("seed %d: hung %s chosen among free nodes: %v", seed, in.ID, ids(pl.Nodes))
			}
		}
	}
	pl, err := ChooseDataNodes(nodes, PlacementRequest{Replicas: 8, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil || len(pl.Nodes) != 8 {
		t.Fatalf("all 8 wanted: %v %v", ids(pl.Nodes), err)
	}
	if got := ids(pl.Nodes)[6:]; !slices.Contains(got, "a1") || !slices.Contains(got, "b1") {
		t.Errorf("the hung nodes are not the last two: %v", ids(pl.Nodes))
	}
}

package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// sides checks that the groups are disjoint and together are peers 1..n.
func sides(t *testing.T, n int, groups ...[]int) {
	t.Helper()
	var all []int
	for _, g := range groups {
		all = append(all, g...)
	}
	slices.Sort(all)
	want := make([]int, n)
	for k := range want {
		want[k] = k + 1
	}
	if !slices.Equal(all, want) {
		t.Fatalf("groups %v: not a partition of peers 1..%d", groups, n)
	}
}

// cut says whether pairs holds {a, b} either way round.
func cut(pairs [][2]int, a, b int) bool {
	return slices.Contains(pairs, [2]int{a, b}) || slices.Contains(pairs, [2]int{b, a})
}

func TestSplitFivePeersIsThreeAgainstTwo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	seen := map[string]bool{}
	for range 200 {
		i := rng.IntN(5) + 1
		major, minor := splitSides(5, i, rng.IntN)
		sides(t, 5, major, minor)
		if len(major) != 3 || len(minor) != 2 {
			t.Fatalf("split of 5 from %d: %v | %v, want 3 | 2", i, major, minor)
		}
		if !slices.Contains(minor, i) {
			t.Fatalf("split from %d: minority %v does not hold it", i, minor)
		}
		pairs := crossPairs(major, minor)
		if len(pairs) != 6 {
			t.Fatalf("split %v | %v cuts %d pairs, want 6", major, minor, len(pairs))
		}
		for a := 1; a <= 5; a++ {
			for b := a + 1; b <= 5; b++ {
				across := slices.Contains(minor, a) != slices.Contains(minor, b)
				if cut(pairs, a, b) != across {
					t.Fatalf("split %v | %v: pair %d-%d cut=%v, across=%v", major, minor, a, b, cut(pairs, a, b), across)
				}
			}
		}
		s := slices.Clone(minor)
		slices.Sort(s)
		seen[fmt.Sprint(s)] = true
	}
	if len(seen) != 10 {
		t.Errorf("200 draws gave %d distinct minorities, want all 10 pairs of 5: %v", len(seen), seen)
	}
}

func TestSplitThreePeersIsIsolateWithoutADraw(t *testing.T) {
	for i := 1; i <= 3; i++ {
		major, minor := splitSides(3, i, func(int) int { t.Fatal("drew with three peers"); return 0 })
		sides(t, 3, major, minor)
		if !slices.Equal(minor, []int{i}) || len(major) != 2 {
			t.Errorf("split of 3 from %d: %v | %v, want the others | [%d]", i, major, minor, i)
		}
	}
}

// With three peers the bridge must be the cut the harness always made
// (A = i, B = i+1, C = i+2 on the ring; A and C cut), without a draw, so
// that every earlier seed replays the same schedule.
func TestBridgeThreePeersIsTheEarlierCut(t *testing.T) {
	for i := 1; i <= 3; i++ {
		left, mid, right := bridgeSides(3, i, func(int) int { t.Fatal("drew with three peers"); return 0 })
		a, b, c := i, i%3+1, (i+1)%3+1
		if !slices.Equal(left, []int{a}) || mid != b || !slices.Equal(right, []int{c}) {
			t.Errorf("bridge of 3 from %d: %v-%d-%v, want [%d]-%d-[%d]", i, left, mid, right, a, b, c)
		}
		if pairs := crossPairs(left, right); len(pairs) != 1 || !cut(pairs, a, c) {
			t.Errorf("bridge of 3 from %d cuts %v, want only %d-%d", i, pairs, a, c)
		}
	}
}

func TestBridgeFivePeers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	seen := map[string]bool{}
	for range 300 {
		i := rng.IntN(5) + 1
		left, mid, right := bridgeSides(5, i, rng.IntN)
		sides(t, 5, left, []int{mid}, right)
		if len(left) != 2 || len(right) != 2 || mid != i%5+1 {
			t.Fatalf("bridge of 5 from %d: %v-%d-%v, want two sides of 2 around %d", i, left, mid, right, i%5+1)
		}
		pairs := crossPairs(left, right)
		if len(pairs) != 4 {
			t.Fatalf("bridge %v-%d-%v cuts %d pairs, want 4", left, mid, right, len(pairs))
		}
		for p := 1; p <= 5; p++ {
			if p != mid && cut(pairs, mid, p) {
				t.Fatalf("bridge %v-%d-%v cuts the middle from %d", left, mid, right, p)
			}
		}
		// Each side plus the middle is a majority: every peer still sees
		// three, itself included.
		for p := 1; p <= 5; p++ {
			sees := 0
			for q := 1; q <= 5; q++ {
				if !cut(pairs, p, q) {
					sees++
				}
			}
			if want := map[bool]int{true: 5, false: 3}[p == mid]; sees != want {
				t.Fatalf("bridge %v-%d-%v: %d sees %d peers, want %d", left, mid, right, p, sees, want)
			}
		}
		l, r := slices.Clone(left), slices.Clone(right)
		slices.Sort(l)
		slices.Sort(r)
		if l[0] > r[0] {
			l, r = r, l
		}
		seen[fmt.Sprint(l, mid, r)] = true
	}
	// 5 middles × 3 ways to halve the other four.
	if len(seen) != 15 {
		t.Errorf("300 draws gave %d distinct bridges, want 15: %v", len(seen), seen)
	}
}

func TestKindsForThreePeersIsTheEarlierList(t *testing.T) {
	earlier := []string{"isolate", "bridge", "slow", "flaky", "kill", "pause", "all-down", "node-death", "clock"}
	if got := kindsFor(3); !slices.Equal(got, earlier) {
		t.Errorf("kindsFor(3) = %v, want %v (the order seeds were drawn from)", got, earlier)
	}
	if got := kindsFor(5); !slices.Contains(got, "split") || len(got) != len(earlier)+1 {
		t.Errorf("kindsFor(5) = %v, want the earlier list and split", got)
	}
	if _, err := parseKinds("split", 3); err == nil {
		t.Error("parseKinds(split, 3): no error")
	}
	if _, err := parseKinds("isolate,nosuch", 5); err == nil {
		t.Error("parseKinds(nosuch, 5): no error")
	}
	if got, err := parseKinds("split,kill", 5); err != nil || !slices.Equal(got, []string{"split", "kill"}) {
		t.Errorf("parseKinds(split,kill, 5) = %v, %v", got, err)
	}
}

func TestNamesFitLinuxAtTheLargestPID(t *testing.T) {
	for _, n := range []int{3, 5} {
		topo := &topology{prefix: nsBase + strconv.Itoa(maxPID), peers: n}
		if err := topo.checkNames(); err != nil {
			t.Errorf("%d peers: %v", n, err)
		}
		if got := len(topo.names()); got != n+2 {
			t.Errorf("%d peers: %d namespaces, want %d", n, got, n+2)
		}
	}
	long := &topology{prefix: nsBase + "12345678", peers: 5}
	if err := long.checkNames(); err == nil {
		t.Error("an 8-digit pid passes the check; hnem12345678-net is 16 characters")
	}
}

// TestServerListsSpreadOverEveryPeer: each plain client lists every peer
// once, in an order of its own that stays the same, and the clients' first
// servers spread over every peer, as Netflix's shuffle by address spreads
// them.
func TestServerListsSpreadOverEveryPeer(t *testing.T) {
	for _, n := range []int{3, 5} {
		var peers []*peer
		for i := 1; i <= n; i++ {
			peers = append(peers, &peer{i: i})
		}
		first := map[int]int{}
		for a := range 12 {
			list := serverList(peers, a)
			seen := map[int]bool{}
			for _, p := range list {
				seen[p.i] = true
			}
			if len(list) != n || len(seen) != n {
				t.Fatalf("%d peers: client %d has servers %v, want each peer once", n, a, list)
			}
			if again := serverList(peers, a); !slices.Equal(again, list) {
				t.Errorf("%d peers: client %d's order changed: %v, then %v", n, a, list, again)
			}
			first[list[0].i]++
		}
		if len(first) != n {
			t.Errorf("%d peers: 12 clients start at only %v", n, first)
		}
	}
}

// TestAgentsOfAShapeStartAtDifferentPeers: the six agents of a run take
// the three shapes twice, and the two agents of each shape start at
// different peers, with the lists their shapes give.
func TestAgentsOfAShapeStartAtDifferentPeers(t *testing.T) {
	for _, n := range []int{3, 5} {
		var peers []*peer
		for i := 1; i <= n; i++ {
			peers = append(peers, &peer{i: i})
		}
		firsts := map[string][]int{}
		for a := range 6 {
			shape := agentShapes[a%len(agentShapes)]
			list := agentPeers(peers, a, shape)
			want := map[string]int{shapeOne: 1, shapeSome: 2, shapeEvery: n}[shape]
			if len(list) != want {
				t.Fatalf("%d peers: agent %d (%s) lists %d peers, want %d", n, a, shape, len(list), want)
			}
			firsts[shape] = append(firsts[shape], list[0].i)
		}
		for shape, f := range firsts {
			if f[0] == f[1] {
				t.Errorf("%d peers: both %s agents start at p%d", n, shape, f[0])
			}
		}
	}
}

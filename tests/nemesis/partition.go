package main

import (
	"fmt"
	"strings"
)

// Partitions of the peer network, as pure functions of the peer count and
// the schedule's draws: which peers end up on which side, and which pairs
// must lose each other's packets. Peers are numbered 1..n.

// splitSides is the clean majority/minority split: peer i and, with five
// peers, one more drawn with pick (pick(k) returns 0..k-1) make the
// minority, (n-1)/2 peers; the rest, the majority. With three peers the
// minority is peer i alone, which is what isolate does (no draw).
func splitSides(n, i int, pick func(int) int) (majority, minority []int) {
	minority = []int{i}
	rest := ring(n, i)
	for len(minority) < (n-1)/2 {
		k := pick(len(rest))
		minority = append(minority, rest[k])
		rest = append(rest[:k], rest[k+1:]...)
	}
	return rest, minority
}

// bridgeSides is Jepsen's bridge: the peer after i on the ring is the
// middle and sees every peer; the others fall in two sides of (n-1)/2,
// each side seeing itself and the middle and nothing of the other side.
// With three peers that is A sees B, B sees C, A and C cannot see each
// other, with A = i, B = i+1, C = i+2. With five, which side each of the
// four others is on is drawn with pick (a shuffle); with three the two
// sides are one peer each, the same cut whichever way round, so nothing
// is drawn.
func bridgeSides(n, i int, pick func(int) int) (left []int, middle int, right []int) {
	middle = i%n + 1
	others := ring(n, middle) // middle+1, ..., i
	if len(others) > 2 {
		for k := len(others) - 1; k > 0; k-- {
			j := pick(k + 1)
			others[k], others[j] = others[j], others[k]
		}
	}
	h := len(others) / 2
	return others[h:], middle, others[:h]
}

// ring is every peer but i, in ring order from i+1.
func ring(n, i int) []int {
	var r []int
	for k := 1; k < n; k++ {
		r = append(r, (i+k-1)%n+1)
	}
	return r
}

// crossPairs is every pair with one peer in a and one in b: the pairs a
// partition between a and b cuts.
func crossPairs(a, b []int) [][2]int {
	var out [][2]int
	for _, x := range a {
		for _, y := range b {
			out = append(out, [2]int{x, y})
		}
	}
	return out
}

// peerNames is "p1,p5" for peers 1 and 5.
func peerNames(ps []int) string {
	s := make([]string, len(ps))
	for k, p := range ps {
		s[k] = fmt.Sprintf("p%d", p)
	}
	return strings.Join(s, ",")
}

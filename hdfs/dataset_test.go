package hdfs

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/heureka-project/heureka"
)

// TestDataNodeSetFromPrevChoosesAsFresh: a set prepared from an earlier
// one, with nodes changed (one only in status, with equal metadata),
// copied, added and removed, chooses exactly as a set prepared from
// scratch.
func TestDataNodeSetFromPrevChoosesAsFresh(t *testing.T) {
	node := func(i int, used int64, st heureka.Status) *heureka.Instance {
		return &heureka.Instance{ID: fmt.Sprintf("dn%03d", i), HostName: fmt.Sprintf("dn%03d.example", i), Status: st,
			Metadata: NodeInfo{Rack: fmt.Sprintf("/r%d", i%4), DiskUsed: used, DiskTotal: 100}.WriteMetadata(heureka.Metadata{})}
	}
	var v1 []*heureka.Instance
	for i := range 40 {
		v1 = append(v1, node(i, 10, heureka.StatusUp))
	}
	prev := NewDataNodeSet(v1, nil)
	v2 := append([]*heureka.Instance(nil), v1[1:]...) // dn000 gone
	v2[3] = node(4, 95, heureka.StatusUp)             // dn004 now full
	v2[5] = node(6, 10, heureka.StatusDown)           // dn006 down
	v2 = append(v2, node(40, 10, heureka.StatusUp), node(41, 10, heureka.StatusUp))
	v2 = append(v2, v2[0])     // a duplicate, out of order
	for i := 10; i < 20; i++ { // unchanged, but copies, as a registry hands them out
		c := *v2[i]
		v2[i] = &c
	}
	for seed := range uint64(20) {
		req := func() PlacementRequest {
			return PlacementRequest{Replicas: 3, Writer: "dn001.example", Rand: rand.New(rand.NewPCG(seed, 1)),
				Penalized: map[string]string{"dn010": "probe"}}
		}
		got, gerr := NewDataNodeSet(v2, prev).Choose(req())
		want, werr := ChooseDataNodes(v2, req())
		got.Skipped, want.Skipped = clean(got.Skipped), clean(want.Skipped)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("seed %d: from prev %+v, %v; fresh %+v, %v", seed, got, gerr, want, werr)
		}
		if want.Skipped[SkipFull] != 1 || want.Skipped[SkipNotUp] != 1 || want.Skipped[SkipPenalized] != 1 || want.Skipped[SkipDuplicate] != 1 {
			t.Fatalf("skipped %v: want one each of full, not UP, penalized, duplicate", want.Skipped)
		}
	}
}

func clean(m map[SkipReason]int) map[SkipReason]int {
	out := map[SkipReason]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

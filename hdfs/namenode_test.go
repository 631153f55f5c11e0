package hdfs

import (
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

func TestResolveNameNodes(t *testing.T) {
	down := func(in *heureka.Instance) *heureka.Instance {
		return with(in, func(i *heureka.Instance) { i.Status = heureka.StatusDown })
	}
	for _, tc := range []struct {
		name     string
		nns      []*heureka.Instance
		active   string
		addrs    []string
		conflict []string // substrings of Conflict; nil means none
		code     string
	}{
		{
			name:   "one active, one standby",
			nns:    []*heureka.Instance{nn("nn2", "standby", 100, 8020), nn("nn1", "active", 200, 8020)},
			active: "nn1",
			addrs:  []string{"nn1.example.net:8020", "nn2.example.net:8020"},
		},
		{
			name:   "single non-HA NameNode (active, transition time 0)",
			nns:    []*heureka.Instance{nn("nn1", "active", 0, 9000)},
			active: "nn1",
			addrs:  []string{"nn1.example.net:9000"},
		},
		{
			name: "zero actives: ENOTFOUND but the list is there",
			nns: []*heureka.Instance{nn("nn2", "standby", 100, 8020), nn("nn1", "standby", 200, 8020),
				nn("nn3", "", 0, 8020)},
			addrs: []string{"nn1.example.net:8020", "nn2.example.net:8020", "nn3.example.net:8020"},
			code:  heureka.ENOTFOUND,
		},
		{
			name:     "two actives: the later transition wins",
			nns:      []*heureka.Instance{nn("nn1", "active", 1000, 8020), nn("nn3", "standby", 0, 8020), nn("nn2", "active", 2000, 8020)},
			active:   "nn2",
			addrs:    []string{"nn2.example.net:8020", "nn1.example.net:8020", "nn3.example.net:8020"},
			conflict: []string{"2 NameNodes claim to be active", "nn1 (ha_transition_time 1000)", "nn2 (ha_transition_time 2000)", "chose nn2"},
		},
		{
			name: "two actives, same transition time: the later registry update wins",
			nns: []*heureka.Instance{
				with(nn("nn1", "active", 5, 8020), func(i *heureka.Instance) { i.LastDirtyTimestamp = 9 }),
				with(nn("nn2", "active", 5, 8020), func(i *heureka.Instance) { i.LastDirtyTimestamp = 3 }),
			},
			active:   "nn1",
			addrs:    []string{"nn1.example.net:8020", "nn2.example.net:8020"},
			conflict: []string{"chose nn1"},
		},
		{
			name:     "three actives, full tie: smallest ID",
			nns:      []*heureka.Instance{nn("nnc", "active", 5, 1), nn("nnb", "active", 5, 1), nn("nna", "active", 5, 1)},
			active:   "nna",
			addrs:    []string{"nna.example.net:1", "nnb.example.net:1", "nnc.example.net:1"},
			conflict: []string{"3 NameNodes claim"},
		},
		{
			name:   "a DOWN active is ignored",
			nns:    []*heureka.Instance{down(nn("nn1", "active", 9000, 8020)), nn("nn2", "active", 100, 8020), nn("nn3", "standby", 0, 8020)},
			active: "nn2",
			addrs:  []string{"nn2.example.net:8020", "nn3.example.net:8020"},
		},
		{
			name:  "only DOWN, OUT_OF_SERVICE and STARTING NameNodes",
			nns:   []*heureka.Instance{down(nn("nn1", "active", 1, 8020)), with(nn("nn2", "active", 1, 8020), func(i *heureka.Instance) { i.Status = heureka.StatusOutOfService }), with(nn("nn3", "active", 1, 8020), func(i *heureka.Instance) { i.Status = heureka.StatusStarting })},
			addrs: nil,
			code:  heureka.ENOTFOUND,
		},
		{
			name: "nothing registered",
			code: heureka.ENOTFOUND,
		},
		{
			name: "order: active, standbys, observers, the rest; default port and IP fallback",
			nns: []*heureka.Instance{
				nn("o1", "observer", 0, 8020), nn("i1", "initializing", 0, 8020), nn("s2", "standby", 0, 0),
				nn("a1", "active", 0, 8020), nn("s1", "standby", 0, 8021), nil,
				with(nn("x1", "bogus", 0, 8020), func(i *heureka.Instance) { i.HostName = "" }),
			},
			active: "a1",
			addrs: []string{"a1.example.net:8020", "s1.example.net:8021", "s2.example.net:8020", "o1.example.net:8020",
				"i1.example.net:8020", "10.1.0.49:8020"},
		},
		{
			name:   "duplicate IDs are listed once; ha_state in upper case",
			nns:    []*heureka.Instance{nn("nn1", "ACTIVE", 0, 8020), nn("nn1", "ACTIVE", 0, 8020)},
			active: "nn1",
			addrs:  []string{"nn1.example.net:8020"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ResolveNameNodes(tc.nns)
			wantCode(t, err, tc.code)
			gotActive := ""
			if res.Active != nil {
				gotActive = res.Active.ID
			}
			if gotActive != tc.active {
				t.Errorf("active = %q, want %q", gotActive, tc.active)
			}
			if !slices.Equal(res.Addresses, tc.addrs) {
				t.Errorf("addresses = %q, want %q", res.Addresses, tc.addrs)
			}
			if len(res.NameNodes) != len(res.Addresses) {
				t.Errorf("%d NameNodes for %d addresses", len(res.NameNodes), len(res.Addresses))
			}
			if tc.active != "" && (len(res.NameNodes) == 0 || res.NameNodes[0] != res.Active) {
				t.Errorf("the active NameNode is not first")
			}
			if tc.conflict == nil && res.Conflict != "" {
				t.Errorf("unexpected conflict %q", res.Conflict)
			}
			for _, s := range tc.conflict {
				if !strings.Contains(res.Conflict, s) {
					t.Errorf("conflict %q lacks %q", res.Conflict, s)
				}
			}
		})
	}
}

func TestResolveNameNodesErrorNamesStates(t *testing.T) {
	_, err := ResolveNameNodes([]*heureka.Instance{nn("nn1", "standby", 0, 8020), nn("nn2", "", 0, 8020)})
	if err == nil || !strings.Contains(err.Error(), "nn1 standby") || !strings.Contains(err.Error(), "nn2 no ha_state") {
		t.Errorf("error = %v", err)
	}
}

func TestNameNodeAddressIPv6(t *testing.T) {
	in := nn("nn1", "active", 0, 8020)
	in.HostName = ""
	in.IPAddr = "fd00::1"
	if got := NameNodeAddress(in); got != "[fd00::1]:8020" {
		t.Errorf("NameNodeAddress = %q", got)
	}
}

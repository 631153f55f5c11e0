package hdfs

import (
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

func TestNodeInfoRoundTrip(t *testing.T) {
	for _, n := range []NodeInfo{
		{},
		{Rack: "/dc1/rack-a", DiskUsed: 2105496648604, DiskTotal: 3144191983616, BlockCount: 467998,
			Version: "3.3.0", Status: string(AdminNormal), DataPort: 9866, RPCPort: 9867},
		{Version: "3.3.0", Status: "Operational", HAState: HAStandby, HATransitionTime: 1530072006768,
			RPCPort: 8020, DiskUsed: 1, DiskTotal: 1 << 62, BlockCount: 603117},
	} {
		md := n.WriteMetadata(heureka.Metadata{})
		if err := heureka.ValidateMetadata(md, heureka.DefaultLimits()); err != nil {
			t.Errorf("WriteMetadata(%+v) = %v: %v", n, md, err)
		}
		got, err := ReadNodeInfo(md)
		if err != nil || got != n {
			t.Errorf("ReadNodeInfo(WriteMetadata(%+v)) = %+v, %v", n, got, err)
		}
	}
}

func TestWriteMetadataKeepsOtherKeysAndDropsZeros(t *testing.T) {
	old := heureka.NewMetadata("other", "x", MetaBlockCount, "5", MetaHAState, "active")
	md := NodeInfo{Rack: "/r1", DiskTotal: 10}.WriteMetadata(old)
	want := heureka.NewMetadata("other", "x", MetaRack, "/r1", MetaDiskTotal, "10")
	if !md.Equal(want) {
		t.Errorf("metadata = %v, want %v", md, want)
	}
	if old.Len() != 3 {
		t.Errorf("WriteMetadata changed the metadata it was given: %v", old)
	}
	// Negative values are unknown, not written.
	md = NodeInfo{DiskUsed: -1, RPCPort: -5}.WriteMetadata(heureka.Metadata{})
	if md.Len() != 0 {
		t.Errorf("negative values written: %v", md)
	}
}

func TestReadNodeInfoTolerant(t *testing.T) {
	md := map[string]string{
		MetaRack:             "/r1",
		MetaDiskUsed:         "12x",
		MetaDiskTotal:        " 100 ",
		MetaBlockCount:       "-3",
		MetaHAState:          "ACTIVE",
		MetaHATransitionTime: "1e9",
		MetaDataPort:         "70000",
		MetaRPCPort:          "8020",
		MetaVersion:          "3.3.0",
	}
	n, err := ReadNodeInfo(heureka.MetadataOf(md))
	want := NodeInfo{Rack: "/r1", DiskTotal: 100, HAState: HAActive, RPCPort: 8020, Version: "3.3.0"}
	if n != want {
		t.Errorf("ReadNodeInfo = %+v, want %+v", n, want)
	}
	wantCode(t, err, heureka.EINVALID)
	for _, k := range []string{MetaDiskUsed, MetaBlockCount, MetaHATransitionTime, MetaDataPort} {
		if !strings.Contains(err.Error(), k+"=") {
			t.Errorf("error %q does not name %s", err, k)
		}
	}
	for _, k := range []string{MetaDiskTotal, MetaRPCPort, MetaHAState} {
		if strings.Contains(err.Error(), k+"=") {
			t.Errorf("error %q names the good key %s", err, k)
		}
	}

	_, err = ReadNodeInfo(heureka.MetadataOf(map[string]string{MetaHAState: "leader"}))
	if err == nil || !strings.Contains(err.Error(), MetaHAState) {
		t.Errorf("unknown ha_state: err = %v", err)
	}
	if n, err := ReadNodeInfo(heureka.Metadata{}); err != nil || n != (NodeInfo{}) {
		t.Errorf("ReadNodeInfo(nil) = %+v, %v", n, err)
	}
}

func TestParseHAState(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want HAState
		ok   bool
	}{
		{"active", HAActive, true}, {"Standby", HAStandby, true}, {" OBSERVER ", HAObserver, true},
		{"initializing", HAInitializing, true}, {"stopping", HAStopping, true},
		{"", "", false}, {"leader", "", false},
	} {
		if got, ok := ParseHAState(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("ParseHAState(%q) = %q, %v", tc.in, got, ok)
		}
	}
}

func TestParseAdminState(t *testing.T) {
	for _, tc := range []struct {
		in       string
		want     AdminState
		draining bool
	}{
		{"NORMAL", AdminNormal, false},
		{"In Service", AdminNormal, false},
		{"in_service", AdminNormal, false},
		{"Decommission In Progress", AdminDecommissionInProgress, true},
		{"DECOMMISSION_INPROGRESS", AdminDecommissionInProgress, true},
		{"decommissioning", AdminDecommissionInProgress, true},
		{"Decommissioned", AdminDecommissioned, true},
		{"Entering Maintenance", AdminEnteringMaintenance, true},
		{"In Maintenance", AdminInMaintenance, true},
		{"in-maintenance", AdminInMaintenance, true},
	} {
		got, ok := ParseAdminState(tc.in)
		if !ok || got != tc.want || got.Draining() != tc.draining {
			t.Errorf("ParseAdminState(%q) = %q, %v (draining %v)", tc.in, got, ok, got.Draining())
		}
	}
	for _, s := range []string{"", "Operational", "safeMode", "dead"} {
		if got, ok := ParseAdminState(s); ok || got.Draining() {
			t.Errorf("ParseAdminState(%q) = %q, %v; want not ok", s, got, ok)
		}
	}
}

func TestIsDraining(t *testing.T) {
	base := dn("a1", "/r1", 1, 10)
	for _, tc := range []struct {
		name string
		in   *heureka.Instance
		want bool
	}{
		{"up", base, false},
		{"out of service", with(base, func(i *heureka.Instance) { i.Status = heureka.StatusOutOfService }), true},
		{"decommissioning", with(base, func(i *heureka.Instance) { i.Metadata = i.Metadata.With(MetaStatus, "decommissioning") }), true},
		{"maintenance", with(base, func(i *heureka.Instance) { i.Metadata = i.Metadata.With(MetaStatus, "IN_MAINTENANCE") }), true},
		{"normal", with(base, func(i *heureka.Instance) { i.Metadata = i.Metadata.With(MetaStatus, "NORMAL") }), false},
		{"down is not draining", with(base, func(i *heureka.Instance) { i.Status = heureka.StatusDown }), false},
	} {
		if got := IsDraining(tc.in); got != tc.want {
			t.Errorf("%s: IsDraining = %v, want %v", tc.name, got, tc.want)
		}
	}
}

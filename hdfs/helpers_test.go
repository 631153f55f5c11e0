package hdfs

import (
	"strconv"
	"testing"

	"github.com/heureka-project/heureka"
)

// dn returns an UP DataNode instance on rack with used/total bytes; total 0
// leaves the capacity unknown.
func dn(id, rack string, used, total int64) *heureka.Instance {
	md := map[string]string{MetaRack: rack}
	if total > 0 {
		md[MetaDiskUsed] = strconv.FormatInt(used, 10)
		md[MetaDiskTotal] = strconv.FormatInt(total, 10)
	}
	return &heureka.Instance{
		ID:       id,
		App:      "HDFS-DATANODE.TEST",
		HostName: id + ".example.net",
		IPAddr:   "10.0.0." + strconv.Itoa(len(id)+int(id[len(id)-1])%200),
		Status:   heureka.StatusUp,
		Metadata: heureka.MetadataOf(md),
	}
}

// with returns a copy of in changed by f.
func with(in *heureka.Instance, f func(*heureka.Instance)) *heureka.Instance {
	c := in.Clone()
	f(c)
	return c
}

// nn returns an UP NameNode instance in HA state ha (none if "") that last
// changed state at when (ms).
func nn(id, ha string, when int64, rpcPort int) *heureka.Instance {
	md := map[string]string{}
	if ha != "" {
		md[MetaHAState] = ha
	}
	if when != 0 {
		md[MetaHATransitionTime] = strconv.FormatInt(when, 10)
	}
	if rpcPort != 0 {
		md[MetaRPCPort] = strconv.Itoa(rpcPort)
	}
	return &heureka.Instance{
		ID:       id,
		App:      "HDFS-NAMENODE.TEST",
		HostName: id + ".example.net",
		IPAddr:   "10.1.0." + strconv.Itoa(int(id[len(id)-1])%200),
		Status:   heureka.StatusUp,
		Metadata: heureka.MetadataOf(md),
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := heureka.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func ids(ins []*heureka.Instance) []string {
	out := make([]string, len(ins))
	for i, in := range ins {
		out[i] = in.ID
	}
	return out
}

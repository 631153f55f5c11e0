package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

// runCLI runs one command line in-process as main would, and returns its
// exit code and what it printed.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// testDataNode is a DataNode registration with HDFS metadata.
func testDataNode(host, rack string, usedPct, blocks int64, lease int) *heureka.Instance {
	const total = 1 << 40
	return &heureka.Instance{
		ID:       hdfs.InstanceID("prod", host, rack),
		App:      strings.ToUpper(hdfs.AppName(hdfs.RoleDataNode, "prod")),
		HostName: host,
		IPAddr:   "10.1.0.1",
		Status:   heureka.StatusUp,
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 1, DurationSecs: lease},
		Metadata: hdfs.NodeInfo{Rack: rack, DiskUsed: total * usedPct / 100, DiskTotal: total,
			BlockCount: blocks, Version: "3.3.6"}.WriteMetadata(heureka.Metadata{}),
	}
}

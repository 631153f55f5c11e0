package hdfs

import (
	"io"

	"github.com/heureka-project/heureka"
)

// TopologyLookup answers Hadoop's topology-script protocol
// (net.topology.script.file.name): for each argument, a host name or IP
// address, it writes that node's rack on a line of its own, in argument
// order, exactly one line per argument, DefaultRack for a node it does not
// know. Hadoop splits the output on whitespace and rejects the whole batch
// if the count is wrong, so a rack is always one token (NormalizeRack).
//
// nodes are the registered DataNodes and NameNodes; an argument matches a
// node's host name (any case) or IP address. When several instances match,
// an UP one wins over others, then the most recently updated one. Status
// does not otherwise matter: a node's rack does not change when it goes
// down. The only error is w's.
func TopologyLookup(w io.Writer, args []string, nodes []*heureka.Instance) error {
	racks, _ := TopologyRacks(args, nodes)
	return WriteRacks(w, racks)
}

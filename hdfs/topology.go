package hdfs

import (
	"bufio"
	"io"
	"strings"

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
	type entry struct {
		in   *heureka.Instance
		rack string
	}
	better := func(a, b *heureka.Instance) bool { // a preferred over b
		if (a.Status == heureka.StatusUp) != (b.Status == heureka.StatusUp) {
			return a.Status == heureka.StatusUp
		}
		if a.LastUpdatedTimestamp != b.LastUpdatedTimestamp {
			return a.LastUpdatedTimestamp > b.LastUpdatedTimestamp
		}
		return a.ID < b.ID
	}
	idx := map[string]entry{}
	add := func(key string, in *heureka.Instance) {
		if key == "" {
			return
		}
		if e, ok := idx[key]; ok && !better(in, e.in) {
			return
		}
		idx[key] = entry{in, NormalizeRack(in.Metadata[MetaRack])}
	}
	for _, in := range nodes {
		if in == nil {
			continue
		}
		add("h:"+strings.ToLower(strings.TrimSpace(in.HostName)), in)
		add("i:"+strings.TrimSpace(in.IPAddr), in)
	}
	bw := bufio.NewWriter(w)
	for _, a := range args {
		a = strings.TrimSpace(a)
		rack := DefaultRack
		if e, ok := idx["i:"+a]; ok && a != "" {
			rack = e.rack
		} else if e, ok := idx["h:"+strings.ToLower(a)]; ok && a != "" {
			rack = e.rack
		}
		bw.WriteString(rack)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

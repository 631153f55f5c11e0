package hdfs

import (
	"io"
	"slices"
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
	racks, _ := TopologyRacks(args, nodes)
	return WriteRacks(w, racks)
}

// RackSource says where AnswerRacks found its answer.
type RackSource int

const (
	// RacksFromRegistry: the registry's nodes matched at least one host;
	// every host gets its rack from them (DefaultRack when unmatched).
	RacksFromRegistry RackSource = iota
	// RacksFromMemory: the nodes matched none, and the memory knew at
	// least one host.
	RacksFromMemory
	// RacksDefault: neither knew any host; every one is DefaultRack.
	RacksDefault
)

// AnswerRacks is the topology script's policy between the registry and
// the memory of its earlier answers. nodes are the registry's HDFS
// instances among hosts (nil when it could not be read), mem the memory
// (nil when there is none).
//
// When nodes match any host, they answer, and mem learns their racks under
// every key a matched node carries, its host name and its IP address,
// since Hadoop calls the script with either, and a node first asked by one
// may be asked by the other once the registry is down (learnt says mem
// changed, so its owner can store it). When they match none, the registry
// may have just restarted and not heard from its agents yet, so mem
// answers if it knows any host. Otherwise every host is DefaultRack.
func AnswerRacks(hosts []string, nodes []*heureka.Instance, mem *RackMemory) (racks []string, src RackSource, learnt bool) {
	racks, by := matchRacks(hosts, nodes)
	if slices.ContainsFunc(by, func(in *heureka.Instance) bool { return in != nil }) {
		for i, in := range by {
			if in == nil || mem == nil {
				continue
			}
			for _, k := range []string{in.HostName, in.IPAddr} {
				if strings.TrimSpace(k) != "" && mem.Learn(k, racks[i]) {
					learnt = true
				}
			}
		}
		return racks, RacksFromRegistry, learnt
	}
	if mem != nil && mem.Len() > 0 {
		out, hit := make([]string, len(hosts)), false
		for i, h := range hosts {
			r, ok := mem.Rack(h)
			if !ok {
				r = DefaultRack
			}
			out[i], hit = r, hit || ok
		}
		if hit {
			return out, RacksFromMemory, false
		}
	}
	return racks, RacksDefault, false
}

package hdfs

import (
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
)

// NameNodeJMX is what heureka reads from a NameNode's /jmx. Capacities are
// bytes and cluster-wide.
type NameNodeJMX struct {
	// HAState is NameNodeStatus.State, else FSNamesystem's tag.HAState, else
	// "". An unrecognised value is kept lower-cased (see ParseHAState).
	HAState HAState
	// FSNamesystemHAState is tag.HAState as reported, for cross-checks.
	FSNamesystemHAState HAState
	// LastHATransitionTime is ms since the epoch of the last HA state
	// change (NameNodeStatus); 0 for a non-HA NameNode or when unknown.
	LastHATransitionTime int64
	HostAndPort          string // NameNodeStatus.HostAndPort, the client RPC endpoint
	RPCPort              int    // the port of HostAndPort
	Hostname             string // FSNamesystem tag.Hostname
	SecurityEnabled      bool

	Version     string // NameNodeInfo.SoftwareVersion, else Version up to the comma
	ClusterID   string
	BlockPoolID string

	// From FSNamesystemState, else FSNamesystem, else NameNodeInfo
	// (Total/Used/Free); valid only when CapacityKnown.
	CapacityKnown     bool
	CapacityTotal     int64
	CapacityUsed      int64
	CapacityRemaining int64

	BlocksTotalKnown bool
	BlocksTotal      int64
	FilesTotal       int64

	// From FSNamesystemState, else FSNamesystem (3.x), else counted from
	// NameNodeInfo's LiveNodes/DeadNodes; valid only when
	// DataNodeCountsKnown.
	DataNodeCountsKnown      bool
	LiveDataNodes            int64
	DeadDataNodes            int64
	DecommissioningDataNodes int64
	StaleDataNodes           int64

	FSState  string // FSNamesystemState.FSState: "Operational" or "safeMode"
	Safemode string // NameNodeInfo.Safemode: "" when off, else Hadoop's explanation

	// NameNodeInfo's JSON-in-string attributes, decoded. LiveNodes and
	// DeadNodes are keyed "<host>:<xferPort>" as Hadoop keys them.
	LiveNodes      map[string]LiveNode
	DeadNodes      map[string]DeadNode
	DecomNodes     []string          // keys of DecomNodes, sorted
	NameDirs       map[string]string // active name directories → type (IMAGE_AND_EDITS, ...)
	FailedNameDirs map[string]string
}

// LiveNode is a NameNodeInfo.LiveNodes entry: one DataNode as the NameNode
// sees it. Sizes are bytes.
type LiveNode struct {
	InfoAddr    string // DataNode HTTP "ip:port"
	XferAddr    string // data transfer "ip:port"
	LastContact int64  // seconds since the last heartbeat
	// AdminState is parsed from Hadoop's display string ("In Service");
	// "" when unrecognised.
	AdminState      AdminState
	Capacity        int64
	Used            int64
	NonDfsUsed      int64
	Remaining       int64
	NumBlocks       int64 // -1 when served by an RBF Router, which does not know
	BlockScheduled  int64
	VolumeFailures  int64
	Version         string
	LastBlockReport int64 // minutes since the last block report
}

// DeadNode is a NameNodeInfo.DeadNodes entry.
type DeadNode struct {
	LastContact    int64 // seconds
	Decommissioned bool
	AdminState     AdminState // newer Hadoop only
	XferAddr       string     // newer Hadoop only
}

// ParseNameNodeJMX reads a NameNode's /jmx or /jmx?qry=... response. It
// needs one of the NameNodeStatus, FSNamesystem, FSNamesystemState or
// NameNodeInfo beans and reads whatever is there; missing attributes leave
// zero fields (see the Known flags). Bare NaN/Infinity tokens are tolerated.
// Errors as for ParseDataNodeJMX.
func ParseNameNodeJMX(r io.Reader) (NameNodeJMX, error) {
	var n NameNodeJMX
	beans, err := readBeans(r)
	if err != nil {
		return n, err
	}
	idx := indexBeans(beans, "NameNode")
	status, fsn, fss, info := idx["NameNodeStatus"], idx["FSNamesystem"], idx["FSNamesystemState"], idx["NameNodeInfo"]
	if status == nil && fsn == nil && fss == nil && info == nil {
		return n, heureka.Errorf(heureka.ENOTFOUND, "jmx response has no NameNode bean (NameNodeStatus, FSNamesystem, FSNamesystemState or NameNodeInfo) among %d beans", len(beans))
	}

	if fsn != nil {
		if s, ok := fsn.str("tag.HAState"); ok {
			n.FSNamesystemHAState = haStateOf(s)
		}
		n.Hostname, _ = fsn.str("tag.Hostname")
	}
	n.HAState = n.FSNamesystemHAState
	if status != nil {
		if s, ok := status.str("State"); ok && strings.TrimSpace(s) != "" {
			n.HAState = haStateOf(s)
		}
		if v, ok := status.int("LastHATransitionTime"); ok && v > 0 {
			n.LastHATransitionTime = v
		}
		n.HostAndPort, _ = status.str("HostAndPort")
		n.RPCPort = portOf(n.HostAndPort)
		n.SecurityEnabled, _ = status.bool("SecurityEnabled")
	}

	// Capacity, blocks and DataNode counts: the first bean that has them.
	for _, src := range []attrs{fss, fsn} {
		if src == nil {
			continue
		}
		n.readCapacity(src, "CapacityTotal", "CapacityUsed", "CapacityRemaining")
		if !n.BlocksTotalKnown {
			n.BlocksTotal, n.BlocksTotalKnown = src.int("BlocksTotal")
			n.FilesTotal, _ = src.int("FilesTotal")
		}
		if !n.DataNodeCountsKnown {
			if v, ok := src.int("NumLiveDataNodes"); ok {
				n.DataNodeCountsKnown, n.LiveDataNodes = true, v
				n.DeadDataNodes, _ = src.int("NumDeadDataNodes")
				n.DecommissioningDataNodes, _ = src.int("NumDecommissioningDataNodes")
				if v, ok := src.int("NumStaleDataNodes"); ok {
					n.StaleDataNodes = v
				} else {
					n.StaleDataNodes, _ = src.int("StaleDataNodes")
				}
			}
		}
	}
	if fss != nil {
		n.FSState, _ = fss.str("FSState")
	}

	if info != nil {
		n.readInfo(info)
	}
	return n, nil
}

func haStateOf(s string) HAState {
	if st, ok := ParseHAState(s); ok {
		return st
	}
	return HAState(strings.ToLower(strings.TrimSpace(s)))
}

// readCapacity takes the capacity from src's total, used and free
// attributes, unless an earlier bean gave it.
func (n *NameNodeJMX) readCapacity(src attrs, total, used, free string) {
	if n.CapacityKnown {
		return
	}
	if v, ok := src.int(total); ok {
		n.CapacityKnown, n.CapacityTotal = true, v
		n.CapacityUsed, _ = src.int(used)
		n.CapacityRemaining, _ = src.int(free)
	}
}

// readInfo reads the NameNodeInfo bean.
func (n *NameNodeJMX) readInfo(info attrs) {
	n.Version = versionOf(info)
	n.ClusterID, _ = info.str("ClusterId")
	n.BlockPoolID, _ = info.str("BlockPoolId")
	n.Safemode, _ = info.str("Safemode")
	n.readCapacity(info, "Total", "Used", "Free")
	if !n.BlocksTotalKnown {
		n.BlocksTotal, n.BlocksTotalKnown = info.int("TotalBlocks")
	}

	n.LiveNodes = nodesOf(info, "LiveNodes", liveNodeOf)
	n.DeadNodes = nodesOf(info, "DeadNodes", deadNodeOf)
	var decom map[string]any
	if info.decode("DecomNodes", &decom) {
		for k := range decom {
			n.DecomNodes = append(n.DecomNodes, k)
		}
		sort.Strings(n.DecomNodes)
	}
	var dirs map[string]map[string]any
	if info.decode("NameDirStatuses", &dirs) {
		n.NameDirs = stringMap(dirs["active"])
		n.FailedNameDirs = stringMap(dirs["failed"])
	}
	if !n.DataNodeCountsKnown && (n.LiveNodes != nil || n.DeadNodes != nil) {
		n.DataNodeCountsKnown = true
		n.LiveDataNodes, n.DeadDataNodes = int64(len(n.LiveNodes)), int64(len(n.DeadNodes))
		n.DecommissioningDataNodes = int64(len(n.DecomNodes))
	}
}

// nodesOf decodes the bean attribute key, a JSON object of DataNode name to
// attributes, reading each node with read; nil when it is absent.
func nodesOf[T any](info attrs, key string, read func(attrs) T) map[string]T {
	var nodes map[string]attrs
	if !info.decode(key, &nodes) {
		return nil
	}
	out := make(map[string]T, len(nodes))
	for k, a := range nodes {
		out[k] = read(a)
	}
	return out
}

// liveNodeOf reads one entry of NameNodeInfo's LiveNodes.
func liveNodeOf(a attrs) LiveNode {
	var ln LiveNode
	ln.InfoAddr, _ = a.str("infoAddr")
	ln.XferAddr, _ = a.str("xferaddr")
	ln.LastContact, _ = a.int("lastContact")
	if s, ok := a.str("adminState"); ok {
		ln.AdminState, _ = ParseAdminState(s)
	}
	ln.Capacity, _ = a.int("capacity")
	if v, ok := a.int("usedSpace"); ok {
		ln.Used = v
	} else {
		ln.Used, _ = a.int("used")
	}
	ln.NonDfsUsed, _ = a.int("nonDfsUsedSpace")
	ln.Remaining, _ = a.int("remaining")
	ln.NumBlocks, _ = a.int("numBlocks")
	ln.BlockScheduled, _ = a.int("blockScheduled")
	ln.VolumeFailures, _ = a.int("volfails")
	ln.Version, _ = a.str("version")
	ln.LastBlockReport, _ = a.int("lastBlockReport")
	return ln
}

// deadNodeOf reads one entry of NameNodeInfo's DeadNodes.
func deadNodeOf(a attrs) DeadNode {
	var dn DeadNode
	dn.LastContact, _ = a.int("lastContact")
	dn.Decommissioned, _ = a.bool("decommissioned")
	if s, ok := a.str("adminState"); ok {
		dn.AdminState, _ = ParseAdminState(s)
	}
	dn.XferAddr, _ = a.str("xferaddr")
	return dn
}

func stringMap(m map[string]any) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

// LiveNode returns the NameNode's view of the DataNode registered as
// host:xferPort (the key Hadoop uses; host as the DataNode names itself).
// This is where a Hadoop 2.x DataNode's block count comes from.
func (n NameNodeJMX) LiveNode(host string, xferPort int) (LiveNode, bool) {
	ln, ok := n.LiveNodes[host+":"+strconv.Itoa(xferPort)]
	return ln, ok
}

// NodeInfo returns the metadata n supports: ha_state, ha_transition_time,
// version, status (FSState), rpc_port and the cluster-wide disk_used,
// disk_total and block_count.
func (n NameNodeJMX) NodeInfo() NodeInfo {
	ni := NodeInfo{
		Version:          n.Version,
		Status:           n.FSState,
		HATransitionTime: n.LastHATransitionTime,
		RPCPort:          n.RPCPort,
	}
	if st, ok := ParseHAState(string(n.HAState)); ok {
		ni.HAState = st
	}
	if n.CapacityKnown {
		ni.DiskUsed, ni.DiskTotal = n.CapacityUsed, n.CapacityTotal
	}
	if n.BlocksTotalKnown {
		ni.BlockCount = n.BlocksTotal
	}
	return ni
}

package hdfs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
)

// Metadata keys heureka's HDFS agents register. Sizes are bytes and counts
// are plain numbers, all written as decimal strings. The keys every role
// shares are the root package's (heureka.MetaRack, ...); they are named
// here too so that HDFS code reads in one vocabulary.
const (
	MetaRack             = heureka.MetaRack     // network location, e.g. "/dc1/rack-a"
	MetaDiskUsed         = "disk_used"          // bytes used by HDFS (DfsUsed); NameNodes: cluster total
	MetaDiskTotal        = "disk_total"         // configured capacity in bytes; NameNodes: cluster total
	MetaBlockCount       = "block_count"        // blocks stored; NameNodes: blocks in the namespace
	MetaVersion          = heureka.MetaVersion  // Hadoop version, e.g. "3.3.0"
	MetaStatus           = "status"             // daemon-reported state, see NodeInfo.Status
	MetaHAState          = "ha_state"           // NameNodes: an HAState (also heureka.MetaRoleState)
	MetaHATransitionTime = "ha_transition_time" // NameNodes: ms since the epoch of the last HA change
	MetaDataPort         = "data_port"          // DataNodes: data-transfer port (dfs.datanode.address)
	MetaRPCPort          = "rpc_port"           // NameNode client RPC port; DataNode IPC port
	MetaDownCause        = heureka.MetaDownCause
	MetaProbeState       = heureka.MetaProbeState
	MetaHTTPPort         = "http_port"   // web port serving /jmx and /webhdfs/v1 (Hadoop 3: NameNode 9870, DataNode 9864)
	MetaNameservice      = "nameservice" // NameNodes: the nameservice ID Hadoop knows it by (dfs.nameservices)
	MetaNameNodeID       = "namenode_id" // NameNodes: its NameNode ID in that nameservice (dfs.ha.namenodes.<ns>), e.g. "nn1"
)

// ProbeStateHung is heureka.ProbeStateHung: MetaProbeState's value while a
// daemon accepts connections but does not answer (a long GC pause): it is
// still UP, and placement takes it last.
const ProbeStateHung = heureka.ProbeStateHung

// HAState is a NameNode's high-availability state as Hadoop reports it
// (HAServiceProtocol.HAServiceState, lower case).
type HAState string

const (
	HAActive       HAState = "active"
	HAStandby      HAState = "standby"
	HAObserver     HAState = "observer"
	HAInitializing HAState = "initializing"
	HAStopping     HAState = "stopping"
)

// ParseHAState reads an HA state in any case. ok is false for a value Hadoop
// does not define.
func ParseHAState(s string) (HAState, bool) {
	switch st := HAState(strings.ToLower(strings.TrimSpace(s))); st {
	case HAActive, HAStandby, HAObserver, HAInitializing, HAStopping:
		return st, true
	}
	return "", false
}

// AdminState is a DataNode's administrative state, named as in Hadoop's
// DatanodeAdminProperties (the JSON hosts file) and AdminStates enum.
type AdminState string

const (
	AdminNormal                 AdminState = "NORMAL"
	AdminDecommissionInProgress AdminState = "DECOMMISSION_INPROGRESS"
	AdminDecommissioned         AdminState = "DECOMMISSIONED"
	AdminEnteringMaintenance    AdminState = "ENTERING_MAINTENANCE"
	AdminInMaintenance          AdminState = "IN_MAINTENANCE"
)

// adminStateSeparators spells the separators of an admin state as the
// enum does; built once, as a Replacer is costly to build and safe to share.
var adminStateSeparators = strings.NewReplacer(" ", "_", "-", "_")

// ParseAdminState reads an admin state given as an enum name
// ("DECOMMISSION_INPROGRESS"), as the display string NameNode JMX uses
// ("Decommission In Progress", "In Service") or in a plain spelling
// ("decommissioning", "in-maintenance"); case, spaces and hyphens do not
// matter. ok is false for anything else.
func ParseAdminState(s string) (AdminState, bool) {
	k := adminStateSeparators.Replace(strings.ToUpper(strings.TrimSpace(s)))
	switch k {
	case "NORMAL", "IN_SERVICE":
		return AdminNormal, true
	case "DECOMMISSION_INPROGRESS", "DECOMMISSION_IN_PROGRESS", "DECOMMISSIONING":
		return AdminDecommissionInProgress, true
	case "DECOMMISSIONED":
		return AdminDecommissioned, true
	case "ENTERING_MAINTENANCE":
		return AdminEnteringMaintenance, true
	case "IN_MAINTENANCE", "MAINTENANCE":
		return AdminInMaintenance, true
	}
	return "", false
}

// Draining reports whether a DataNode in state a is leaving service
// (decommissioning, decommissioned or in maintenance): HDFS places no new
// replicas on it.
func (a AdminState) Draining() bool {
	switch a {
	case AdminDecommissionInProgress, AdminDecommissioned, AdminEnteringMaintenance, AdminInMaintenance:
		return true
	}
	return false
}

// IsDraining reports whether an instance should receive no new work: its
// status is OUT_OF_SERVICE (the agent's drain) or its metadata status is an
// AdminState that is Draining.
func IsDraining(in *heureka.Instance) bool {
	if in.Status == heureka.StatusOutOfService {
		return true
	}
	a, ok := ParseAdminState(in.Metadata.Get(MetaStatus))
	return ok && a.Draining()
}

// NodeInfo is the typed form of the HDFS metadata keys. A zero field means
// unknown or none and is not written; in particular DiskTotal 0 means the
// capacity is unknown.
type NodeInfo struct {
	Rack      string // network location; "" = not known (DefaultRack)
	DiskUsed  int64  // bytes
	DiskTotal int64  // bytes
	// BlockCount is the number of blocks stored (DataNodes) or in the
	// namespace (NameNodes).
	BlockCount int64
	Version    string
	// Status is the daemon's own view of itself: for DataNodes an AdminState
	// name (NORMAL, DECOMMISSION_INPROGRESS, ...), for NameNodes FSState
	// ("Operational", "safeMode").
	Status           string
	HAState          HAState // NameNodes only
	HATransitionTime int64   // ms since the epoch; 0 = never (non-HA)
	DataPort         int
	RPCPort          int
	// HTTPPort is the daemon's web port (/jmx, /webhdfs/v1): what a
	// WebHDFS client or gateway talks to.
	HTTPPort int
	// Nameservice and NameNodeID are a NameNode's identity in Hadoop's HA
	// configuration (see NameNodeIdentity); "" when not learnt. HDFSSiteHA
	// writes NameNodeID for this NameNode when it is a valid ID.
	Nameservice string
	NameNodeID  string
}

// WriteMetadata returns md with n stored under the Meta* keys. A zero or
// negative field removes its key, so writing a fresh NodeInfo over old
// metadata leaves no stale value behind. Other keys are kept.
func (n NodeInfo) WriteMetadata(md heureka.Metadata) heureka.Metadata {
	var set, drop []string
	setStr := func(k, v string) {
		if v = strings.TrimSpace(v); v != "" {
			set = append(set, k, v)
		} else {
			drop = append(drop, k)
		}
	}
	setInt := func(k string, v int64) {
		if v > 0 {
			set = append(set, k, strconv.FormatInt(v, 10))
		} else {
			drop = append(drop, k)
		}
	}
	setStr(MetaRack, n.Rack)
	setInt(MetaDiskUsed, n.DiskUsed)
	setInt(MetaDiskTotal, n.DiskTotal)
	setInt(MetaBlockCount, n.BlockCount)
	setStr(MetaVersion, n.Version)
	setStr(MetaStatus, n.Status)
	setStr(MetaHAState, string(n.HAState))
	setInt(MetaHATransitionTime, n.HATransitionTime)
	setInt(MetaDataPort, int64(n.DataPort))
	setInt(MetaRPCPort, int64(n.RPCPort))
	setInt(MetaHTTPPort, int64(n.HTTPPort))
	setStr(MetaNameservice, n.Nameservice)
	setStr(MetaNameNodeID, n.NameNodeID)
	return md.Without(drop...).With(set...)
}

// ReadNodeInfo reads the Meta* keys from md. It is tolerant: a missing key
// leaves its field zero, and so does a value that cannot be read, but then
// the returned EINVALID error names every such key and value. The NodeInfo
// is usable either way.
func ReadNodeInfo(md heureka.Metadata) (NodeInfo, error) {
	var n NodeInfo
	var bad []string
	getInt := func(k string, max int64) int64 {
		s, ok := md.Lookup(k)
		if !ok {
			return 0
		}
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v < 0 || v > max {
			bad = append(bad, fmt.Sprintf("%s=%q is not an integer in 0-%d", k, s, max))
			return 0
		}
		return v
	}
	n.Rack = strings.TrimSpace(md.Get(MetaRack))
	n.DiskUsed = getInt(MetaDiskUsed, 1<<63-1)
	n.DiskTotal = getInt(MetaDiskTotal, 1<<63-1)
	n.BlockCount = getInt(MetaBlockCount, 1<<63-1)
	n.Version = strings.TrimSpace(md.Get(MetaVersion))
	n.Status = strings.TrimSpace(md.Get(MetaStatus))
	if s, ok := md.Lookup(MetaHAState); ok {
		if st, ok := ParseHAState(s); ok {
			n.HAState = st
		} else {
			bad = append(bad, fmt.Sprintf("%s=%q is not one of active, standby, observer, initializing, stopping", MetaHAState, s))
		}
	}
	n.HATransitionTime = getInt(MetaHATransitionTime, 1<<63-1)
	n.DataPort = int(getInt(MetaDataPort, 65535))
	n.RPCPort = int(getInt(MetaRPCPort, 65535))
	n.HTTPPort = int(getInt(MetaHTTPPort, 65535))
	for _, kv := range []struct {
		key string
		dst *string
	}{{MetaNameservice, &n.Nameservice}, {MetaNameNodeID, &n.NameNodeID}} {
		if s, ok := md.Lookup(kv.key); ok {
			if v := strings.TrimSpace(s); ValidHAID(v) {
				*kv.dst = v
			} else {
				bad = append(bad, fmt.Sprintf("%s=%q is not an ID of 1-%d letters, digits, '-' or '_'", kv.key, s, maxHAIDLen))
			}
		}
	}
	if len(bad) > 0 {
		return n, heureka.Errorf(heureka.EINVALID, "hdfs metadata: %s", strings.Join(bad, "; "))
	}
	return n, nil
}

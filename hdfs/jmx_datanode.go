package hdfs

import (
	"io"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
)

// DataNodeJMX is what heureka reads from a DataNode's /jmx. Sizes are bytes.
type DataNodeJMX struct {
	Hostname  string // DataNodeInfo.DatanodeHostname (3.x), else FSDatasetState tag.Hostname
	Version   string // e.g. "3.3.0" or "2.7.3.2.6.1.0-129"
	ClusterID string // e.g. "CID-c2a67db1-..."

	// Capacity, DfsUsed and Remaining come from the FSDatasetState bean (the
	// metrics2 one, else the FSDatasetState-<uuid> MBean) and are valid only
	// when CapacityKnown. Non-DFS use is Capacity - DfsUsed - Remaining.
	CapacityKnown    bool
	Capacity         int64
	DfsUsed          int64
	Remaining        int64
	NumFailedVolumes int64

	// BlockCount is the sum of numBlocks over VolumeInfo, which Hadoop 3
	// reports and 2.7 does not; it is valid only when BlockCountKnown. For a
	// 2.x DataNode take the count from the NameNode (NameNodeJMX.LiveNode).
	BlockCountKnown bool
	BlockCount      int64

	DataPort int // data-transfer port (DataNodeInfo.DataPort)
	RPCPort  int // IPC port (DataNodeInfo.RpcPort)

	Volumes   []Volume     // DataNodeInfo.VolumeInfo, by path
	NameNodes []DNNameNode // the NameNodes this DataNode reports to, by address
}

// Volume is one DataNode storage directory (DataNodeInfo.VolumeInfo).
type Volume struct {
	Path                string
	StorageType         string // "DISK", "SSD", ...; 3.x only
	UsedSpace           int64
	FreeSpace           int64
	ReservedSpace       int64
	ReservedForReplicas int64 // 3.x only
	NumBlocks           int64 // valid only when NumBlocksKnown (3.x)
	NumBlocksKnown      bool
}

// DNNameNode is a NameNode as one of its DataNodes sees it
// (DataNodeInfo.BPServiceActorInfo, else NamenodeAddresses).
type DNNameNode struct {
	Address     string  // "host:port" from BPServiceActorInfo, else the host from NamenodeAddresses
	BlockPoolID string  // e.g. "BP-731198073-10.0.1.3-1602066929550"
	ActorState  string  // e.g. "RUNNING"; "" when only NamenodeAddresses was given
	HAState     HAState // the DataNode's view (newer Hadoop only), else ""
}

// ParseDataNodeJMX reads a DataNode's /jmx or /jmx?qry=... response. It
// needs the DataNodeInfo bean or an FSDatasetState bean and reads whatever
// else is there; missing attributes leave zero fields (see the Known flags).
// Bare NaN/Infinity tokens are tolerated. Errors: EINVALID for a body that is
// not a /jmx answer, ENOTFOUND when it holds no DataNode bean, ETOOLARGE past
// MaxJMXBytes.
func ParseDataNodeJMX(r io.Reader) (DataNodeJMX, error) {
	var d DataNodeJMX
	beans, err := readBeans(r)
	if err != nil {
		return d, err
	}
	idx := indexBeans(beans, "DataNode")
	info := idx["DataNodeInfo"]
	ds := idx.withPrefix("FSDatasetState")
	if info == nil && ds == nil {
		return d, heureka.Errorf(heureka.ENOTFOUND, "jmx response has no DataNode bean (DataNodeInfo or FSDatasetState) among %d beans", len(beans))
	}

	if ds != nil {
		if v, ok := ds.int("Capacity"); ok && v >= 0 {
			d.CapacityKnown = true
			d.Capacity = v
			d.DfsUsed, _ = ds.int("DfsUsed")
			d.Remaining, _ = ds.int("Remaining")
		}
		d.NumFailedVolumes, _ = ds.int("NumFailedVolumes")
		d.Hostname, _ = ds.str("tag.Hostname")
	}
	if info == nil {
		return d, nil
	}
	if h, ok := info.str("DatanodeHostname"); ok && h != "" {
		d.Hostname = h
	}
	d.Version = versionOf(info)
	d.ClusterID, _ = info.str("ClusterId")
	d.DataPort = portAttr(info, "DataPort")
	d.RPCPort = portAttr(info, "RpcPort")

	var vols map[string]attrs
	if info.decode("VolumeInfo", &vols) {
		known := len(vols) > 0
		for path, va := range vols {
			v := Volume{Path: path}
			v.StorageType, _ = va.str("storageType")
			v.UsedSpace, _ = va.int("usedSpace")
			v.FreeSpace, _ = va.int("freeSpace")
			v.ReservedSpace, _ = va.int("reservedSpace")
			v.ReservedForReplicas, _ = va.int("reservedSpaceForReplicas")
			v.NumBlocks, v.NumBlocksKnown = va.int("numBlocks")
			if v.NumBlocks < 0 {
				v.NumBlocks, v.NumBlocksKnown = 0, false
			}
			known = known && v.NumBlocksKnown
			if d.BlockCount > 1<<63-1-v.NumBlocks {
				known = false // a sum past int64 is no count
			} else {
				d.BlockCount += v.NumBlocks
			}
			d.Volumes = append(d.Volumes, v)
		}
		sort.Slice(d.Volumes, func(i, j int) bool { return d.Volumes[i].Path < d.Volumes[j].Path })
		d.BlockCountKnown = known
		if !known {
			d.BlockCount = 0
		}
	}

	var actors []attrs
	if info.decode("BPServiceActorInfo", &actors) {
		for _, a := range actors {
			if a == nil {
				continue
			}
			nn := DNNameNode{}
			nn.Address, _ = a.str("NamenodeAddress")
			nn.BlockPoolID, _ = a.str("BlockPoolID")
			nn.ActorState, _ = a.str("ActorState")
			if s, ok := a.str("NamenodeHaState"); ok {
				nn.HAState, _ = ParseHAState(s)
			}
			d.NameNodes = append(d.NameNodes, nn)
		}
	}
	var addrs map[string]any
	if len(d.NameNodes) == 0 && info.decode("NamenodeAddresses", &addrs) {
		for host, bp := range addrs {
			s, _ := bp.(string)
			d.NameNodes = append(d.NameNodes, DNNameNode{Address: host, BlockPoolID: s})
		}
	}
	sort.Slice(d.NameNodes, func(i, j int) bool { return d.NameNodes[i].Address < d.NameNodes[j].Address })
	return d, nil
}

// portAttr reads a port attribute, given by Hadoop as a string ("9866") or a
// number; anything outside 1-65535 gives 0.
func portAttr(a attrs, key string) int {
	v, ok := a.int(key)
	if !ok || v < 1 || v > 65535 {
		return 0
	}
	return int(v)
}

// portOf returns the port of "host:port", or 0.
func portOf(hostPort string) int {
	_, p, err := net.SplitHostPort(strings.TrimSpace(hostPort))
	if err != nil {
		return 0
	}
	v, err := strconv.Atoi(p)
	if err != nil || v < 1 || v > 65535 {
		return 0
	}
	return v
}

// NodeInfo returns the metadata d supports: disk_used (DfsUsed), disk_total
// (Capacity), block_count, version and ports. Rack and status are not in a
// DataNode's JMX; set them from the topology and the NameNode.
func (d DataNodeJMX) NodeInfo() NodeInfo {
	n := NodeInfo{Version: d.Version, DataPort: d.DataPort, RPCPort: d.RPCPort}
	if d.CapacityKnown {
		n.DiskUsed, n.DiskTotal = d.DfsUsed, d.Capacity
	}
	if d.BlockCountKnown {
		n.BlockCount = d.BlockCount
	}
	return n
}

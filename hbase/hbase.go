package hbase

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/fetch"
	"github.com/heureka-project/heureka/jmxjson"
)

// Beans and endpoints (MetricsMasterSource, MetricsRegionServerSource).
const (
	MasterBean       = "Hadoop:service=HBase,name=Master,sub=Server"
	RegionServerBean = "Hadoop:service=HBase,name=RegionServer,sub=Server"
	MasterPath       = "/jmx?qry=" + MasterBean
	RegionServerPath = "/jmx?qry=" + RegionServerBean
	// MaxAnswerBytes bounds each answer. One bean is a few kilobytes; the
	// master's live-server tag grows by ~40 bytes a RegionServer.
	MaxAnswerBytes = 4 << 20
)

// Role states.
const (
	RoleActive  = "active"
	RoleBackup  = "backup"
	RoleServing = "serving"
)

// Master is what heureka reads from a master's Server bean.
type Master struct {
	ServerName string // tag.serverName, "host,port,startcode"
	ClusterID  string // tag.clusterId
	Active     bool   // tag.isActiveMaster
	// On the active master: the RegionServers it counts live and dead
	// (tag.liveRegionServers / tag.deadRegionServers, server names).
	NumRegionServers, NumDeadRegionServers int64
	LiveRegionServers, DeadRegionServers   []string
	ZooKeeperQuorum                        string
}

// RegionServer is what heureka reads from a RegionServer's Server bean.
type RegionServer struct {
	ServerName     string
	ClusterID      string
	RegionCount    int64
	StoreFileCount int64
	StoreFileSize  int64 // bytes
}

// bean finds the bean named name in a /jmx answer.
func bean(path string, b []byte, name string) (map[string]json.RawMessage, error) {
	var v struct {
		Beans []map[string]json.RawMessage `json:"beans"`
	}
	if err := json.Unmarshal(jmxjson.Sanitize(b), &v); err != nil {
		return nil, heureka.Errorf(heureka.EINVALID, "%s: the answer is not /jmx JSON: %v (starts %s)", path, err, fetch.Excerpt(b))
	}
	for _, bn := range v.Beans {
		var n string
		if json.Unmarshal(bn["name"], &n) == nil && n == name {
			return bn, nil
		}
	}
	return nil, heureka.Errorf(heureka.ENOTFOUND, "%s: the answer has no %s bean among %d (is this the right daemon?)", path, name, len(v.Beans))
}

func str(a map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(a[k], &s)
	return s
}

func num(a map[string]json.RawMessage, k string) int64 {
	var f float64
	if json.Unmarshal(a[k], &f) != nil || f < 0 || f > 1<<53 {
		return 0
	}
	return int64(f)
}

func servers(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ParseMaster reads a master's /jmx answer.
func ParseMaster(b []byte) (Master, error) {
	a, err := bean(MasterPath, b, MasterBean)
	if err != nil {
		return Master{}, err
	}
	m := Master{ServerName: str(a, "tag.serverName"), ClusterID: str(a, "tag.clusterId"), ZooKeeperQuorum: str(a, "tag.zookeeperQuorum")}
	switch str(a, "tag.isActiveMaster") {
	case "true":
		m.Active = true
	case "false":
	default:
		return Master{}, heureka.Errorf(heureka.EINVALID, "%s: tag.isActiveMaster is %s, not \"true\" or \"false\"", MasterPath, fetch.Excerpt(a["tag.isActiveMaster"]))
	}
	if m.ServerName == "" || m.ClusterID == "" {
		return Master{}, heureka.Errorf(heureka.EINVALID, "%s: the bean has no tag.serverName or tag.clusterId", MasterPath)
	}
	m.NumRegionServers, m.NumDeadRegionServers = num(a, "numRegionServers"), num(a, "numDeadRegionServers")
	m.LiveRegionServers, m.DeadRegionServers = servers(str(a, "tag.liveRegionServers")), servers(str(a, "tag.deadRegionServers"))
	return m, nil
}

// ParseRegionServer reads a RegionServer's /jmx answer.
func ParseRegionServer(b []byte) (RegionServer, error) {
	a, err := bean(RegionServerPath, b, RegionServerBean)
	if err != nil {
		return RegionServer{}, err
	}
	rs := RegionServer{ServerName: str(a, "tag.serverName"), ClusterID: str(a, "tag.clusterId"),
		RegionCount: num(a, "regionCount"), StoreFileCount: num(a, "storeFileCount"), StoreFileSize: num(a, "storeFileSize")}
	if rs.ServerName == "" || rs.ClusterID == "" {
		return RegionServer{}, heureka.Errorf(heureka.EINVALID, "%s: the bean has no tag.serverName or tag.clusterId", RegionServerPath)
	}
	return rs, nil
}

// Health says whether a master can do its part: every master that answers
// its Server bean is running (a backup waits in ZooKeeper to take over),
// so a master is healthy; an active master that counts no live
// RegionServer is healthy too, but its cluster serves nothing (see
// NumRegionServers).
func (m Master) Health() (bool, string) { return true, "" }

// RoleState is "active" or "backup".
func (m Master) RoleState() string {
	if m.Active {
		return RoleActive
	}
	return RoleBackup
}

// Health says whether the RegionServer serves its regions, given the
// active master's view (nil when unknown): a RegionServer the active
// master counts dead is not serving, whatever it says itself (its
// regions are being reassigned; it is a zombie that has lost its
// ZooKeeper session).
// Names are compared whole, start code included: a restarted
// RegionServer is a new server to HBase.
func (rs RegionServer) Health(active *Master) (bool, string) {
	if active == nil {
		return true, ""
	}
	for _, d := range active.DeadRegionServers {
		if d == rs.ServerName {
			return false, "the active hbase master counts regionserver " + rs.ServerName + " dead"
		}
	}
	return true, ""
}

// RoleState is "serving".
func (rs RegionServer) RoleState() string { return RoleServing }

func read(ctx context.Context, c *http.Client, baseURL, path string) ([]byte, string, error) {
	base := strings.TrimRight(baseURL, "/")
	b, err := fetch.Get(ctx, c, base+path, "application/json", MaxAnswerBytes)
	return b, base, err
}

func conflict(base, what, got, want string) error {
	return heureka.Errorf(heureka.ECONFLICT, "%s: the %s belongs to cluster %q (tag.clusterId), not %q: not registering it", base, what, got, want)
}

// ReadMaster asks the master at baseURL (its info port, e.g.
// "http://hm1:16010") for its Server bean. A cluster id other than
// wantClusterID (when not "") is an ECONFLICT error.
func ReadMaster(ctx context.Context, c *http.Client, baseURL, wantClusterID string) (Master, error) {
	b, base, err := read(ctx, c, baseURL, MasterPath)
	if err != nil {
		return Master{}, err
	}
	m, err := ParseMaster(b)
	if err != nil {
		return Master{}, heureka.Errorf(heureka.ErrorCode(err), "%s: %v", base, err)
	}
	if wantClusterID != "" && m.ClusterID != wantClusterID {
		return Master{}, conflict(base, "hbase master", m.ClusterID, wantClusterID)
	}
	return m, nil
}

// ReadRegionServer asks the RegionServer at baseURL (e.g.
// "http://rs1:16030") for its Server bean, as ReadMaster does.
func ReadRegionServer(ctx context.Context, c *http.Client, baseURL, wantClusterID string) (RegionServer, error) {
	b, base, err := read(ctx, c, baseURL, RegionServerPath)
	if err != nil {
		return RegionServer{}, err
	}
	rs, err := ParseRegionServer(b)
	if err != nil {
		return RegionServer{}, heureka.Errorf(heureka.ErrorCode(err), "%s: %v", base, err)
	}
	if wantClusterID != "" && rs.ClusterID != wantClusterID {
		return RegionServer{}, conflict(base, "hbase regionserver", rs.ClusterID, wantClusterID)
	}
	return rs, nil
}

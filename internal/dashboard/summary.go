package dashboard

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/accept"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/roles"
)

// SummaryPath is where internal/httpapi mounts ServeSummary.
const SummaryPath = "/v1/dashboard/summary"

// Summary is the body of GET /v1/dashboard/summary: everything the page
// draws on its first paint, in columns rather than Eureka records, so that
// 20,000 DataNodes cost 1.9 MB of JSON (140 KB gzipped) instead of the
// 18 MB of eureka/apps. An instance's full record is fetched on demand from
// eureka/apps/{app}/{id}.
type Summary struct {
	// Version is the registry version the summary reflects; the page follows
	// GET /v1/events?since=Version from it.
	Version uint64 `json:"version"`
	// Instances is the total over all applications.
	Instances int `json:"instances"`
	// HDFS names the metadata keys and limits the page reads from event
	// payloads, so that the script names none of them itself.
	HDFS HDFSFacts `json:"hdfs"`
	// Roles are the roles heureka knows (roles.All): the page tells a role
	// application (ROLE.CLUSTER) by its name, groups a system's roles into
	// one cluster, and marks the member whose role state leads.
	Roles []roles.Role `json:"roles"`
	// RoleStateKey is the metadata key of a member's role state, which the
	// page reads from event payloads.
	RoleStateKey string `json:"roleStateKey"`
	// Apps are every application, by name.
	Apps []*AppSummary `json:"apps"`
}

// HDFSFacts are the HDFS conventions of package hdfs, for the page.
type HDFSFacts struct {
	RackKey        string  `json:"rackKey"`
	UsedKey        string  `json:"usedKey"`
	TotalKey       string  `json:"totalKey"`
	HAKey          string  `json:"haKey"`
	AdminKey       string  `json:"adminKey"`
	DefaultRack    string  `json:"defaultRack"`
	NormalAdmin    string  `json:"normalAdmin"`
	FullPercent    float64 `json:"fullPercent"` // placement skips a DataNode above this
	DataNodePrefix string  `json:"dataNodePrefix"`
	NameNodePrefix string  `json:"nameNodePrefix"`
}

func hdfsFacts() HDFSFacts {
	return HDFSFacts{
		RackKey: hdfs.MetaRack, UsedKey: hdfs.MetaDiskUsed, TotalKey: hdfs.MetaDiskTotal,
		HAKey: hdfs.MetaHAState, AdminKey: hdfs.MetaStatus,
		DefaultRack: hdfs.DefaultRack, NormalAdmin: string(hdfs.AdminNormal),
		FullPercent:    hdfs.DefaultFullnessThreshold * 100,
		DataNodePrefix: strings.ToUpper(hdfs.AppPrefixDataNode),
		NameNodePrefix: strings.ToUpper(hdfs.AppPrefixNameNode),
	}
}

// AppSummary is one application. Its instances are columns of equal
// length, row i being one instance; rows are ordered by rack, then ID.
type AppSummary struct {
	Name string `json:"name"`
	// Role is "datanode" or "namenode" for an HDFS application, the role's
	// name (roles.Role.Name) for another role's application (ROLE.CLUSTER).
	Role    string `json:"role,omitempty"`
	Cluster string `json:"cluster,omitempty"` // the cluster, lower case
	// Counts are the instances by status.
	Counts map[heureka.Status]int `json:"counts"`
	// Racks are the distinct racks of the instances, sorted; Rack[i] indexes
	// them. An instance without a rack is on hdfs.DefaultRack.
	Racks []string `json:"racks"`
	// RackCounts[r] counts rack r's instances by status: the rack map's
	// rows.
	RackCounts []map[heureka.Status]int `json:"rackCounts"`

	ID      []string         `json:"id"`
	Host    []string         `json:"host"`
	Status  []heureka.Status `json:"status"`
	Rack    []int            `json:"rack"`
	Full    []int            `json:"full"`    // disk used per mille of capacity; -1 when unknown
	Note    []string         `json:"note"`    // NameNodes: HA state; DataNodes: admin state unless NORMAL; other roles: role state
	Changed []int64          `json:"changed"` // lastUpdatedTimestamp, ms since the epoch

	// Problems are the rows that are not UP or are over the fullness
	// threshold, in row order.
	Problems []int `json:"problems"`
}

// ServeSummary answers GET /v1/dashboard/summary from snap (gzipped when the
// client accepts it). The encoded summary is kept for snap's version, and
// each application's part for as long as that application is unchanged, so
// a reload of the page costs nothing new and a change re-encodes only the
// applications it touched.
func ServeSummary(w http.ResponseWriter, r *http.Request, snap *registry.Snapshot) error {
	plain, zipped, err := summaries.get(snap)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Heureka-Version", strconv.FormatUint(snap.Version, 10))
	body := plain
	if accept.Gzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = zipped
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}

// summaries is the process's summary cache. Entries are keyed by the
// snapshot and each application's blocks, which the registry never
// modifies.
var summaries summaryCache

type summaryCache struct {
	mu     sync.Mutex
	snap   *registry.Snapshot // the snapshot plain and zipped were made from
	plain  []byte
	zipped []byte
	apps   map[string]appPart // by application name
}

// appPart is one application's encoded summary and the blocks it was made
// from. It keeps the blocks, not the flat list of instances, which would
// keep a full copy of every instance alive for the collector to scan
// (registry.Snapshot.Apps).
type appPart struct {
	blocks []*registry.Block
	json   []byte
}

func (c *summaryCache) get(snap *registry.Snapshot) (plain, zipped []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == snap {
		return c.plain, c.zipped, nil
	}
	apps := snap.Blocks()
	parts := make(map[string]appPart, len(apps))
	var buf bytes.Buffer
	facts, _ := json.Marshal(hdfsFacts())
	known, _ := json.Marshal(roles.All())
	buf.WriteString(`{"version":` + strconv.FormatUint(snap.Version, 10) + `,"instances":` + strconv.Itoa(snap.Len()) + `,"hdfs":`)
	buf.Write(facts)
	buf.WriteString(`,"roles":`)
	buf.Write(known)
	buf.WriteString(`,"roleStateKey":"` + heureka.MetaRoleState + `","apps":[`)
	for i, a := range apps {
		p, ok := c.apps[a.Name]
		if !ok || !slices.Equal(p.blocks, a.Blocks) {
			app, _ := snap.App(a.Name)
			b, err := json.Marshal(summarize(app))
			if err != nil {
				return nil, nil, heureka.Errorf(heureka.EINTERNAL, "dashboard: encoding the summary of %s: %v", a.Name, err)
			}
			p = appPart{blocks: a.Blocks, json: b}
		}
		parts[a.Name] = p
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(p.json)
	}
	buf.WriteString("]}\n")
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	_, _ = zw.Write(buf.Bytes())
	_ = zw.Close()
	c.snap, c.plain, c.zipped, c.apps = snap, buf.Bytes(), z.Bytes(), parts
	return c.plain, c.zipped, nil
}

// summarize returns the summary of one application. It reads each
// instance's HDFS metadata with package hdfs; the cost is linear in the
// number of instances.
func summarize(a *heureka.Application) *AppSummary {
	n := len(a.Instances)
	s := &AppSummary{
		Name:    a.Name,
		Counts:  map[heureka.Status]int{},
		ID:      make([]string, n),
		Host:    make([]string, n),
		Status:  make([]heureka.Status, n),
		Rack:    make([]int, n),
		Full:    make([]int, n),
		Note:    make([]string, n),
		Changed: make([]int64, n),
	}
	role, cluster, isHDFS := hdfs.ParseAppName(a.Name)
	other, otherCluster, isRole := roles.Parse(a.Name)
	switch {
	case isHDFS:
		s.Role, s.Cluster = string(role), cluster
	case isRole:
		s.Role, s.Cluster = other.Name, otherCluster
	}

	// Racks, sorted, and each instance's.
	racks := make([]string, n)
	rackIndex := map[string]int{}
	infos := make([]hdfs.NodeInfo, n)
	for i, in := range a.Instances {
		info, _ := hdfs.ReadNodeInfo(in.Metadata) // tolerant: unreadable keys stay zero
		infos[i] = info
		racks[i] = info.Rack
		if racks[i] == "" {
			racks[i] = hdfs.DefaultRack
		}
		rackIndex[racks[i]] = 0
	}
	s.Racks = make([]string, 0, len(rackIndex))
	for r := range rackIndex {
		s.Racks = append(s.Racks, r)
	}
	slices.Sort(s.Racks)
	for i, r := range s.Racks {
		rackIndex[r] = i
	}
	s.RackCounts = make([]map[heureka.Status]int, len(s.Racks))
	for i := range s.RackCounts {
		s.RackCounts[i] = map[heureka.Status]int{}
	}

	// Rows by rack, then ID: the snapshot lists instances by ID, so a
	// counting sort by rack keeps that order within a rack.
	start := make([]int, len(s.Racks)+1)
	for i := range a.Instances {
		start[rackIndex[racks[i]]+1]++
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	fullAt := int(hdfs.DefaultFullnessThreshold * 1000)
	for i, in := range a.Instances {
		rk := rackIndex[racks[i]]
		row := start[rk]
		start[rk]++
		info := infos[i]
		s.ID[row], s.Host[row], s.Status[row], s.Rack[row] = in.ID, in.HostName, in.Status, rk
		s.Full[row] = -1
		if info.DiskTotal > 0 {
			s.Full[row] = int(min(1000, float64(info.DiskUsed)*1000/float64(info.DiskTotal)))
		}
		switch {
		case role == hdfs.RoleNameNode:
			s.Note[row] = string(info.HAState)
		case !isHDFS && isRole:
			s.Note[row] = roles.State(in.Metadata)
		case info.Status != "" && info.Status != string(hdfs.AdminNormal):
			s.Note[row] = info.Status
		}
		s.Changed[row] = in.LastUpdatedTimestamp
		s.Counts[in.Status]++
		s.RackCounts[rk][in.Status]++
	}
	for row := range n {
		if s.Status[row] != heureka.StatusUp || s.Full[row] > fullAt {
			s.Problems = append(s.Problems, row)
		}
	}
	if s.Problems == nil {
		s.Problems = []int{}
	}
	return s
}

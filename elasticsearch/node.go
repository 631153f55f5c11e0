package elasticsearch

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/fetch"
)

// Endpoints and bounds.
const (
	NodesLocalPath = "/_nodes/_local"
	// HealthPath asks for the health as the node sees it (local=true): a
	// node without a master would otherwise wait 30 s and answer 503.
	HealthPath = "/_cluster/health?local=true"
	// MasterNodePath asks the node's own cluster state (local=true) for the
	// elected master; the answer always carries cluster_uuid
	// (ClusterState.toXContent).
	MasterNodePath = "/_cluster/state/master_node?local=true"
	// MaxAnswerBytes bounds each answer. A node's full _nodes/_local with
	// its plugins and thread pools is tens of kilobytes.
	MaxAnswerBytes = 4 << 20
)

// Role states.
const (
	RoleMaster = "master" // the elected master
	// A node that is not the elected master registers its first role
	// among master-eligible ("master"), data roles and others, e.g.
	// "master-eligible", "data", "ingest", "coordinating".
	RoleMasterEligible = "master-eligible"
	RoleData           = "data"
	RoleCoordinating   = "coordinating"
)

// Status is the cluster health colour.
type Status string

const (
	Green  Status = "green"
	Yellow Status = "yellow"
	Red    Status = "red"
)

// Node is what heureka reads from one node.
type Node struct {
	ID, Name    string
	ClusterName string
	ClusterUUID string // from the master_node answer
	Version     string
	Roles       []string          // as the node lists them ("master", "data_hot", ...)
	Attributes  map[string]string // node.attr.*, e.g. rack_id
	// HTTPAddr is the HTTP publish address, "host:port" (the "host/" prefix
	// Elasticsearch writes when it knows a name is dropped, the name kept
	// in HTTPHost).
	HTTPAddr, HTTPHost string
	// TransportAddr is the transport publish address, "host:port" (the
	// one discovery.seed_hosts names); "" when the answer has none.
	TransportAddr string

	// From the cluster health.
	Status       Status
	Nodes        int64
	DataNodes    int64
	Unassigned   int64
	Relocating   int64
	Initializing int64

	// MasterID is the elected master's node id, "" when the node knows
	// none (it left the cluster, or no master is elected).
	MasterID string
}

// ParseNodesLocal reads GET /_nodes/_local: exactly one node.
func ParseNodesLocal(b []byte) (Node, error) {
	var v struct {
		ClusterName string `json:"cluster_name"`
		Nodes       map[string]struct {
			Name       string            `json:"name"`
			Transport  string            `json:"transport_address"`
			Version    string            `json:"version"`
			Roles      []string          `json:"roles"`
			Attributes map[string]string `json:"attributes"`
			HTTP       *struct {
				PublishAddress string `json:"publish_address"`
			} `json:"http"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Node{}, heureka.Errorf(heureka.EINVALID, "%s: the answer is not the nodes-info JSON: %v (starts %s)", NodesLocalPath, err, fetch.Excerpt(b))
	}
	if len(v.Nodes) != 1 {
		return Node{}, heureka.Errorf(heureka.EINVALID, "%s: the answer describes %d nodes, not the one asked", NodesLocalPath, len(v.Nodes))
	}
	var n Node
	for id, d := range v.Nodes {
		n = Node{ID: id, Name: d.Name, ClusterName: v.ClusterName, Version: d.Version, Roles: d.Roles, Attributes: d.Attributes}
		if _, _, err := net.SplitHostPort(d.Transport); err == nil {
			n.TransportAddr = d.Transport
		}
		if d.HTTP != nil {
			n.HTTPHost, n.HTTPAddr = splitPublish(d.HTTP.PublishAddress)
		}
	}
	if n.ID == "" || n.Version == "" {
		return Node{}, heureka.Errorf(heureka.EINVALID, "%s: the node has no id or no version", NodesLocalPath)
	}
	if _, _, err := net.SplitHostPort(n.HTTPAddr); err != nil {
		return Node{}, heureka.Errorf(heureka.EINVALID, "%s: node %s has no HTTP publish address (is http enabled?)", NodesLocalPath, n.ID)
	}
	slices.Sort(n.Roles)
	return n, nil
}

// splitPublish splits "name/ip:port" (or "ip:port") into the name and
// "ip:port".
func splitPublish(s string) (string, string) {
	if host, addr, ok := strings.Cut(s, "/"); ok {
		return host, addr
	}
	return "", s
}

// ParseHealth reads GET /_cluster/health into n.
func ParseHealth(b []byte, n *Node) error {
	var v struct {
		ClusterName  string `json:"cluster_name"`
		Status       Status `json:"status"`
		Nodes        int64  `json:"number_of_nodes"`
		DataNodes    int64  `json:"number_of_data_nodes"`
		Unassigned   int64  `json:"unassigned_shards"`
		Relocating   int64  `json:"relocating_shards"`
		Initializing int64  `json:"initializing_shards"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return heureka.Errorf(heureka.EINVALID, "%s: the answer is not the cluster-health JSON: %v (starts %s)", HealthPath, err, fetch.Excerpt(b))
	}
	switch v.Status {
	case Green, Yellow, Red:
	default:
		return heureka.Errorf(heureka.EINVALID, "%s: status %s is not green, yellow or red", HealthPath, fetch.Excerpt([]byte(v.Status)))
	}
	if n.ClusterName != "" && v.ClusterName != n.ClusterName {
		return heureka.Errorf(heureka.EINVALID, "%s: cluster %q, but the node said %q", HealthPath, v.ClusterName, n.ClusterName)
	}
	n.Status, n.Nodes, n.DataNodes = v.Status, v.Nodes, v.DataNodes
	n.Unassigned, n.Relocating, n.Initializing = v.Unassigned, v.Relocating, v.Initializing
	return nil
}

// ParseMasterNode reads GET /_cluster/state/master_node into n: the
// cluster UUID and the elected master (null when none).
func ParseMasterNode(b []byte, n *Node) error {
	var v struct {
		ClusterUUID string  `json:"cluster_uuid"`
		MasterNode  *string `json:"master_node"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return heureka.Errorf(heureka.EINVALID, "%s: the answer is not the cluster-state JSON: %v (starts %s)", MasterNodePath, err, fetch.Excerpt(b))
	}
	if v.ClusterUUID == "" {
		return heureka.Errorf(heureka.EINVALID, "%s: the answer has no cluster_uuid", MasterNodePath)
	}
	n.ClusterUUID = v.ClusterUUID
	n.MasterID = ""
	if v.MasterNode != nil {
		n.MasterID = *v.MasterNode
	}
	return nil
}

// Rack returns the node's attribute attr (e.g. "rack_id", the attribute
// cluster.routing.allocation.awareness.attributes names), "" if unset.
func (n Node) Rack(attr string) string { return n.Attributes[attr] }

// Health says whether the node serves its cluster, and if not why:
//   - it knows no elected master: it left the cluster (or was never let
//     in), or the cluster has no master quorum; it refuses writes and most
//     searches;
//   - the cluster is red and the node holds data: some primaries are
//     unassigned, so some of its searches and writes fail. A red cluster
//     does not make a coordinating or master-only node unhealthy: it still
//     routes and coordinates.
//
// Yellow (replicas missing) is healthy: every shard is served.
func (n Node) Health() (bool, string) {
	switch {
	case n.MasterID == "":
		return false, "elasticsearch node knows no elected master: it has left the cluster or the cluster has no master"
	case n.Status == Red && n.holdsData():
		return false, "elasticsearch cluster is red (unassigned primaries) and this node holds data"
	}
	return true, ""
}

func (n Node) holdsData() bool {
	for _, r := range n.Roles {
		if r == "data" || strings.HasPrefix(r, "data_") {
			return true
		}
	}
	return false
}

// RoleState is "master" for the elected master, else "master-eligible",
// "data" or the node's first role, or "coordinating" for a node without
// roles.
func (n Node) RoleState() string {
	switch {
	case n.MasterID != "" && n.MasterID == n.ID:
		return RoleMaster
	case slices.Contains(n.Roles, "master"):
		return RoleMasterEligible
	case n.holdsData():
		return RoleData
	case len(n.Roles) > 0:
		return n.Roles[0]
	}
	return RoleCoordinating
}

// Read asks the node at baseURL (e.g. "http://es1:9200") the three
// questions. A cluster UUID other than wantClusterUUID (when not "") is
// an ECONFLICT error, never a report.
func Read(ctx context.Context, c *http.Client, baseURL, wantClusterUUID string) (Node, error) {
	base := strings.TrimRight(baseURL, "/")
	get := func(path string) ([]byte, error) {
		return fetch.Get(ctx, c, base+path, "application/json", MaxAnswerBytes)
	}
	named := func(err error) error { return heureka.Errorf(heureka.ErrorCode(err), "%s: %v", base, err) }
	b, err := get(NodesLocalPath)
	if err != nil {
		return Node{}, err
	}
	n, err := ParseNodesLocal(b)
	if err != nil {
		return Node{}, named(err)
	}
	if b, err = get(MasterNodePath); err != nil {
		return Node{}, err
	}
	if err := ParseMasterNode(b, &n); err != nil {
		return Node{}, named(err)
	}
	if wantClusterUUID != "" && n.ClusterUUID != wantClusterUUID {
		return Node{}, heureka.Errorf(heureka.ECONFLICT, "%s: the node belongs to cluster %q (uuid %s), not uuid %s: not registering it", base, n.ClusterName, n.ClusterUUID, wantClusterUUID)
	}
	if b, err = get(HealthPath); err != nil {
		return Node{}, err
	}
	if err := ParseHealth(b, &n); err != nil {
		return Node{}, named(err)
	}
	return n, nil
}

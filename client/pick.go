package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

// PickRequest asks a heureka server to choose DataNodes (GET
// /v1/hdfs/pick), as hdfs.ChooseDataNodes does over the cluster's
// registered DataNodes. Zero fields take the server's defaults.
type PickRequest struct {
	Cluster  string   // the HDFS cluster, as agents register it (hdfs-datanode.NAME)
	N        int      // how many; 0 means hdfs.DefaultReplicas
	Writer   string   // the writer's host name or IP
	Rack     string   // the writer's rack, when the writer is not a DataNode
	Exclude  []string // hosts, IPs or instance IDs never to choose
	Avoid    []string // instance IDs to treat as penalised (failed a probe)
	Fullness float64  // skip DataNodes more used than this; 0 means the default
}

// PickResult is the server's choice: Short is how many fewer than
// Requested it found, and Problem why (empty when none are short).
// Excluded counts the DataNodes left out by Exclude.
type PickResult struct {
	Requested, Short, Excluded int
	Nodes                      []*heureka.Instance
	Problem                    string
}

// PickDataNodes asks the server that holds the cluster's DataNode
// application to choose, so that the answer costs the nodes chosen, not
// the cluster. A cluster without DataNodes, and a server without the
// endpoint (plain Eureka), give an error wrapping ErrNotRegistered.
func (c *Client) PickDataNodes(ctx context.Context, req PickRequest) (*PickResult, error) {
	const op = "pick DataNodes"
	app := strings.ToUpper(hdfs.AppName(hdfs.RoleDataNode, req.Cluster))
	cl, err := c.mustCluster(op, app)
	if err != nil {
		return nil, err
	}
	q := url.Values{"cluster": {req.Cluster}}
	if req.N > 0 {
		q.Set("n", strconv.Itoa(req.N))
	}
	if req.Writer != "" {
		q.Set("writer", req.Writer)
	}
	if req.Rack != "" {
		q.Set("rack", req.Rack)
	}
	if len(req.Exclude) > 0 {
		q.Set("exclude", strings.Join(req.Exclude, ","))
	}
	if len(req.Avoid) > 0 {
		q.Set("avoid", strings.Join(req.Avoid, ","))
	}
	if req.Fullness != 0 {
		q.Set("fullness", strconv.FormatFloat(req.Fullness, 'g', -1, 64))
	}
	r := &request{op: op, method: http.MethodGet, path: "/v1/hdfs/pick", query: q, origin: true}
	out, _, err := decoded(ctx, c, cl, r, decodePickResult)
	return out, err
}

// decodePickResult decodes the answer of GET /v1/hdfs/pick.
func decodePickResult(b []byte) (*PickResult, error) {
	var ans struct {
		Requested int               `json:"requested"`
		Nodes     []json.RawMessage `json:"nodes"`
		Short     int               `json:"short"`
		Excluded  int               `json:"excluded"`
		Problem   string            `json:"problem"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return nil, err
	}
	nodes, err := decodeInstanceObjects(ans.Nodes)
	if err != nil {
		return nil, err
	}
	return &PickResult{Requested: ans.Requested, Nodes: nodes, Short: ans.Short, Excluded: ans.Excluded, Problem: ans.Problem}, nil
}

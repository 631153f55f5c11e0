package sim

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka/elasticsearch"
)

// esModel simulates Elasticsearch nodes, every one master-eligible and
// holding data: GET / (the banner), /_nodes/_local (the node's id, name,
// version, roles, attributes with its rack_id, HTTP and transport publish
// addresses), /_cluster/state/master_node (the cluster UUID and the master
// the node knows) and /_cluster/health, in Elasticsearch 8's shapes. The
// first node starts as the elected master. When the master stops, the
// first other running node is elected at once; a node set "left" knows no
// master (it is cut off from the cluster) until set "joined".
type esModel struct {
	c      *Cluster
	master int // the elected master, -1 for none
	left   []bool
	status elasticsearch.Status
}

const esRole = elasticsearch.RoleName

func newElasticsearch(c *Cluster) *esModel {
	c.addHTTPMembers(esRole, "es", c.cfg.Members)
	return &esModel{c: c, left: make([]bool, len(c.members)), status: elasticsearch.Green}
}

// nodeID is node i's id: Elasticsearch's are 22 URL-safe base64
// characters; these are fixed, so a restarted node keeps its id as a real
// one (its id lives in its data path) does.
func (m *esModel) nodeID(i int) string { return fmt.Sprintf("HeurekaSimNode%08d", i+1) }

func (m *esModel) knownMaster(i int) *string {
	if m.master < 0 || m.left[i] {
		return nil
	}
	id := m.nodeID(m.master)
	return &id
}

func (m *esModel) answer(i int, r *http.Request) (int, []byte) {
	mb := m.c.members[i]
	host, port, _ := net.SplitHostPort(mb.d.addr())
	var v any
	switch strings.TrimRight(r.URL.Path, "/") {
	case "":
		v = map[string]any{"name": mb.name, "cluster_name": m.c.cfg.System, "cluster_uuid": m.c.cfg.ClusterID,
			"version": map[string]any{"number": mb.version, "build_flavor": "default", "build_type": "heureka-simulator"},
			"tagline": "You Know, for Search (heureka's simulator, not Elasticsearch)"}
	case elasticsearch.NodesLocalPath:
		p, _ := strconv.Atoi(port)
		transport := net.JoinHostPort(host, strconv.Itoa(9300+i))
		attrs := map[string]string{"xpack.installed": "true", "heureka.simulator": "true"}
		if mb.rack != "" {
			attrs["rack_id"] = mb.rack
		}
		v = map[string]any{
			"_nodes":       map[string]int{"total": 1, "successful": 1, "failed": 0},
			"cluster_name": m.c.cfg.System,
			"nodes": map[string]any{m.nodeID(i): map[string]any{
				"name": mb.name, "transport_address": transport, "host": host, "ip": host,
				"version": mb.version, "build_flavor": "default", "build_type": "heureka-simulator",
				"roles": []string{"data", "ingest", "master"}, "attributes": attrs,
				"http": map[string]any{"bound_address": []string{net.JoinHostPort(host, strconv.Itoa(p))},
					"publish_address": net.JoinHostPort(host, strconv.Itoa(p)), "max_content_length_in_bytes": 104857600},
			}},
		}
	case "/_cluster/state/master_node":
		v = map[string]any{"cluster_name": m.c.cfg.System, "cluster_uuid": m.c.cfg.ClusterID, "master_node": m.knownMaster(i)}
	case "/_cluster/health":
		n := len(m.c.running(esRole))
		unassigned := 0
		switch m.status {
		case elasticsearch.Yellow:
			unassigned = 3
		case elasticsearch.Red:
			unassigned = 6
		}
		v = map[string]any{"cluster_name": m.c.cfg.System, "status": m.status, "timed_out": false,
			"number_of_nodes": n, "number_of_data_nodes": n, "active_primary_shards": 10, "active_shards": 20,
			"relocating_shards": 0, "initializing_shards": 0, "unassigned_shards": unassigned}
	default:
		return http.StatusNotFound, fmt.Appendf(nil, `{"error":{"type":"illegal_argument_exception","reason":"heureka's simulated Elasticsearch does not serve %s"},"status":404}`, jsonEscape(r.URL.Path))
	}
	b, _ := json.Marshal(v)
	return http.StatusOK, b
}

func (m *esModel) state(i int) string {
	switch {
	case m.left[i] || m.master < 0:
		return "left"
	case i == m.master:
		return elasticsearch.RoleMaster
	}
	return elasticsearch.RoleMasterEligible
}

func (m *esModel) setState(i int, state string) error {
	switch state {
	case elasticsearch.RoleMaster:
		m.master, m.left[i] = i, false
	case "left":
		m.left[i] = true
		if m.master == i {
			m.elect(i)
		}
	case "joined":
		m.left[i] = false
	default:
		return fmt.Errorf("sim: an Elasticsearch node's state is one of %s, not %q", m.states(), state)
	}
	return nil
}

// elect makes the first running node other than not, in the cluster,
// the master; none when there is none.
func (m *esModel) elect(not int) {
	m.master = -1
	for _, j := range m.c.running(esRole) {
		if j != not && !m.left[j] {
			m.master = j
			m.c.log.Info("a new Elasticsearch master was elected", "member", m.c.members[j].name)
			return
		}
	}
}

func (m *esModel) up(i int, running bool) {
	m.left[i] = false
	switch {
	case running && m.master < 0:
		m.master = i
	case !running && m.master == i:
		m.elect(i)
	}
}

func (m *esModel) set(i int, key, value string) error {
	if key != "health" {
		return fmt.Errorf("sim: an Elasticsearch node has version and health (green, yellow, red: the cluster's), not %q", key)
	}
	switch st := elasticsearch.Status(value); st {
	case elasticsearch.Green, elasticsearch.Yellow, elasticsearch.Red:
		m.status = st
		return nil
	}
	return fmt.Errorf("sim: health=%q: want green, yellow or red", value)
}

func (m *esModel) states() string {
	return "master (elected), left (knows no master), joined (knows it again)"
}

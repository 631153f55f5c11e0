package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/hdfs"
)

// Bounds of GET /v1/hdfs/pick.
const (
	maxPickReplicas = 64   // as `heureka pick -n`
	maxPickExcluded = 1000 // hosts or IDs in exclude and avoid together
)

// pickAnswer is the answer of GET /v1/hdfs/pick, which `heureka pick`
// reads: the chosen DataNodes as Eureka instance JSON, and when fewer than
// asked could be chosen, why.
type pickAnswer struct {
	Requested int               `json:"requested"`
	Nodes     []json.RawMessage `json:"nodes"`
	Short     int               `json:"short"`
	Excluded  int               `json:"excluded"` // left out by exclude=
	Problem   string            `json:"problem,omitempty"`
}

// hdfsPick is GET /v1/hdfs/pick?cluster=C[&n=3][&writer=H|&rack=R]
// [&exclude=H,...][&avoid=ID,...][&fullness=0.9]: hdfs.ChooseDataNodes run
// on the registry's DataNodes of cluster C, so that a client choosing
// three nodes does not download the cluster. exclude leaves out hosts,
// IPs or instance IDs (as `heureka pick --exclude`); avoid treats
// instance IDs as penalised (a client's failed probes). A shortfall is
// still 200, with problem set; a cluster with no DataNodes is 404.
func (s *Server) hdfsPick(w http.ResponseWriter, r *http.Request, _ params) error {
	q := r.URL.Query()
	for k, v := range q {
		switch k {
		case "cluster", "n", "writer", "rack", "fullness":
			if len(v) > 1 {
				return heureka.Errorf(heureka.EINVALID, "%s given %d times: give it once", k, len(v))
			}
		case "exclude", "avoid":
		default:
			return heureka.Errorf(heureka.EINVALID, "unknown query parameter %q: /v1/hdfs/pick takes cluster, n, writer, rack, exclude, avoid and fullness", k)
		}
	}
	cluster := strings.TrimSpace(q.Get("cluster"))
	if cluster == "" || len(cluster) > s.cfg.Limits.MaxFieldLength {
		return heureka.Errorf(heureka.EINVALID, "cluster %.64q: want the HDFS cluster's name (hdfs-datanode.NAME), at most %d bytes", cluster, s.cfg.Limits.MaxFieldLength)
	}
	req := hdfs.PlacementRequest{Replicas: hdfs.DefaultReplicas, Writer: q.Get("writer"), WriterRack: q.Get("rack")}
	if v := q.Get("n"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPickReplicas {
			return heureka.Errorf(heureka.EINVALID, "n=%.32q: want 1 to %d DataNodes", v, maxPickReplicas)
		}
		req.Replicas = n
	}
	if req.Writer != "" && req.WriterRack != "" {
		return heureka.Errorf(heureka.EINVALID, "give writer or rack, not both")
	}
	if len(req.Writer) > maxLookupHostLen || len(req.WriterRack) > s.cfg.Limits.MaxFieldLength {
		return heureka.Errorf(heureka.EINVALID, "writer or rack too long: at most %d bytes", maxLookupHostLen)
	}
	if v := q.Get("fullness"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return heureka.Errorf(heureka.EINVALID, "fullness=%.32q: want a fraction in (0, 1], e.g. 0.9", v)
		}
		req.FullnessThreshold = f
	}
	excluded, err := pickList(q["exclude"], strings.ToLower)
	if err != nil {
		return err
	}
	avoid, err := pickList(q["avoid"], func(s string) string { return s })
	if err != nil {
		return err
	}
	if len(excluded)+len(avoid) > maxPickExcluded {
		return heureka.Errorf(heureka.EINVALID, "%d hosts in exclude and avoid: at most %d", len(excluded)+len(avoid), maxPickExcluded)
	}
	if len(avoid) > 0 {
		req.Penalized = make(map[string]string, len(avoid))
		for id := range avoid {
			req.Penalized[id] = "avoided by the caller"
		}
	}

	name := strings.ToUpper(hdfs.AppName(hdfs.RoleDataNode, cluster))
	app, ok := s.reg.Snapshot().App(name)
	if !ok || app == nil || len(app.Instances) == 0 {
		return heureka.Errorf(heureka.ENOTFOUND, "application %s has no instances", name)
	}
	set := s.picks.get(app)
	left := 0
	if len(excluded) > 0 {
		nodes := make([]*heureka.Instance, 0, len(app.Instances))
		for _, in := range app.Instances {
			if excluded[strings.ToLower(in.ID)] || excluded[in.IPAddr] || excluded[strings.ToLower(in.HostName)] {
				left++
				continue
			}
			nodes = append(nodes, in)
		}
		set = hdfs.NewDataNodeSet(nodes, set) // unchanged nodes are not parsed again
	}
	pl, perr := set.Choose(req)
	if perr != nil && heureka.ErrorCode(perr) == heureka.EINVALID {
		return perr
	}
	ans := pickAnswer{Requested: req.Replicas, Nodes: []json.RawMessage{}, Short: req.Replicas - len(pl.Nodes), Excluded: left}
	for _, in := range pl.Nodes {
		ans.Nodes = append(ans.Nodes, eureka.AppendInstance(nil, eureka.JSON, in))
	}
	if perr != nil {
		ans.Problem = perr.Error()
	}
	return writeJSON(w, r, ans)
}

// pickList splits comma-separated values into a set, each trimmed and
// keyed by key.
func pickList(vals []string, key func(string) string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, v := range vals {
		for h := range strings.SplitSeq(v, ",") {
			if h = strings.TrimSpace(h); h == "" {
				continue
			}
			if len(h) > maxLookupHostLen {
				return nil, heureka.Errorf(heureka.EINVALID, "%.64q…: a host or instance ID of at most %d bytes", h, maxLookupHostLen)
			}
			set[key(h)] = true
			if len(set) > maxPickExcluded {
				return nil, heureka.Errorf(heureka.EINVALID, "more than %d hosts in exclude or avoid", maxPickExcluded)
			}
		}
	}
	return set, nil
}

// maxPickSets bounds the prepared sets kept: one per HDFS cluster asked.
const maxPickSets = 64

// pickSets keeps, per DataNode application, the hdfs.DataNodeSet of the
// last version asked for. An application unchanged since (the same
// immutable value in the snapshot) reuses it; a changed one is prepared
// from it, parsing only the instances that changed. Safe for concurrent
// use; the zero value is ready.
type pickSets struct {
	mu   sync.Mutex
	sets map[string]pickSet
}

type pickSet struct {
	app *heureka.Application
	set *hdfs.DataNodeSet
}

func (p *pickSets) get(app *heureka.Application) *hdfs.DataNodeSet {
	p.mu.Lock()
	prev, ok := p.sets[app.Name]
	p.mu.Unlock()
	if ok && prev.app == app {
		return prev.set
	}
	// Prepared outside the lock: two requests racing on a new version
	// both prepare it, and the later store wins; both answers are right.
	set := hdfs.NewDataNodeSet(app.Instances, prev.set)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sets == nil {
		p.sets = map[string]pickSet{}
	}
	if _, ok := p.sets[app.Name]; !ok && len(p.sets) >= maxPickSets {
		for k := range p.sets { // forget one; there are rarely more than a few clusters
			delete(p.sets, k)
			break
		}
	}
	p.sets[app.Name] = pickSet{app, set}
	return set
}

package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// nodeHeader carries this server's node ID (replication.NodeHeader).
const nodeHeader = "X-Heureka-Node"

// replicationBatch is POST /peerreplication/batch, Eureka's peer batch:
// every item is applied as a replicated write (never forwarded again) and
// answered in position, as Netflix's servers do, so Java peers can send to
// us too. Bad items get their own status; the batch as a whole is 200.
func (s *Server) replicationBatch(w http.ResponseWriter, r *http.Request, _ params) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if err := checkUTF8(body); err != nil {
		return err
	}
	items, itemErrs, err := eureka.DecodeReplicationList(body)
	if err != nil {
		return err
	}
	results := make([]eureka.ReplicationResult, len(items))
	for i, it := range items {
		if itemErrs[i] != nil {
			s.logger.Warn("replication: bad item", "action", it.Action, "app", it.AppName, "id", it.ID, "err", itemErrs[i])
			results[i].StatusCode = http.StatusBadRequest
			continue
		}
		results[i] = s.applyReplicated(it)
	}
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: eureka.EncodeReplicationResults(results)})
	return nil
}

func (s *Server) applyReplicated(it eureka.ReplicationItem) eureka.ReplicationResult {
	var err error
	var res eureka.ReplicationResult
	app := strings.ToUpper(it.AppName)
	switch registry.Action(it.Action) {
	case registry.ActionRegister:
		if it.Instance == nil {
			err = heureka.Errorf(heureka.EINVALID, "Register without instanceInfo")
			break
		}
		err = s.reg.Register(it.Instance, true)
	case registry.ActionHeartbeat:
		var in *heureka.Instance
		in, err = s.reg.Renew(registry.RenewRequest{App: app, ID: it.ID,
			LastDirtyTimestamp: it.LastDirtyTimestamp, OverriddenStatus: it.OverriddenStatus, Replication: true})
		if heureka.ErrorCode(err) == heureka.ECONFLICT {
			res.Instance = in
		}
	case registry.ActionCancel:
		err = s.reg.Cancel(app, it.ID, true)
	case registry.ActionStatusUpdate:
		if it.Status == "" {
			// Would store an empty status as the instance's override.
			err = heureka.Errorf(heureka.EINVALID, "StatusUpdate without a status")
			break
		}
		err = s.reg.SetStatus(app, it.ID, it.Status, it.LastDirtyTimestamp, true)
	case registry.ActionDeleteStatusOverride:
		err = s.reg.DeleteStatusOverride(app, it.ID, it.Status, it.LastDirtyTimestamp, true)
	default:
		err = heureka.Errorf(heureka.EINVALID, "unknown replication action %q", it.Action)
	}
	res.StatusCode = http.StatusOK
	if err != nil {
		res.StatusCode = statusOf(err)
		if res.StatusCode >= 500 {
			s.logger.Error("replication: item failed", "action", it.Action, "app", it.AppName, "id", it.ID, "err", err)
		}
	}
	if registry.Action(it.Action) == registry.ActionRegister && res.StatusCode != http.StatusBadRequest {
		res.StatusCode = http.StatusOK // Eureka answers 200 to every replicated register
	}
	return res
}

// replicationDigest is GET /v1/replication/digest: what anti-entropy
// compares (per-application digests) and the recent cancels.
func (s *Server) replicationDigest(w http.ResponseWriter, r *http.Request, _ params) error {
	d := struct {
		Node       string            `json:"node"`
		Apps       map[string]string `json:"apps"`
		Tombstones []tombstone       `json:"tombstones"`
	}{Node: s.cfg.NodeID, Apps: map[string]string{}, Tombstones: []tombstone{}}
	for app, v := range s.reg.Snapshot().Digests() {
		d.Apps[app] = strconv.FormatUint(v, 16)
	}
	for _, t := range s.reg.Tombstones() {
		d.Tombstones = append(d.Tombstones, tombstone{App: t.App, ID: t.ID, Time: t.Time.UnixMilli()})
	}
	return writeJSON(w, r, d)
}

type tombstone struct {
	App  string `json:"app"`
	ID   string `json:"id"`
	Time int64  `json:"time"`
}

// replicationApp is GET /v1/replication/apps/{APP}: the application in
// Eureka JSON, with each lease's real last renewal time.
func (s *Server) replicationApp(w http.ResponseWriter, r *http.Request, p params) error {
	app, ok := s.reg.LiveApp(p.app)
	if !ok {
		return heureka.Errorf(heureka.ENOTFOUND, "application %s has no instances", p.app)
	}
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: eureka.EncodeApplication(eureka.JSON, app)})
	return nil
}

// status is GET /v1/status: self-preservation (whether it protects, why,
// the numbers), registry size and version, watchers, and what the process
// adds (peers, start-up sync).
func (s *Server) status(w http.ResponseWriter, r *http.Request, _ params) error {
	snap := s.reg.Snapshot()
	out := map[string]any{
		"node":             s.cfg.NodeID,
		"ready":            s.cfg.Ready(),
		"version":          snap.Version,
		"instances":        snap.Len(),
		"applications":     len(snap.Apps().Apps),
		"selfPreservation": s.reg.Protection(),
		"watchers":         s.Watchers(),
	}
	if s.cfg.Status != nil {
		for k, v := range s.cfg.Status() {
			out[k] = v
		}
	}
	return writeJSON(w, r, out)
}

func writeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: body})
	return nil
}

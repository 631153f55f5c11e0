package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/heureka-project/heureka/eureka"
)

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
		"applications":     len(snap.Blocks()),
		"selfPreservation": s.reg.Protection(),
		"watchers":         s.Watchers(),
		"peerRefusals":     s.peerRefusalStatus(),
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

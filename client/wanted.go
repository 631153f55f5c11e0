package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
)

// fetchApps is the full fetch of a Cache limited to some applications:
// GET {base}/apps/{APP} for each of apps, never the whole registry (Eureka
// has no per-application delta, so polling repeats it). On a heureka
// server the version is read first (GET /v1/status) and every application
// from the same peer, so that a watch from that version replays whatever
// changed while the applications were being read; replayed changes carry
// whole instances and apply in order, so the result is the same. An
// application the server does not know (404) is empty.
func (c *Client) fetchApps(ctx context.Context, cl *cluster, apps []string) (*fetched, error) {
	f := &fetched{apps: &heureka.Applications{VersionDelta: 1}}
	st := &request{op: "fetch", method: http.MethodGet, path: "/v1/status", origin: true}
	resp, err := c.do(ctx, cl, st)
	if err != nil {
		return nil, err
	}
	if resp.status/100 == 2 {
		var s struct {
			Version *uint64 `json:"version"`
		}
		if json.Unmarshal(resp.body, &s) == nil && s.Version != nil {
			f.version, f.hasVersion, f.base = *s.Version, true, resp.base
			f.node = resp.header.Get(nodeHeader)
		}
	}
	for _, app := range apps {
		req := &request{op: "fetch", method: http.MethodGet, path: "/apps/" + url.PathEscape(app), only: f.base}
		resp, err := c.do(ctx, cl, req)
		if err != nil {
			return nil, err
		}
		if err := answerError(req, resp); err != nil {
			if errors.Is(err, ErrNotRegistered) {
				continue
			}
			return nil, err
		}
		a, err := eureka.DecodeApplication(resp.body, eureka.JSON)
		if err != nil {
			return nil, decodeError(req, resp, err)
		}
		if f.base == nil {
			f.base = resp.base
		}
		f.apps.Apps = append(f.apps.Apps, a)
	}
	if f.base == nil {
		f.base = resp.base
	}
	return f, nil
}

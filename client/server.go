package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
)

// Reads that operators' tools need besides discovery. Each goes to the
// default cluster (Config.URLs), with failover as for any call.

// InstanceByID reads one instance by its ID alone (GET {base}/instances/{id});
// an unknown one gives an error wrapping ErrNotRegistered.
func (c *Client) InstanceByID(ctx context.Context, id string) (*heureka.Instance, error) {
	const op = "get instance by ID"
	if id == "" {
		return nil, &Error{Op: op, Message: "the instance ID is empty", Err: ErrRejected}
	}
	req := &request{op: op, method: http.MethodGet, path: "/instances/" + url.PathEscape(id)}
	return getDecoded(ctx, c, req, decodeInstance)
}

// Application reads one application (GET {base}/apps/{APP}); one without
// instances gives an error wrapping ErrNotRegistered.
func (c *Client) Application(ctx context.Context, app string) (*heureka.Application, error) {
	const op = "get application"
	app = strings.ToUpper(strings.TrimSpace(app))
	if app == "" {
		return nil, &Error{Op: op, Message: "the application name is empty", Err: ErrRejected}
	}
	req := &request{op: op, method: http.MethodGet, path: "/apps/" + url.PathEscape(app)}
	return getDecoded(ctx, c, req, decodeApplication)
}

// Renewals returns when each instance of app last renewed its lease, in ms
// since the epoch, by instance ID. Listings carry the lease as of the last
// registration (renewals do not change what clients fetch); a heureka
// server's replication view (GET /v1/replication/apps/{APP}) has the live
// times, for callers allowed to read it.
func (c *Client) Renewals(ctx context.Context, app string) (map[string]int64, error) {
	const op = "get renewals"
	req := &request{op: op, method: http.MethodGet, origin: true,
		path: "/v1/replication/apps/" + url.PathEscape(strings.ToUpper(app))}
	a, err := getDecoded(ctx, c, req, decodeApplication)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(a.Instances))
	for _, in := range a.Instances {
		out[in.ID] = in.Lease.LastRenewalTimestamp
	}
	return out, nil
}

// ServerStatus is what a heureka server says about itself at GET /v1/status.
type ServerStatus struct {
	Node             string           `json:"node"`
	Ready            bool             `json:"ready"`
	Version          uint64           `json:"version"`
	Instances        int              `json:"instances"`
	Applications     int              `json:"applications"`
	Watchers         int              `json:"watchers"`
	SelfPreservation SelfPreservation `json:"selfPreservation"`
	// Peers and StartupSync are replication's own reports, as sent.
	Peers       json.RawMessage `json:"peers,omitempty"`
	StartupSync json.RawMessage `json:"startupSync,omitempty"`
}

// SelfPreservation is a server's protection state: whether it keeps
// expired leases, and why.
type SelfPreservation struct {
	Mode                    string  `json:"mode"`
	Active                  bool    `json:"active"`
	Reason                  string  `json:"reason"`
	Instances               int     `json:"instances"`
	Expired                 int     `json:"expired"`
	RenewsLastMinute        int64   `json:"renewsLastMinute"`
	ExpectedRenewsPerMinute float64 `json:"expectedRenewsPerMinute"`
}

// Status reads GET /v1/status from the first registry of the default
// cluster that answers. A server without it (not heureka) gives an error
// wrapping ErrNotRegistered.
func (c *Client) Status(ctx context.Context) (*ServerStatus, error) {
	req := &request{op: "get status", method: http.MethodGet, path: "/v1/status", origin: true}
	return getDecoded(ctx, c, req, func(b []byte) (*ServerStatus, error) {
		var st ServerStatus
		return &st, json.Unmarshal(b, &st)
	})
}

// decoded sends req to cl and decodes the body of a 2xx answer; an
// undecodable answer is an *Error naming the call and the URL.
func decoded[T any](ctx context.Context, c *Client, cl *cluster, req *request, decode func([]byte) (T, error)) (T, *response, error) {
	var zero T
	resp, err := c.answer(ctx, cl, req)
	if err != nil {
		return zero, nil, err
	}
	v, err := decode(resp.body)
	if err != nil {
		return zero, nil, decodeError(req, resp, err)
	}
	return v, resp, nil
}

// getDecoded is decoded on the default cluster (Config.URLs).
func getDecoded[T any](ctx context.Context, c *Client, req *request, decode func([]byte) (T, error)) (T, error) {
	if c.def == nil {
		var zero T
		return zero, invalid("URLs", req.op+" needs the default registry cluster (Config.URLs)")
	}
	v, _, err := decoded(ctx, c, c.def, req, decode)
	return v, err
}

// The Eureka JSON decoders, as decoded takes them.
func decodeInstance(b []byte) (*heureka.Instance, error) {
	return eureka.DecodeServerInstance(b, eureka.JSON)
}
func decodeApplication(b []byte) (*heureka.Application, error) {
	return eureka.DecodeApplication(b, eureka.JSON)
}
func decodeApplications(b []byte) (*heureka.Applications, error) {
	return eureka.DecodeApplications(b, eureka.JSON)
}

// decodeError is the *Error for a 2xx answer whose body cannot be decoded.
func decodeError(req *request, resp *response, err error) error {
	return &Error{Op: req.op, Method: req.method, URL: resp.url, Status: resp.status,
		Message: "cannot decode the answer: " + err.Error(), Err: err}
}

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

// MaxLookupHosts is how many hosts one ByHost request carries; ByHost
// splits a longer list into several requests. It is the server's bound.
const MaxLookupHosts = 1000

// maxHostLen is the longest host the server looks up, a DNS name's limit.
const maxHostLen = 253

// ByHost returns the registered instances whose host name (any case) or IP
// address is one of hosts, in application app when app is not empty, with
// heureka's lookup (GET /v1/instances?host=...&app=...), which costs the
// answer rather than the registry. With several clusters each is asked and
// only the applications it owns are kept. Each instance appears once.
// Hosts that cannot match (empty, or longer than a DNS name) are not sent.
//
// It is heureka's own API: a plain Eureka server answers 404, which comes
// back as an error wrapping ErrNotRegistered (the caller may then fall back
// to a full fetch).
func (c *Client) ByHost(ctx context.Context, hosts []string, app string) ([]*heureka.Instance, error) {
	const op = "look up hosts"
	app = strings.ToUpper(strings.TrimSpace(app))
	var clusters []*cluster
	if app != "" {
		cl, err := c.mustCluster(op, app)
		if err != nil {
			return nil, err
		}
		clusters = []*cluster{cl}
	} else {
		clusters = c.clusters
	}
	// A host the server would refuse cannot match anything: leave it out.
	asked := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if t := strings.TrimSpace(h); t != "" && len(t) <= maxHostLen {
			asked = append(asked, t)
		}
	}
	hosts = asked
	var out []*heureka.Instance
	seen := map[[2]string]bool{}
	for _, cl := range clusters {
		for start := 0; start < len(hosts); start += MaxLookupHosts {
			batch := hosts[start:min(start+MaxLookupHosts, len(hosts))]
			got, err := c.lookupBatch(ctx, cl, op, batch, app)
			if err != nil {
				return nil, err
			}
			for _, in := range got {
				k := [2]string{in.App, in.ID}
				if owner, ok := c.clusterFor(in.App); !ok || owner != cl || seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, in)
			}
		}
	}
	return out, nil
}

func (c *Client) lookupBatch(ctx context.Context, cl *cluster, op string, hosts []string, app string) ([]*heureka.Instance, error) {
	q := url.Values{"host": hosts}
	if app != "" {
		q.Set("app", app)
	}
	req := &request{op: op, method: http.MethodGet, path: "/v1/instances", query: q, origin: true}
	got, _, err := decoded(ctx, c, cl, req, decodeInstanceList)
	return got, err
}

// decodeInstanceList decodes a heureka /v1 answer {"instances": [...]}.
func decodeInstanceList(b []byte) ([]*heureka.Instance, error) {
	var env struct {
		Instances []json.RawMessage `json:"instances"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, err
	}
	return decodeInstanceObjects(env.Instances)
}

// decodeInstanceObject decodes one instance of a heureka /v1 answer, which
// lists Eureka instance objects without their {"instance": ...} wrapper.
func decodeInstanceObject(raw json.RawMessage) (*heureka.Instance, error) {
	return eureka.DecodeServerInstance(append(append([]byte(`{"instance":`), raw...), '}'), eureka.JSON)
}

// decodeInstanceObjects decodes a list of them.
func decodeInstanceObjects(raws []json.RawMessage) ([]*heureka.Instance, error) {
	out := make([]*heureka.Instance, 0, len(raws))
	for _, raw := range raws {
		in, err := decodeInstanceObject(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
)

// Bounds of GET /v1/instances, so that one request costs a bounded amount.
const (
	// maxLookupHosts is how many hosts one lookup may ask for: Hadoop's
	// topology script gets its hosts in batches of 100 by default
	// (net.topology.script.number.args), ten times that leaves room.
	maxLookupHosts = 1000
	// maxLookupHostLen is a DNS name's limit (RFC 1035), which also covers
	// every IP address.
	maxLookupHostLen = 253
	// maxLookupInstances bounds the answer: a few instances per host for
	// the largest batch (about 1 KiB each, so a few MB at most).
	maxLookupInstances = 4 * maxLookupHosts
)

// lookupInstances is GET /v1/instances?host=H[&host=H2...][&app=A]: the
// instances whose host name (any case) or IP address is one of the hosts,
// in the application app when given, as Eureka instance JSON in a small
// envelope that also lists the hosts that matched nothing:
//
//	{"instances":[{...},...],"unmatched":["h3"]}
//
// Each instance appears once, in the order of the first host it matched.
// It reads the registry's host index, so it costs the answer, not the
// registry. The values are those of the last write; lastRenewalTimestamp
// is not refreshed per heartbeat (as in a listing).
func (s *Server) lookupInstances(w http.ResponseWriter, r *http.Request, _ params) error {
	q := r.URL.Query()
	for k := range q {
		if k != "host" && k != "app" {
			return heureka.Errorf(heureka.EINVALID, "unknown query parameter %q: /v1/instances takes host (repeated) and app", k)
		}
	}
	hosts := q["host"]
	switch {
	case len(hosts) == 0:
		return heureka.Errorf(heureka.EINVALID, "no host: give host=NAME_OR_IP, repeated for several (at most %d)", maxLookupHosts)
	case len(hosts) > maxLookupHosts:
		return heureka.Errorf(heureka.EINVALID, "%d hosts asked: at most %d per request; split the batch", len(hosts), maxLookupHosts)
	case len(q["app"]) > 1:
		return heureka.Errorf(heureka.EINVALID, "app given %d times: give at most one", len(q["app"]))
	}
	for _, h := range hosts {
		if t := strings.TrimSpace(h); t == "" || len(t) > maxLookupHostLen {
			return heureka.Errorf(heureka.EINVALID, "host %.64q: want a host name or IP address of 1 to %d characters", h, maxLookupHostLen)
		}
	}
	app := q.Get("app")
	if len(app) > s.cfg.Limits.MaxFieldLength {
		return heureka.Errorf(heureka.EINVALID, "app is %d bytes long: at most %d", len(app), s.cfg.Limits.MaxFieldLength)
	}
	matches, truncated := s.reg.ByHost(hosts, app, maxLookupInstances)
	if truncated {
		return heureka.Errorf(heureka.EINVALID, "the %d hosts match more than %d instances: ask for fewer hosts at once, or name an app", len(hosts), maxLookupInstances)
	}
	body := append(make([]byte, 0, 1024), `{"instances":[`...)
	seen := map[*heureka.Instance]bool{}
	var unmatched []string
	for _, m := range matches {
		if len(m.Instances) == 0 {
			unmatched = append(unmatched, m.Host)
		}
		for _, in := range m.Instances {
			if seen[in] {
				continue
			}
			if len(seen) > 0 {
				body = append(body, ',')
			}
			seen[in] = true
			body = eureka.AppendInstance(body, eureka.JSON, in)
		}
	}
	body = append(body, `],"unmatched":`...)
	if unmatched == nil {
		unmatched = []string{}
	}
	u, err := json.Marshal(unmatched)
	if err != nil {
		return err
	}
	body = append(append(body, u...), '}')
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: body})
	return nil
}

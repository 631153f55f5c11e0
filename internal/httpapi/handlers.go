package httpapi

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/registry"
)

// replicationHeader marks a call from a peer server; Eureka compares its
// value to exactly "true".
const replicationHeader = "x-netflix-discovery-replication"

// replicationKey is the header's canonical form, which header looks up.
var replicationKey = http.CanonicalHeaderKey(replicationHeader)

// header is the first value of the header named key, which must be in
// canonical form. Header.Get canonicalises its key on every call, and a
// renewal looks up four headers (TestHeaderKeysAreCanonical checks them).
func header(r *http.Request, key string) string {
	if v := r.Header[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func isReplication(r *http.Request) bool { return header(r, replicationKey) == "true" }

// toldPeers is the peers the client sends this write to itself
// (heureka.ToldPeersHeader), as sent; "" when it names none. Matching it to
// peers is the replicator's. The X-Heureka-Every-Peer that older agents
// send is not read: it claimed every peer even when the agent told none.
func toldPeers(r *http.Request) string { return header(r, heureka.ToldPeersHeader) }

func readFormat(r *http.Request) eureka.Format { return eureka.FormatFor(r.Header.Get("Accept")) }

// register is POST /apps/{APP}: 204 on success, 400 with Eureka's message
// when the body cannot be read or fails validation.
func (s *Server) register(w http.ResponseWriter, r *http.Request, p params) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	f, err := eureka.SniffFormat(body, r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	if f == eureka.JSON {
		if err := checkUTF8(body); err != nil {
			return err
		}
	}
	in, err := eureka.DecodeInstance(body, f)
	if err != nil {
		return err
	}
	// Eureka's order: missing fields first, then the path/body app match.
	if err := in.Validate(s.cfg.Limits); err != nil {
		return err
	}
	if in.App != p.app {
		return heureka.Errorf(heureka.EINVALID, "Mismatched appName, expecting %s but was %s", p.app, in.App)
	}
	// The instance ID is in the body: an agent scoped to some instances
	// may register only those (admit saw the app alone).
	if pr := p.who.principal; pr != nil && s.cfg.Auth != nil && !isReplication(r) {
		if _, err := s.cfg.Auth.Authorize(pr, auth.Request{Action: auth.Write, Verb: "register", App: in.App, ID: in.ID}); err != nil {
			return err
		}
	}
	if err := s.reg.RegisterOwned(registry.RegisterRequest{Instance: in, Replication: isReplication(r), Told: toldPeers(r)}); err != nil {
		return err
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}

// renew is PUT /apps/{APP}/{ID}, the heartbeat: 200 with an empty body, 404
// to make the client register again, and 409 with the stored instance when a
// peer's copy is older than ours. The status query parameter is ignored, as
// Eureka does.
func (s *Server) renew(w http.ResponseWriter, r *http.Request, p params) error {
	q := parseHotQuery(r.URL.RawQuery)
	ldt, err := parseTimestamp("lastDirtyTimestamp", q.Get("lastDirtyTimestamp"))
	if err != nil {
		return err
	}
	req := registry.RenewRequest{
		App:                p.app,
		ID:                 p.id,
		LastDirtyTimestamp: ldt,
		OverriddenStatus:   heureka.LenientStatus(q.Get("overriddenstatus"), ""),
		Replication:        isReplication(r),
		Told:               toldPeers(r),
	}
	in, err := s.reg.Renew(req)
	if err != nil {
		if in != nil && heureka.ErrorCode(err) == heureka.ECONFLICT {
			f := readFormat(r)
			writePayload(w, r, http.StatusConflict, &payload{format: f, body: eureka.EncodeInstance(f, in)})
			return nil
		}
		return err
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

// cancel is DELETE /apps/{APP}/{ID}: 200, or 404 for an unknown instance.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, p params) error {
	if err := s.reg.Cancel(registry.CancelRequest{App: p.app, ID: p.id, Replication: isReplication(r)}); err != nil {
		return err
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

// setStatus is PUT /apps/{APP}/{ID}/status?value=S[&lastDirtyTimestamp=T].
// A missing or unknown value is 400 with a message; Eureka answers 500,
// which makes Java clients fail over to another server for a bad request.
func (s *Server) setStatus(w http.ResponseWriter, r *http.Request, p params) error {
	q := r.URL.Query()
	v := q.Get("value")
	if v == "" {
		return heureka.Errorf(heureka.EINVALID, "missing query parameter value: want one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN")
	}
	st, err := heureka.ParseStatus(v)
	if err != nil {
		return err
	}
	return s.writeStatus(w, r, p, st, s.reg.SetStatus)
}

// deleteStatus is DELETE /apps/{APP}/{ID}/status[?value=S]: the override is
// removed and the status becomes S, UNKNOWN when value is absent.
func (s *Server) deleteStatus(w http.ResponseWriter, r *http.Request, p params) error {
	q := r.URL.Query()
	st := heureka.StatusUnknown
	if v := q.Get("value"); v != "" {
		var err error
		if st, err = heureka.ParseStatus(v); err != nil {
			return err
		}
	}
	return s.writeStatus(w, r, p, st, s.reg.DeleteStatusOverride)
}

// writeStatus ends setStatus and deleteStatus: write is called with the
// request's lastDirtyTimestamp, and the answer is an empty 200.
func (s *Server) writeStatus(w http.ResponseWriter, r *http.Request, p params, st heureka.Status,
	write func(app, id string, st heureka.Status, lastDirty int64, replication bool) error) error {
	ldt, err := parseTimestamp("lastDirtyTimestamp", r.URL.Query().Get("lastDirtyTimestamp"))
	if err != nil {
		return err
	}
	if err := write(p.app, p.id, st, ldt, isReplication(r)); err != nil {
		return err
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

// updateMetadata is PUT /apps/{APP}/{ID}/metadata?k=v&k2=v2: the first
// value of every query parameter is merged into the instance's metadata.
// The registry checks the result against its limits.
func (s *Server) updateMetadata(w http.ResponseWriter, r *http.Request, p params) error {
	q := r.URL.Query()
	md := make(map[string]string, len(q))
	for k, vs := range q {
		if len(vs) > 0 {
			// The registry checks keys; a value only for control
			// characters, so bytes that are not UTF-8 are refused here,
			// where they were percent-decoded.
			if !utf8.ValidString(vs[0]) {
				return heureka.Errorf(heureka.EINVALID, "metadata value of %q is not valid UTF-8", strings.ToValidUTF8(k, "?"))
			}
			md[k] = vs[0]
		}
	}
	if err := s.reg.UpdateMetadata(p.app, p.id, md); err != nil {
		return err
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

// getApps is GET /apps, the full registry. The regions parameter is
// accepted and ignored: there is one region.
func (s *Server) getApps(w http.ResponseWriter, r *http.Request, _ params) error {
	f := readFormat(r)
	snap := s.enc.snapshot(f, listFull, "")
	// heureka's clients watch from the version this listing was read at.
	w.Header().Set(versionHeader, strconv.FormatUint(snap.Version, 10))
	writePayload(w, r, http.StatusOK, s.cache.get(versionOf(snap), cacheKey{res: resApps, format: f}, s.enc.build(func() *payload {
		return listingPayload(f, 1, snap.HashCode(), snap.Blocks())
	})))
	return nil
}

// getDelta is GET /apps/delta: recent changes, with the whole registry's
// hash code. The snapshot's delta changes only at a write or when its
// oldest entry leaves the window, and then only in the blocks touched.
func (s *Server) getDelta(w http.ResponseWriter, r *http.Request, _ params) error {
	f := readFormat(r)
	snap := s.enc.snapshot(f, listDelta, "")
	writePayload(w, r, http.StatusOK, s.deltas.get(stampOf(snap), cacheKey{res: resDelta, format: f}, s.enc.build(func() *payload {
		return listingPayload(f, int64(snap.Version), snap.HashCode(), snap.DeltaBlocks())
	})))
	return nil
}

// getApp is GET /apps/{APP}: 404 when the application has no instances.
func (s *Server) getApp(w http.ResponseWriter, r *http.Request, p params) error {
	f := readFormat(r)
	snap := s.enc.snapshot(f, listFull, p.app)
	app, ok := snap.AppBlocks(p.app)
	if !ok || app.Len() == 0 {
		return heureka.Errorf(heureka.ENOTFOUND, "application %s has no instances", p.app)
	}
	writePayload(w, r, http.StatusOK, s.cache.get(versionOf(snap), cacheKey{res: resApp, name: p.app, format: f}, s.enc.build(func() *payload {
		return appPayload(f, app)
	})))
	return nil
}

// getInstance is GET /apps/{APP}/{ID}. Not cached, like Eureka's.
func (s *Server) getInstance(w http.ResponseWriter, r *http.Request, p params) error {
	in, ok := s.reg.Snapshot().Instance(p.app, p.id)
	if !ok || in == nil {
		return heureka.Errorf(heureka.ENOTFOUND, "instance %s of application %s is not registered", p.id, p.app)
	}
	s.writeLiveInstance(w, r, in)
	return nil
}

// writeLiveInstance answers with one instance, its lastRenewalTimestamp
// read from the lease now: like Eureka's, single-instance reads are not
// cached, so a heartbeat shows at once.
func (s *Server) writeLiveInstance(w http.ResponseWriter, r *http.Request, in *heureka.Instance) {
	if t, ok := s.reg.LastRenewal(in.App, in.ID); ok {
		c := *in // shallow: only a lease field changes
		c.Lease.LastRenewalTimestamp = t.UnixMilli()
		in = &c
	}
	f := readFormat(r)
	writePayload(w, r, http.StatusOK, &payload{format: f, body: eureka.EncodeInstance(f, in)})
}

// getInstanceByID is GET /instances/{ID}.
func (s *Server) getInstanceByID(w http.ResponseWriter, r *http.Request, p params) error {
	in, ok := s.reg.Snapshot().InstanceByID(p.id)
	if !ok || in == nil {
		return heureka.Errorf(heureka.ENOTFOUND, "instance %s is not registered", p.id)
	}
	s.writeLiveInstance(w, r, in)
	return nil
}

// getVIP is GET /vips/{vip}: 200 with an empty list when nothing matches.
func (s *Server) getVIP(w http.ResponseWriter, r *http.Request, p params) error {
	return s.serveVIP(w, r, p.vip, false)
}

// getSecureVIP is GET /svips/{svip}.
func (s *Server) getSecureVIP(w http.ResponseWriter, r *http.Request, p params) error {
	return s.serveVIP(w, r, p.vip, true)
}

func (s *Server) serveVIP(w http.ResponseWriter, r *http.Request, vip string, secure bool) error {
	snap := s.reg.Snapshot()
	f := readFormat(r)
	res := resVIP
	if secure {
		res = resSecureVIP
	}
	writePayload(w, r, http.StatusOK, s.cache.get(versionOf(snap), cacheKey{res: res, name: vip, format: f}, func() *payload {
		return encodedPayload(f, eureka.EncodeApplications(f, orEmpty(snap.VIP(vip, secure))))
	}))
	return nil
}

// healthz is GET /healthz: 200 while the process serves HTTP.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request, _ params) error {
	writeText(w, http.StatusOK, "ok\n")
	return nil
}

// readyz is GET /readyz: 200 when Config.Ready says so, else 503.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request, _ params) error {
	if !s.cfg.Ready() {
		writeText(w, http.StatusServiceUnavailable, "not ready\n")
		return nil
	}
	writeText(w, http.StatusOK, "ok\n")
	return nil
}

// serveMetrics is GET /metrics in the Prometheus exposition formats.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, _ params) error {
	s.metrics.handler.ServeHTTP(w, r)
	return nil
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg)
}

// parseTimestamp reads v, the optional millisecond timestamp of query
// parameter name; absent is 0.
func parseTimestamp(name, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, heureka.Errorf(heureka.EINVALID, "%s %q is not a timestamp in milliseconds since the epoch", name, v)
	}
	return n, nil
}

// orEmpty keeps encoders from ever seeing nil: an empty registry is still a
// list ("application":[]), never a missing one.
func orEmpty(apps *heureka.Applications) *heureka.Applications {
	if apps == nil {
		return &heureka.Applications{}
	}
	return apps
}

// hotQuery reads a renewal's few query parameters (status,
// lastDirtyTimestamp, overriddenstatus) as url.Values.Get would, without
// building url.ParseQuery's map: a third of a kilobyte on every heartbeat of
// a real client. A query that holds an escape ('%' or '+') or a ';' is
// parsed by url.ParseQuery, so that both ways agree on every input.
type hotQuery struct {
	raw    string     // a query without escapes, read pair by pair
	parsed url.Values // or, for one with them, url.ParseQuery's map
}

// parseHotQuery looks at the raw query once, whatever number of
// parameters are then read from it.
func parseHotQuery(raw string) hotQuery {
	if strings.ContainsAny(raw, "%+;") {
		v, _ := url.ParseQuery(raw) // as r.URL.Query(): a bad pair is dropped
		return hotQuery{parsed: v}
	}
	return hotQuery{raw: raw}
}

// Get returns the value of the first pair named key, or "".
func (q hotQuery) Get(key string) string {
	if q.parsed != nil {
		return q.parsed.Get(key)
	}
	for pair := range strings.SplitSeq(q.raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if k == key {
			return v
		}
	}
	return ""
}

package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/auth"
	"github.com/heureka-project/heureka/internal/dashboard"
	"github.com/heureka-project/heureka/replication"
)

// handlerFunc serves one matched route. A returned error is written by
// writeError; a handler that returns nil has written its own response.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p params) error

// params are the variable path segments of a matched route, and who sent
// the request. App is upper-cased, as Eureka does; IDs and VIPs are
// case-sensitive.
type params struct {
	app, id, vip string
	who          caller
}

// methods are a route's handlers, by HTTP method.
type methods = map[string]handlerFunc

// route is one path pattern and the methods it serves. The pattern is also
// the metrics label, so its cardinality is bounded by this table.
type route struct {
	pattern string
	segs    []segment
	methods methods
	access  map[string]access // by method; see accessOf
}

// segment is one segment of a route's pattern: a literal, or a parameter
// ({app}, {id} or {vip}) that takes whatever the request has there.
type segment struct {
	lit   string
	param string // "" for a literal
}

// access is what a route asks of its caller.
type access struct {
	open   bool        // served to anyone, credentials unread: health and metrics
	action auth.Action // what it does, when auth is on
	verb   string      // for messages and audit lines
	stream bool        // a long-lived stream that sets its own deadlines
}

// accessOf classifies each method of a route for authorisation, limits and
// deadlines. Reads (GET, HEAD) need the read permission unless listed;
// writes to instances are auth.Write, checked against the caller's scope;
// any other method of a route not listed here needs the operator role, so
// a route added without thought fails closed.
func accessOf(pattern, method string) access {
	switch pattern {
	case "/healthz", "/readyz", "/metrics":
		return access{open: true}
	case "/peerreplication/batch", "/v1/replication/digest", "/v1/replication/apps/{app}", "/v1/replication/apps/{app}/digests":
		return access{action: auth.Replicate, verb: "use the peer replication endpoint " + pattern}
	case "/v1/watch", "/v1/events":
		return access{action: auth.Read, verb: "read the registry", stream: true}
	}
	write := map[string]string{
		"/apps/{app} POST":               "register",
		"/apps/{app}/{id} PUT":           "renew",
		"/apps/{app}/{id} DELETE":        "cancel",
		"/apps/{app}/{id}/status PUT":    "set the status of",
		"/apps/{app}/{id}/status DELETE": "clear the status override of",
		"/apps/{app}/{id}/metadata PUT":  "update the metadata of",
	}[pattern+" "+method]
	switch {
	case write != "":
		return access{action: auth.Write, verb: write}
	case method == http.MethodGet || method == http.MethodHead:
		return access{action: auth.Read, verb: "read the registry"}
	}
	return access{action: auth.Operate, verb: method + " " + pattern}
}

// classify fills every route's access table.
func classify(routes ...[]*route) {
	for _, rs := range routes {
		for _, rt := range rs {
			rt.access = make(map[string]access, len(rt.methods))
			for m := range rt.methods {
				rt.access[m] = accessOf(rt.pattern, m)
			}
		}
	}
}

// routeTable is the whole route table. Eureka resources are matched after
// an optional prefix is stripped (see stripPrefix); heureka's own endpoints
// only at the root. Order matters: the first pattern whose segments match
// wins, so literals come before variables (/apps/delta before /apps/{app}).
func (s *Server) routeTable() (eurekaRoutes, own []*route) {
	eurekaRoutes = []*route{
		newRoute("/apps", methods{http.MethodGet: s.getApps}),
		newRoute("/apps/delta", methods{http.MethodGet: s.getDelta}),
		newRoute("/apps/{app}", methods{http.MethodGet: s.getApp, http.MethodPost: s.register}),
		newRoute("/apps/{app}/{id}", methods{http.MethodGet: s.getInstance, http.MethodPut: s.renew, http.MethodDelete: s.cancel}),
		newRoute("/apps/{app}/{id}/status", methods{http.MethodPut: s.setStatus, http.MethodDelete: s.deleteStatus}),
		newRoute("/apps/{app}/{id}/metadata", methods{http.MethodPut: s.updateMetadata}),
		newRoute("/instances/{id}", methods{http.MethodGet: s.getInstanceByID}),
		newRoute("/vips/{vip}", methods{http.MethodGet: s.getVIP}),
		newRoute("/svips/{vip}", methods{http.MethodGet: s.getSecureVIP}),
		newRoute("/peerreplication/batch", methods{http.MethodPost: s.peerBatch}),
	}
	own = []*route{
		newRoute("/healthz", methods{http.MethodGet: s.healthz}),
		newRoute("/readyz", methods{http.MethodGet: s.readyz}),
		newRoute("/metrics", methods{http.MethodGet: s.serveMetrics}),
		newRoute("/v1/status", methods{http.MethodGet: s.status}),
		newRoute("/v1/watch", methods{http.MethodGet: s.watch}),
		newRoute("/v1/events", methods{http.MethodGet: s.events}),
		newRoute("/v1/instances", methods{http.MethodGet: s.lookupInstances}),
		newRoute("/v1/hdfs/pick", methods{http.MethodGet: s.hdfsPick}),
		newRoute("/v1/replication/digest", methods{http.MethodGet: s.peerDigest}),
		newRoute("/v1/replication/apps/{app}", methods{http.MethodGet: s.peerApp}),
		newRoute("/v1/replication/apps/{app}/digests", methods{http.MethodGet: s.peerAppDigests}),
		// The dashboard (internal/dashboard): its summary, the page at /, its assets at /ui/NAME.
		newRoute(dashboard.SummaryPath, methods{http.MethodGet: func(w http.ResponseWriter, r *http.Request, _ params) error {
			return dashboard.ServeSummary(w, r, s.reg.Snapshot())
		}}),
		newRoute("/", methods{http.MethodGet: func(w http.ResponseWriter, r *http.Request, _ params) error { return dashboard.ServeIndex(w, r) }}),
		newRoute(dashboard.AssetPrefix+"{id}", methods{http.MethodGet: func(w http.ResponseWriter, r *http.Request, p params) error { return dashboard.ServeAsset(w, r, p.id) }}),
	}
	return eurekaRoutes, own
}

// peerBatch, peerDigest and peerApp mount the replication package's
// receive side (replication.Receiver), which owns the protocol; what is
// here is HTTP: the body's bounds and encoding, and the answer's.
func (s *Server) peerBatch(w http.ResponseWriter, r *http.Request, _ params) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	node, num := r.Header.Get(replication.NodeHeader), r.Header.Get(replication.BatchSeqHeader)
	if node == "" || num == "" {
		// A Java peer, or a heureka server from before batches were
		// numbered: applied in the order they come.
		out, err := s.peers.Batch(body)
		if err != nil {
			return err
		}
		writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: out})
		return nil
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return heureka.Errorf(heureka.EINVALID, "header %s %q: want a decimal batch number", replication.BatchSeqHeader, num)
	}
	out, last, err := s.peers.BatchInOrder(node, seq, body)
	if last > 0 {
		w.Header().Set(replication.BatchSeqHeader, strconv.FormatUint(last, 10))
	}
	if err != nil {
		return err
	}
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: out})
	return nil
}

func (s *Server) peerDigest(w http.ResponseWriter, r *http.Request, _ params) error {
	out, err := s.peers.Digest()
	if err != nil {
		return err
	}
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: out})
	return nil
}

// peerApp answers a peer's anti-entropy with an application, or, given id
// query parameters (at most maxPeerAppIDs), with those of its instances.
func (s *Server) peerApp(w http.ResponseWriter, r *http.Request, p params) error {
	ids := r.URL.Query()["id"]
	if len(ids) > maxPeerAppIDs {
		return heureka.Errorf(heureka.EINVALID, "%d id parameters: ask for at most %d instances, or for the whole application", len(ids), maxPeerAppIDs)
	}
	out, err := s.peers.App(p.app, ids...)
	if err != nil {
		return err
	}
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: out})
	return nil
}

// maxPeerAppIDs bounds the instances one anti-entropy request names; the
// replicator asks for at most 64.
const maxPeerAppIDs = 1024

// peerAppDigests answers a peer's anti-entropy with the digest of each
// instance of an application.
func (s *Server) peerAppDigests(w http.ResponseWriter, r *http.Request, p params) error {
	out, err := s.peers.AppDigests(p.app)
	if err != nil {
		return err
	}
	writePayload(w, r, http.StatusOK, &payload{format: eureka.JSON, body: out})
	return nil
}

func newRoute(pattern string, hs methods) *route {
	if h, ok := hs[http.MethodGet]; ok {
		if _, ok := hs[http.MethodHead]; !ok {
			hs[http.MethodHead] = h // net/http drops the body
		}
	}
	var segs []segment
	for _, s := range splitPath(pattern) {
		if strings.HasPrefix(s, "{") {
			segs = append(segs, segment{param: s})
		} else {
			segs = append(segs, segment{lit: s})
		}
	}
	return &route{pattern: pattern, segs: segs, methods: hs}
}

// match finds the route and handler for r. The error is ENOTFOUND for an
// unknown path and a *methodError (405) when the path is known but the
// method is not; rt is set in the latter case too, for metrics.
func (s *Server) match(r *http.Request) (rt *route, h handlerFunc, p params, err error) {
	var buf [8]string // deeper paths are no route's; append moves them to the heap
	segs, err := appendSegments(buf[:0], r.URL)
	if err != nil {
		return nil, nil, p, err
	}
	rt, p = s.own.match(segs)
	if rt == nil {
		rt, p = s.routes.match(stripPrefix(segs))
	}
	if rt == nil {
		return nil, nil, p, heureka.Errorf(heureka.ENOTFOUND, "no resource at %s", r.URL.Path)
	}
	h, ok := rt.methods[r.Method]
	if !ok {
		return rt, nil, p, &methodError{method: r.Method, allow: rt.allow()}
	}
	return rt, h, p, nil
}

// routeSet holds routes by their number of segments, each list in table
// order, so that a request is compared only with the routes of its depth.
type routeSet [][]*route

func newRouteSet(routes []*route) routeSet {
	var rs routeSet
	for _, rt := range routes {
		for len(rs) <= len(rt.segs) {
			rs = append(rs, nil)
		}
		rs[len(rt.segs)] = append(rs[len(rt.segs)], rt)
	}
	return rs
}

// match returns the first route, in table order, that segs match.
func (rs routeSet) match(segs []string) (*route, params) {
	if len(segs) >= len(rs) {
		return nil, params{}
	}
	for _, rt := range rs[len(segs)] {
		if p, ok := rt.matchSegments(segs); ok {
			return rt, p
		}
	}
	return nil, params{}
}

// matchSegments compares the literals first and fills the parameters only
// for a route that matches.
func (rt *route) matchSegments(segs []string) (params, bool) {
	var p params
	if len(segs) != len(rt.segs) {
		return p, false
	}
	for i, want := range rt.segs {
		if want.param == "" && segs[i] != want.lit {
			return p, false
		}
	}
	for i, want := range rt.segs {
		switch want.param {
		case "{app}":
			p.app = strings.ToUpper(segs[i])
		case "{id}":
			p.id = segs[i]
		case "{vip}":
			p.vip = segs[i]
		}
	}
	return p, true
}

func (rt *route) allow() []string {
	var ms []string
	for m := range rt.methods {
		ms = append(ms, m)
	}
	slices.Sort(ms)
	return ms
}

// appendSegments appends the request path's non-empty segments to segs, which
// collapses repeated slashes and drops a trailing one. Each segment is
// percent-decoded separately, so an encoded slash stays inside its segment.
func appendSegments(segs []string, u *url.URL) ([]string, error) {
	if u.RawPath == "" {
		// net/url keeps RawPath only when the request escaped its path in
		// a way Path's default escaping would not reproduce, an escaped
		// slash above all. Without one, the decoded path splits into the
		// same segments as the escaped one, unescaped: every renewal
		// takes this way.
		for s := range strings.SplitSeq(u.Path, "/") {
			if s != "" {
				segs = append(segs, s)
			}
		}
		return segs, nil
	}
	return appendUnescaped(segs, u.EscapedPath())
}

// appendUnescaped splits an escaped path at its slashes and unescapes each
// segment, so that an escaped slash stays inside its segment.
func appendUnescaped(segs []string, escaped string) ([]string, error) {
	for s := range strings.SplitSeq(escaped, "/") {
		if s == "" {
			continue
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, heureka.Errorf(heureka.EINVALID, "bad path segment %q: %v", s, err)
		}
		segs = append(segs, d)
	}
	return segs, nil
}

func splitPath(p string) []string {
	var segs []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// stripPrefix removes the mount prefixes Eureka deployments use:
// /eureka/v2 (Netflix WAR), /eureka (Spring Cloud), /eureka/v1, and a bare
// /v1 or /v2 at the root. Only the leading segments are looked at, so an
// application named EUREKA or V2 still routes.
func stripPrefix(segs []string) []string {
	if len(segs) > 0 && segs[0] == "eureka" {
		segs = segs[1:]
	}
	if len(segs) > 0 && (segs[0] == "v2" || segs[0] == "v1") {
		segs = segs[1:]
	}
	return segs
}

// methodError is a known path asked with a method it does not serve.
type methodError struct {
	method string
	allow  []string
}

func (e *methodError) Error() string {
	return fmt.Sprintf("method %s is not allowed here; allowed: %s", e.method, strings.Join(e.allow, ", "))
}

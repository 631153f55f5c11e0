package webhdfs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/auth"
)

// Prefix is the WebHDFS REST API's path prefix.
const Prefix = "/webhdfs/v1"

// Bounds on what a caller may send.
const (
	maxPathBytes  = 8000  // the NameNode refuses longer paths (HdfsServerConstants.MAX_PATH_LENGTH)
	maxQueryBytes = 16384 // with excludedatanodes added, still well inside a NameNode's 64 KiB header limit
	maxErrorBody  = 64 << 10
)

// Gateway is a WebHDFS endpoint that forwards every request to the
// cluster's active NameNode as the registry knows it. Build it with New;
// it is an http.Handler.
type Gateway struct {
	cfg     Config
	log     *slog.Logger
	client  *http.Client
	dialer  net.Dialer
	metrics *metrics

	mu      sync.Mutex
	changed chan struct{} // closed and replaced by Notify

	lastActive atomic.Pointer[string]
}

// New checks cfg and returns a Gateway. It starts nothing.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Penalties == nil {
		cfg.Penalties = hdfs.NewPenalties(hdfs.DefaultPenalty, nil)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		tr = t
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg: cfg,
		log: logger.With("subsystem", "gateway", "cluster", cfg.Cluster),
		client: &http.Client{
			Transport: tr,
			// Redirects are the client's to follow, after we check them.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		dialer:  net.Dialer{Timeout: cfg.ProbeTimeout},
		metrics: m,
		changed: make(chan struct{}),
	}
	return g, nil
}

// Notify tells the gateway that the registry changed (wire it to
// client.Cache.OnChange): requests waiting for a new active NameNode look
// again at once.
func (g *Gateway) Notify() {
	g.mu.Lock()
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

func (g *Gateway) changes() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// call is one request in flight.
type call struct {
	op      string // upper case
	path    string // as sent, escaped
	query   url.Values
	method  string
	header  http.Header
	remote  string // the caller's IP address
	started time.Time
}

// ServeHTTP answers one WebHDFS request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	started := time.Now()
	c, rerr := g.parse(r)
	op := "invalid"
	if c != nil {
		op = c.op
	}
	if rerr == nil {
		rerr = g.authorize(r)
	}
	if rerr == nil {
		rerr = drainBody(r, g.cfg.MaxBody)
	}
	if rerr != nil {
		g.metrics.request(op, "rejected", started)
		writeRemote(w, rerr)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), g.cfg.RequestTimeout)
	defer cancel()
	outcome := g.forward(ctx, w, c)
	g.metrics.request(op, outcome, c.started)
}

// parse checks the request line: path, op, required parameters, sizes.
func (g *Gateway) parse(r *http.Request) (*call, *remoteError) {
	if r.URL.Path != Prefix && !strings.HasPrefix(r.URL.Path, Prefix+"/") {
		return nil, newRemote(http.StatusNotFound, "java.io.FileNotFoundException", "%s is not a WebHDFS path: the gateway serves %s/PATH?op=...", clip(r.URL.Path), Prefix)
	}
	p := strings.TrimPrefix(r.URL.Path, Prefix)
	if p == "" {
		p = "/"
	}
	if len(p) > maxPathBytes {
		return nil, illegalArgument("the path is %d bytes long; at most %d are accepted", len(p), maxPathBytes)
	}
	if len(r.URL.RawQuery) > maxQueryBytes {
		return nil, illegalArgument("the query is %d bytes long; at most %d are accepted", len(r.URL.RawQuery), maxQueryBytes)
	}
	for part := range strings.SplitSeq(p, "/") {
		if part == "." || part == ".." || strings.ContainsAny(part, ":\x00") {
			return nil, newRemote(http.StatusBadRequest, "org.apache.hadoop.fs.InvalidPathException",
				"Invalid path name %s: HDFS paths may not contain \".\" or \"..\" components, ':' or NUL", clip(p))
		}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, illegalArgument("the query cannot be parsed: %v", err)
	}
	raw := q.Get("op")
	if raw == "" {
		return nil, illegalArgument("Invalid value for webhdfs parameter \"op\": the op parameter is missing; add ?op=GETFILESTATUS, LISTSTATUS, OPEN, CREATE, ...")
	}
	op := strings.ToUpper(raw)
	spec, ok := operations[op]
	if !ok || spec.method != r.Method {
		if ok {
			return nil, illegalArgument("Invalid value for webhdfs parameter \"op\": %s is sent with HTTP %s, not %s", op, spec.method, r.Method)
		}
		return nil, illegalArgument("Invalid value for webhdfs parameter \"op\": unknown operation %q", clip(raw))
	}
	for _, need := range spec.required {
		if q.Get(need) == "" {
			return nil, illegalArgument("Invalid value for webhdfs parameter %q: %s needs it", need, op)
		}
	}
	remote, _, _ := net.SplitHostPort(r.RemoteAddr)
	return &call{op: op, path: r.URL.EscapedPath(), query: q, method: r.Method, header: r.Header, remote: remote, started: time.Now()}, nil
}

// authorize applies Config.Auth, if any.
func (g *Gateway) authorize(r *http.Request) *remoteError {
	if g.cfg.Auth == nil {
		return nil
	}
	p, err := g.cfg.Auth.Authenticate(r)
	if err != nil {
		return newRemote(http.StatusUnauthorized, "org.apache.hadoop.security.AccessControlException", "gateway authentication: %v", err)
	}
	if r.Method == http.MethodGet {
		if _, err := g.cfg.Auth.Authorize(p, auth.Request{Action: auth.Read, Verb: "read through the WebHDFS gateway"}); err != nil {
			return newRemote(http.StatusForbidden, "org.apache.hadoop.security.AccessControlException", "gateway: %v", err)
		}
		return nil
	}
	if p == nil {
		return newRemote(http.StatusUnauthorized, "org.apache.hadoop.security.AccessControlException",
			"gateway: %s changes the file system and needs credentials (Authorization: Bearer TOKEN or basic auth)", r.Method)
	}
	return nil
}

// drainBody refuses a body over max and discards the rest: WebHDFS's
// first step carries no data, and the gateway never forwards one. A
// client that asked "Expect: 100-continue" (curl -L -T does) has sent
// nothing yet: it gets its 307 without being asked for the body, and
// sends the data to the DataNode, as it would with a NameNode.
func drainBody(r *http.Request, max int64) *remoteError {
	if strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return nil
	}
	if r.ContentLength > max {
		return newRemote(http.StatusRequestEntityTooLarge, "java.lang.IllegalArgumentException",
			"the request carries %d bytes; the gateway takes at most %d: send file data to the DataNode the 307 names, not to the gateway", r.ContentLength, max)
	}
	if r.Body == nil {
		return nil
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, max+1))
	if n > max {
		return newRemote(http.StatusRequestEntityTooLarge, "java.lang.IllegalArgumentException",
			"the request carries more than %d bytes; send file data to the DataNode the 307 names, not to the gateway", max)
	}
	return nil
}

// forward sends c to the active NameNode, retrying once on a new active
// one when the first was standby or unreachable, checks any redirect, and
// answers w. It returns the outcome for the metrics.
func (g *Gateway) forward(ctx context.Context, w http.ResponseWriter, c *call) string {
	var tried *heureka.Instance
	for attempt := 0; ; attempt++ {
		nn, rerr := g.active(ctx, tried)
		if rerr != nil {
			writeRemote(w, rerr)
			return "no_namenode"
		}
		res := g.exchange(ctx, w, c, nn)
		if !res.retry || attempt == 1 {
			if res.retry { // a second standby or refusal: tell the client
				writeRemote(w, res.err)
			}
			return res.outcome
		}
		g.metrics.standbyRetries.Inc()
		g.log.Info("retrying on the next active NameNode", "op", c.op, "namenode", nn.ID, "reason", res.outcome)
		tried = nn
	}
}

// active returns the active NameNode, other than not when the registry
// names another; it waits up to FailoverWait for the registry to name one.
func (g *Gateway) active(ctx context.Context, not *heureka.Instance) (*heureka.Instance, *remoteError) {
	wait := time.NewTimer(g.cfg.FailoverWait)
	defer wait.Stop()
	for {
		changed := g.changes()
		nns := g.cfg.NameNodes()
		res, err := hdfs.ResolveNameNodes(nns)
		if err == nil && (not == nil || res.Active.ID != not.ID) {
			g.noteActive(res.Active)
			return res.Active, nil
		}
		if len(nns) == 0 && g.synced() {
			// Nothing to fail over to: waiting would only delay the 503.
			return nil, newRemote(http.StatusServiceUnavailable, "org.apache.hadoop.ipc.RetriableException",
				"%s; retry later", noNameNodes(g.cfg.Cluster))
		}
		select {
		case <-changed:
			continue
		case <-wait.C:
		case <-ctx.Done():
		}
		if not != nil {
			return nil, newRemote(http.StatusServiceUnavailable, "org.apache.hadoop.ipc.StandbyException",
				"NameNode %s of cluster %s is not active and the registry names no other active NameNode after %v; retry later", not.ID, g.cfg.Cluster, g.cfg.FailoverWait)
		}
		msg := "no NameNode is registered"
		if err != nil {
			msg = err.Error()
		}
		return nil, newRemote(http.StatusServiceUnavailable, "org.apache.hadoop.ipc.RetriableException",
			"cluster %s has no active NameNode in the registry after %v (%s); retry later", g.cfg.Cluster, g.cfg.FailoverWait, msg)
	}
}

// synced reports whether the NameNode list reflects a full read of the
// registry (Config.Synced).
func (g *Gateway) synced() bool {
	if g.cfg.Synced == nil {
		return true
	}
	select {
	case <-g.cfg.Synced:
		return true
	default:
		return false
	}
}

// noNameNodes says that the registry has no NameNode of cluster, and what
// to check: a gateway's cluster name, or its NameNodes' agents.
func noNameNodes(cluster string) string {
	return fmt.Sprintf("no NameNode of cluster %q is registered (application %s): check the gateway's cluster name, and that the NameNodes' agents run",
		cluster, hdfs.AppName(hdfs.RoleNameNode, cluster))
}

// noteActive counts a change of active NameNode.
func (g *Gateway) noteActive(nn *heureka.Instance) {
	g.metrics.namenodeKnown.Set(1)
	prev := g.lastActive.Load()
	if prev != nil && *prev == nn.ID {
		return
	}
	id := nn.ID
	if g.lastActive.CompareAndSwap(prev, &id) && prev != nil {
		g.metrics.failovers.Inc()
		g.log.Info("following the new active NameNode", "from", *prev, "to", id)
	}
}

// result is the outcome of one exchange with a NameNode.
type result struct {
	outcome string
	retry   bool         // nothing was done; try the next active NameNode
	err     *remoteError // what to answer if there is no retry
}

// exchange sends c to nn and, unless it is to be retried, answers w.
func (g *Gateway) exchange(ctx context.Context, w http.ResponseWriter, c *call, nn *heureka.Instance) result {
	exclude := map[string]bool{}
	for rechosen := 0; ; rechosen++ {
		resp, rerr, retry := g.send(ctx, c, nn, exclude)
		if rerr != nil {
			if retry {
				return result{outcome: "namenode_unreachable", retry: true, err: rerr}
			}
			writeRemote(w, rerr)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return result{outcome: "timeout"}
			}
			return result{outcome: "namenode_unreachable"}
		}
		if resp.StatusCode == http.StatusForbidden {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
			if isStandby(body) {
				return result{outcome: "standby", retry: true, err: &remoteError{status: resp.StatusCode, raw: body}}
			}
			copyHeader(w.Header(), resp.Header)
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(body)
			return result{outcome: "client_error"}
		}
		if loc, body, ok := redirectOf(c, resp); ok {
			dn, reason := g.checkRedirect(ctx, loc, operations[c.op].write)
			if reason == "" {
				if body != nil { // noredirect=true: the Location in a JSON answer
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusOK)
					_, _ = w.Write(body)
					return result{outcome: "ok"}
				}
				w.Header().Set("Location", loc)
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Header().Set("Content-Length", "0")
				w.WriteHeader(http.StatusTemporaryRedirect)
				return result{outcome: "ok"}
			}
			g.metrics.rejectedRedirects.WithLabelValues(reason).Inc()
			addr, _ := hdfs.DataNodeAddress(dn)
			g.log.Info("the NameNode chose an unusable DataNode; asking again without it", "op", c.op, "datanode", dn.ID, "reason", reason)
			if rechosen == g.cfg.MaxRechoose || exclude[addr] {
				writeRemote(w, newRemote(http.StatusServiceUnavailable, "java.io.IOException",
					"the NameNode keeps choosing unusable DataNodes for %s (last %s: %s) after %d tries; the cluster may be short of live DataNodes", c.op, dn.ID, reason, rechosen+1))
				return result{outcome: "no_datanode"}
			}
			exclude[addr] = true
			continue
		}
		copyHeader(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, err := io.Copy(w, resp.Body)
		resp.Body.Close()
		switch {
		case err != nil:
			return result{outcome: "namenode_unreachable"}
		case resp.StatusCode >= 500:
			return result{outcome: "upstream_error"}
		case resp.StatusCode >= 400:
			return result{outcome: "client_error"}
		}
		return result{outcome: "ok"}
	}
}

// redirectOf reads the DataNode a NameNode's answer to a redirecting op
// sends the client to: a 307's Location, or with noredirect=true the
// {"Location": ...} of a 200 (body is then that answer, to pass on). ok
// is false for any other answer, which resp still holds unread.
func redirectOf(c *call, resp *http.Response) (loc string, body []byte, ok bool) {
	if !operations[c.op].redirects {
		return "", nil, false
	}
	switch {
	case resp.StatusCode == http.StatusTemporaryRedirect:
		resp.Body.Close()
		return resp.Header.Get("Location"), nil, true
	case resp.StatusCode == http.StatusOK && strings.EqualFold(c.query.Get("noredirect"), "true"):
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		var j struct{ Location string }
		if err != nil || json.Unmarshal(b, &j) != nil || j.Location == "" {
			// Not the answer WebHDFS.md describes: pass it on as it came.
			resp.Body = io.NopCloser(bytes.NewReader(b))
			return "", nil, false
		}
		return j.Location, b, true
	}
	return "", nil, false
}

// send makes one request to nn. A connection that could not be made is
// retry: the NameNode saw nothing.
func (g *Gateway) send(ctx context.Context, c *call, nn *heureka.Instance, extra map[string]bool) (*http.Response, *remoteError, bool) {
	q := url.Values{}
	for k, v := range c.query {
		q[k] = v
	}
	if ex := g.excluded(c.op, q.Get("excludedatanodes"), extra); ex != "" {
		q.Set("excludedatanodes", ex)
	}
	base := g.nameNodeBase(nn)
	u := base + c.path
	if enc := q.Encode(); enc != "" {
		u += "?" + enc
	}
	req, err := http.NewRequestWithContext(ctx, c.method, u, http.NoBody)
	if err != nil {
		return nil, newRemote(http.StatusBadRequest, "java.lang.IllegalArgumentException", "cannot forward the request: %v", err), false
	}
	copyHeader(req.Header, c.header)
	// Hadoop takes the client's address from X-Forwarded-For when the
	// gateway is listed in hadoop.proxyservers (JspHelper.getRemoteAddr),
	// and then places CREATE's first replica near the client.
	if c.remote != "" {
		if prior := req.Header.Get("X-Forwarded-For"); prior != "" {
			req.Header.Set("X-Forwarded-For", prior+", "+c.remote)
		} else {
			req.Header.Set("X-Forwarded-For", c.remote)
		}
	}
	req.Header.Del("Content-Length")
	req.Header.Del("Expect")
	if c.op == "CREATE" || c.op == "APPEND" {
		// The NameNode's part of these is a redirect to a DataNode that
		// changes nothing, so net/http may send it again when a kept-alive
		// connection turns out dead (the NameNode was killed after its
		// last answer); the new dial is then refused, and the request goes
		// to the next active NameNode. A key with no value marks the
		// request so without sending a header.
		req.Header["Idempotency-Key"] = nil
	}
	if g.cfg.Auth != nil {
		req.Header.Del("Authorization") // the gateway's credentials, not the NameNode's
	}
	resp, err := g.client.Do(req)
	if err == nil {
		return resp, nil, false
	}
	if ctx.Err() != nil {
		return nil, newRemote(http.StatusGatewayTimeout, "java.net.SocketTimeoutException",
			"NameNode %s (%s) did not answer %s within %v", nn.ID, base, c.op, g.cfg.RequestTimeout), false
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return nil, newRemote(http.StatusServiceUnavailable, "java.net.ConnectException",
			"NameNode %s (%s) refused the connection: %v", nn.ID, base, oe.Err), true
	}
	return nil, newRemote(http.StatusBadGateway, "java.io.IOException", "NameNode %s (%s): %v", nn.ID, base, err), false
}

// nameNodeBase is nn's web server, scheme://ip:http_port.
func (g *Gateway) nameNodeBase(nn *heureka.Instance) string {
	host := nn.IPAddr
	if host == "" {
		host = nn.HostName
	}
	return g.cfg.NameNodeScheme + "://" + net.JoinHostPort(host, strconv.Itoa(httpPort(nn, g.cfg.DefaultHTTPPort)))
}

func httpPort(in *heureka.Instance, def int) int {
	if n, err := strconv.Atoi(in.Metadata.Get(hdfs.MetaHTTPPort)); err == nil && n > 0 && n <= 65535 {
		return n
	}
	return def
}

// excluded is the excludedatanodes value for op: the caller's own
// entries, extra, and the DataNodes the registry says not to use, as
// "ip:xferPort" (what NamenodeWebHdfsMethods.chooseDatanode looks up with
// getDatanodeByXferAddr). Writes avoid DataNodes that are not UP,
// draining, too full or penalised; reads only those not UP or penalised.
func (g *Gateway) excluded(op, caller string, extra map[string]bool) string {
	spec := operations[op]
	if !spec.redirects {
		return caller
	}
	seen := map[string]bool{}
	var out []string
	add := func(a string) {
		if a != "" && !seen[a] && len(out) < g.cfg.MaxExcluded {
			seen[a] = true
			out = append(out, a)
		}
	}
	for e := range strings.SplitSeq(caller, ",") {
		add(strings.TrimSpace(e))
	}
	for a := range extra {
		add(a)
	}
	penalised := g.cfg.Penalties.Active(time.Now())
	added := 0
	for _, dn := range g.cfg.DataNodes() {
		if reason := g.unusable(dn, spec.write, penalised); reason != "" {
			if a, err := hdfs.DataNodeAddress(dn); err == nil && !seen[a] {
				add(a)
				added++
			}
		}
	}
	if added > 0 {
		g.metrics.excluded.Add(float64(added))
	}
	return strings.Join(out, ",")
}

// unusable says why dn must not get this request, or "".
func (g *Gateway) unusable(dn *heureka.Instance, write bool, penalised map[string]string) string {
	if _, ok := penalised[dn.ID]; ok {
		return "penalized"
	}
	if dn.Status != heureka.StatusUp {
		return "not_up"
	}
	if !write {
		return ""
	}
	if hdfs.IsDraining(dn) {
		return "draining"
	}
	total, err1 := strconv.ParseInt(dn.Metadata.Get(hdfs.MetaDiskTotal), 10, 64)
	used, err2 := strconv.ParseInt(dn.Metadata.Get(hdfs.MetaDiskUsed), 10, 64)
	if err1 == nil && err2 == nil && total > 0 && float64(used)/float64(total) > g.cfg.FullnessThreshold {
		return "full"
	}
	return ""
}

// checkRedirect finds the DataNode a 307 points at and says why it must
// not be used ("" to pass the redirect on). A Location the registry does
// not know is passed on: the gateway cannot exclude what it cannot name.
func (g *Gateway) checkRedirect(ctx context.Context, loc string, write bool) (*heureka.Instance, string) {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return nil, ""
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	var dn *heureka.Instance
	for _, in := range g.cfg.DataNodes() {
		if strconv.Itoa(httpPort(in, g.cfg.DataNodeHTTPPort)) == port &&
			(in.IPAddr == host || strings.EqualFold(in.HostName, host)) {
			if dn == nil || in.Status == heureka.StatusUp { // prefer the live one of duplicates
				dn = in
			}
		}
	}
	if dn == nil {
		g.metrics.unknownRedirects.Inc()
		return nil, ""
	}
	if reason := g.unusable(dn, write, g.cfg.Penalties.Active(time.Now())); reason != "" {
		return dn, reason
	}
	if g.cfg.ProbeTimeout > 0 {
		conn, err := g.dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
		if err != nil {
			g.cfg.Penalties.Penalize(dn.ID, "gateway probe: "+err.Error())
			return dn, "probe_failed"
		}
		conn.Close()
	}
	return dn, ""
}

func isStandby(body []byte) bool {
	var e struct {
		RemoteException struct {
			Exception     string `json:"exception"`
			JavaClassName string `json:"javaClassName"`
		} `json:"RemoteException"`
	}
	if json.Unmarshal(body, &e) != nil {
		return bytes.Contains(body, []byte("StandbyException"))
	}
	return e.RemoteException.Exception == "StandbyException" || strings.HasSuffix(e.RemoteException.JavaClassName, ".StandbyException")
}

// hop-by-hop headers, never forwarded (RFC 9110 section 7.6.1).
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		if !hopByHop[k] {
			dst[k] = append([]string(nil), vs...)
		}
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

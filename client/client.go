package client

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/urlcheck"
)

// Client makes Eureka-protocol calls against one or more registry
// clusters. It is safe for concurrent use; build it with New and release
// its idle connections with Close.
type Client struct {
	cfg      Config
	log      *slog.Logger
	http     *http.Client
	own      *http.Transport // nil when Config.Transport was given
	def      *cluster        // nil when only Clusters are configured
	clusters []*cluster
	routes   []route

	closeOnce sync.Once
}

// New returns a Client for cfg. It reads the TLS files named in cfg and has
// no other side effects: nothing is dialled until the first call.
func New(cfg Config) (*Client, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	def, all, routes, err := buildClusters(cfg)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	c := &Client{
		cfg:      cfg,
		log:      cfg.Logger.With("subsystem", "client"),
		def:      def,
		clusters: all,
		routes:   routes,
	}
	rt := cfg.Transport
	if rt == nil {
		tc, err := cfg.TLSConfig()
		if err != nil {
			return nil, err
		}
		c.own = newTransport(cfg, tc)
		rt = c.own
	}
	c.http = &http.Client{Transport: rt}
	return c, nil
}

// Close releases idle connections. It is idempotent; calls made after it
// still work (and open new connections).
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		if c.own != nil {
			c.own.CloseIdleConnections()
		}
	})
	return nil
}

// clusterFor returns the cluster that holds app (upper-case).
func (c *Client) clusterFor(app string) (*cluster, bool) {
	for _, r := range c.routes {
		if r.re.MatchString(app) {
			return r.cl, true
		}
	}
	return c.def, c.def != nil
}

func (c *Client) mustCluster(op, app string) (*cluster, error) {
	cl, ok := c.clusterFor(app)
	if !ok {
		return nil, &Error{Op: op, Message: "no registry cluster is configured for application " + app +
			": it matches no Clusters pattern and URLs is empty", Err: ErrRejected}
	}
	return cl, nil
}

// Register registers in (POST {base}/apps/{APP} with the instance as Eureka
// JSON). Registries answer 204; any 2xx is taken as success. in is not
// modified: a normalised copy is sent, so an empty status registers as UP,
// Eureka's default.
func (c *Client) Register(ctx context.Context, in *heureka.Instance) error {
	cl, req, err := c.registration("register", in)
	if err != nil {
		return err
	}
	return c.call(ctx, cl, req)
}

// registration checks in and builds its registration request, a
// normalised copy encoded as Eureka JSON, for in's registry cluster.
func (c *Client) registration(op string, in *heureka.Instance) (*cluster, *request, error) {
	if in == nil || strings.TrimSpace(in.App) == "" {
		return nil, nil, &Error{Op: op, Message: "the instance has no app name", Err: ErrRejected}
	}
	cp := in.Clone()
	cp.Normalize()
	cl, err := c.mustCluster(op, cp.App)
	if err != nil {
		return nil, nil, err
	}
	return cl, &request{op: op, method: http.MethodPost, path: "/apps/" + url.PathEscape(cp.App),
		body: eureka.EncodeInstance(eureka.JSON, cp)}, nil
}

// Renew sends a heartbeat (PUT {base}/apps/{APP}/{ID}). When the registry
// does not know the instance (404), the error wraps ErrNotRegistered and the
// caller should Register again.
func (c *Client) Renew(ctx context.Context, app, id string) error {
	return c.instanceCall(ctx, request{op: "renew", method: http.MethodPut}, app, id, "")
}

// Cancel deregisters an instance (DELETE {base}/apps/{APP}/{ID}). An
// instance the registry does not know gives an error wrapping
// ErrNotRegistered.
func (c *Client) Cancel(ctx context.Context, app, id string) error {
	return c.instanceCall(ctx, request{op: "cancel", method: http.MethodDelete}, app, id, "")
}

// SetStatus sets a status override (PUT {base}/apps/{APP}/{ID}/status?value=S),
// e.g. OUT_OF_SERVICE to take an instance out of traffic. The override
// survives heartbeats until ClearStatus.
func (c *Client) SetStatus(ctx context.Context, app, id string, status heureka.Status) error {
	st, err := heureka.ParseStatus(string(status))
	if err != nil {
		return &Error{Op: "set status", Message: err.Error(), Err: ErrRejected}
	}
	return c.instanceCall(ctx, request{op: "set status", method: http.MethodPut, query: url.Values{"value": {string(st)}}}, app, id, "/status")
}

// ClearStatus removes a status override (DELETE {base}/apps/{APP}/{ID}/status).
// The instance's status becomes fallback; an empty fallback sends none, and
// Eureka servers then set UNKNOWN, which makes the instance's next heartbeat
// fail with 404 so that it registers again with its own status.
func (c *Client) ClearStatus(ctx context.Context, app, id string, fallback heureka.Status) error {
	var q url.Values
	if fallback != "" {
		st, err := heureka.ParseStatus(string(fallback))
		if err != nil {
			return &Error{Op: "clear status", Message: err.Error(), Err: ErrRejected}
		}
		q = url.Values{"value": {string(st)}}
	}
	return c.instanceCall(ctx, request{op: "clear status", method: http.MethodDelete, query: q}, app, id, "/status")
}

// UpdateMetadata merges md into an instance's metadata
// (PUT {base}/apps/{APP}/{ID}/metadata?k=v…). On Eureka servers the change
// lasts until the instance registers again with its own metadata. An empty
// md does nothing.
func (c *Client) UpdateMetadata(ctx context.Context, app, id string, md map[string]string) error {
	if len(md) == 0 {
		return nil
	}
	q := make(url.Values, len(md))
	for _, k := range slices.Sorted(maps.Keys(md)) {
		if k == "" {
			return &Error{Op: "update metadata", Message: "a metadata key is empty", Err: ErrRejected}
		}
		q.Set(k, md[k])
	}
	return c.instanceCall(ctx, request{op: "update metadata", method: http.MethodPut, query: q}, app, id, "/metadata")
}

// instanceCall sends req (its op, method, query and told peers set) to
// one instance's path, {base}/apps/{APP}/{ID}{suffix}, on app's cluster.
func (c *Client) instanceCall(ctx context.Context, req request, app, id, suffix string) error {
	app = strings.ToUpper(strings.TrimSpace(app))
	if app == "" || id == "" {
		return &Error{Op: req.op, Message: "app and instance ID must not be empty", Err: ErrRejected}
	}
	cl, err := c.mustCluster(req.op, app)
	if err != nil {
		return err
	}
	req.path = "/apps/" + url.PathEscape(app) + "/" + url.PathEscape(id) + suffix
	return c.call(ctx, cl, &req)
}

// call sends a request whose answer carries no data: any 2xx is success.
func (c *Client) call(ctx context.Context, cl *cluster, req *request) error {
	_, err := c.answer(ctx, cl, req)
	return err
}

// answer sends req and returns a 2xx answer; any other status is
// answerError's *Error.
func (c *Client) answer(ctx context.Context, cl *cluster, req *request) (*response, error) {
	resp, err := c.do(ctx, cl, req)
	if err != nil {
		return nil, err
	}
	if err := answerError(req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// answerError turns a non-2xx answer into an *Error: 404 wraps
// ErrNotRegistered, anything else ErrRejected.
func answerError(req *request, resp *response) error {
	if resp.status/100 == 2 {
		return nil
	}
	e := &Error{Op: req.op, Method: req.method, URL: resp.url, Status: resp.status,
		Message: serverMessage(resp.header.Get("Content-Type"), resp.body), Err: ErrRejected}
	if resp.status == http.StatusNotFound {
		e.Err = ErrNotRegistered
	}
	return e
}

// Instance reads one instance (GET {base}/apps/{APP}/{ID}); an unknown one
// gives an error wrapping ErrNotRegistered.
func (c *Client) Instance(ctx context.Context, app, id string) (*heureka.Instance, error) {
	const op = "get instance"
	app = strings.ToUpper(strings.TrimSpace(app))
	if app == "" || id == "" {
		return nil, &Error{Op: op, Message: "app and instance ID must not be empty", Err: ErrRejected}
	}
	cl, err := c.mustCluster(op, app)
	if err != nil {
		return nil, err
	}
	req := &request{op: op, method: http.MethodGet, path: "/apps/" + url.PathEscape(app) + "/" + url.PathEscape(id)}
	in, _, err := decoded(ctx, c, cl, req, decodeInstance)
	return in, err
}

// Apps fetches the whole registry (GET {base}/apps/) from every cluster and
// returns the applications each cluster is responsible for, by name, with
// the reconcile hash code computed over the result.
func (c *Client) Apps(ctx context.Context) (*heureka.Applications, error) {
	out := &heureka.Applications{VersionDelta: 1}
	for _, cl := range c.clusters {
		f, err := c.fetchFull(ctx, cl)
		if err != nil {
			return nil, err
		}
		for _, a := range f.apps.Apps {
			if owner, ok := c.clusterFor(a.Name); ok && owner == cl {
				out.Apps = append(out.Apps, a)
			}
		}
	}
	slices.SortFunc(out.Apps, func(a, b *heureka.Application) int { return strings.Compare(a.Name, b.Name) })
	out.HashCode = heureka.ReconcileHashCode(out.Apps)
	return out, nil
}

// fetched is a registry listing and where it came from.
type fetched struct {
	apps *heureka.Applications
	base *url.URL // the peer that answered
	// version is the peer's change sequence number (X-Heureka-Version),
	// present only on heureka servers.
	version    uint64
	hasVersion bool
	node       string // X-Heureka-Node: the server process
}

// versionHeader carries a heureka server's change sequence number on a
// full fetch; its absence marks a plain Eureka server.
const versionHeader = "X-Heureka-Version"

// fetchFull is GET {base}/apps/ on one cluster.
func (c *Client) fetchFull(ctx context.Context, cl *cluster) (*fetched, error) {
	return c.fetchList(ctx, cl, &request{op: "fetch", method: http.MethodGet, path: "/apps/"})
}

// fetchDelta is GET {base}/apps/delta on one cluster. A 403 or 404 (delta
// disabled, server not ready) is an error wrapping ErrRejected or
// ErrNotRegistered: either way the caller does a full fetch.
func (c *Client) fetchDelta(ctx context.Context, cl *cluster) (*fetched, error) {
	return c.fetchList(ctx, cl, &request{op: "fetch delta", method: http.MethodGet, path: "/apps/delta"})
}

func (c *Client) fetchList(ctx context.Context, cl *cluster, req *request) (*fetched, error) {
	apps, resp, err := decoded(ctx, c, cl, req, decodeApplications)
	if err != nil {
		return nil, err
	}
	f := &fetched{apps: apps, base: resp.base, node: resp.header.Get(nodeHeader)}
	if v := resp.header.Get(versionHeader); v != "" {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err == nil {
			f.version, f.hasVersion = n, true
		} else {
			c.log.Warn("ignoring a bad version header", "url", resp.url, "header", versionHeader, "value", v)
		}
	}
	return f, nil
}

// RenewTold is Renew for a caller that sends this heartbeat to other peers
// of app's cluster itself, at once (RenewOthers): it carries
// heureka.ToldPeersHeader naming the URL it reaches and each URL in told,
// which are names as RenewOthers returns them (the peers that answered
// its last round), so a heureka server renews the lease and replicates it
// only to its peers that are not named. A URL this call failed at before
// reaching another is left out, so the peer that answers replicates to
// it. With told empty it names only the URL it reaches: the server
// replicates to every other peer, as for Renew. A caller that will not
// send the heartbeat to the others this time must use Renew.
func (c *Client) RenewTold(ctx context.Context, app, id string, told []string) error {
	return c.instanceCall(ctx, request{op: "renew", method: http.MethodPut, told: true, tellAlso: told}, app, id, "")
}

// RenewOthers sends the heartbeat of Renew to every other peer of app's
// cluster: each URL but the one that answered last, once, with no
// failover, all at once. heureka's agent calls it after every RenewTold,
// so that every peer it can reach hears from the node directly, and no
// partition between the peers can make one of them expire a node that is
// alive (docs/reliability.md). Each heartbeat carries
// heureka.ToldPeersHeader naming every URL of the cluster, since this
// round goes to all of them: a heureka server renews the lease and
// replicates it only to peers that the list leaves out. Peers the list
// names but this round misses are reached by replication from the first
// peer next time, when RenewTold no longer names them.
//
// A peer that answers 404 has not seen the registration (it was cut off
// when it happened). When in is not nil (send the copy the last Register
// sent), each heartbeat carries its lastDirtyTimestamp, so that a peer
// holding an older copy answers 404 as well (Eureka's rule), and a peer
// that answers 404 is sent in as a registration, with the same header. So
// a peer cut off from the others still learns the node's newest status and
// metadata from the node, and a peer that restarted empty is refilled by
// the agents without every registration being replicated again.
//
// It returns the URLs that answered, as heureka.ToldPeersHeader names
// them (for the next RenewTold), and every other peer's error joined, each
// an *Error naming its URL; a nil error means every other peer answered.
// With one URL for app's cluster RenewOthers does nothing and returns
// nil, nil.
func (c *Client) RenewOthers(ctx context.Context, app, id string, in *heureka.Instance) ([]string, error) {
	app = strings.ToUpper(strings.TrimSpace(app))
	if app == "" || id == "" {
		return nil, &Error{Op: "renew others", Message: "app and instance ID must not be empty", Err: ErrRejected}
	}
	cl, err := c.mustCluster("renew others", app)
	if err != nil {
		return nil, err
	}
	told := http.Header{heureka.ToldPeersHeader: {cl.allTold}}
	var reg *request
	var q url.Values
	if in != nil {
		if _, reg, err = c.registration("register at another peer", in); err != nil {
			return nil, err
		}
		reg.header = told
		if in.LastDirtyTimestamp > 0 {
			q = url.Values{"lastDirtyTimestamp": {strconv.FormatInt(in.LastDirtyTimestamp, 10)}}
		}
	}
	others := cl.others()
	errs := make([]error, len(others))
	var wg sync.WaitGroup
	for i, base := range others {
		wg.Go(func() {
			renew := &request{op: "renew at another peer", method: http.MethodPut, only: base, query: q,
				path:   "/apps/" + url.PathEscape(app) + "/" + url.PathEscape(id),
				header: told}
			err := c.call(ctx, cl, renew)
			if errors.Is(err, ErrNotRegistered) && reg != nil {
				r := *reg
				r.only = base
				err = c.call(ctx, cl, &r)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	var answered []string
	for i, base := range others {
		if errs[i] == nil {
			answered = append(answered, urlcheck.PeerName(base))
		}
	}
	return answered, errors.Join(errs...)
}

package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/urlcheck"
)

// cluster is one set of registry peers that hold the same data.
type cluster struct {
	name  string     // "default" or the Clusters pattern(s) that lead here
	bases []*url.URL // trailing slash trimmed
	// peerNames[i] is bases[i] as heureka.ToldPeersHeader names it
	// (urlcheck.PeerName), and allTold all of them, comma-separated: the
	// header of RenewOthers's round, which goes to every base.
	peerNames []string
	allTold   string
	// preferred is the index of the base that answered last; calls start
	// there, so a client sticks to one healthy peer instead of spreading
	// its load and its view of the registry across all of them.
	preferred atomic.Int32
}

// others returns every base but the preferred one, in ring order after it.
func (cl *cluster) others() []*url.URL {
	n := len(cl.bases)
	start := int(cl.preferred.Load())
	out := make([]*url.URL, 0, max(n-1, 0))
	for k := 1; k < n; k++ {
		out = append(out, cl.bases[(start+k)%n])
	}
	return out
}

// toldValue is heureka.ToldPeersHeader for an attempt at target: target's
// name and each base named in also that is not in failed, in the list's
// order (so that a server sees few distinct values). A base this call
// failed at is left out, so that the peer that answers replicates to it.
func (cl *cluster) toldValue(target *url.URL, also []string, failed []*url.URL) string {
	var b strings.Builder
	for i, base := range cl.bases {
		if base != target && (!slices.Contains(also, cl.peerNames[i]) || slices.Contains(failed, base)) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(cl.peerNames[i])
	}
	return b.String()
}

func (cl *cluster) urls() []string {
	out := make([]string, len(cl.bases))
	for i, b := range cl.bases {
		out[i] = redact(b)
	}
	return out
}

// route is one Clusters pattern.
type route struct {
	pattern string
	re      *regexp.Regexp
	cl      *cluster
}

// buildClusters turns the configured URLs and Clusters into distinct
// clusters (the same URL list under two patterns is one cluster) and the
// routing table, most specific pattern first.
func buildClusters(cfg Config) (def *cluster, all []*cluster, routes []route, err error) {
	byKey := map[string]*cluster{}
	get := func(name string, urls []string) (*cluster, error) {
		var bases []*url.URL
		for _, s := range urls {
			u, err := parseBase(s)
			if err != nil {
				return nil, err
			}
			bases = append(bases, u)
		}
		key := strings.Join(urls, "\x00")
		if cl := byKey[key]; cl != nil {
			cl.name += "," + name
			return cl, nil
		}
		cl := &cluster{name: name, bases: bases}
		for _, b := range bases {
			cl.peerNames = append(cl.peerNames, urlcheck.PeerName(b))
		}
		cl.allTold = strings.Join(cl.peerNames, ",")
		byKey[key] = cl
		all = append(all, cl)
		return cl, nil
	}
	if len(cfg.URLs) > 0 {
		if def, err = get("default", cfg.URLs); err != nil {
			return nil, nil, nil, err
		}
	}
	pats := make([]string, 0, len(cfg.Clusters))
	for p := range cfg.Clusters {
		pats = append(pats, p)
	}
	slices.SortFunc(pats, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	for _, p := range pats {
		re, err := heureka.CompilePattern(p)
		if err != nil {
			return nil, nil, nil, err
		}
		cl, err := get(p, cfg.Clusters[p])
		if err != nil {
			return nil, nil, nil, err
		}
		routes = append(routes, route{pattern: p, re: re, cl: cl})
	}
	return def, all, routes, nil
}

// request is one logical call, tried against a cluster's peers.
type request struct {
	op     string // for errors and logs
	method string
	path   string // escaped, after the base URL, starting with "/"
	query  url.Values
	body   []byte
	// origin sends the request to the base URL's scheme and host instead
	// of the base URL (heureka's /v1 endpoints live at the root).
	origin bool
	accept string
	// stream leaves the body open for the caller and lifts the per-attempt
	// deadline; the caller must close resp.body.
	stream bool
	// only, when set, is the one base to try, once (a watch must stay on
	// the peer whose version it follows, and retries on its own terms).
	only *url.URL
	// extra headers
	header http.Header
	// told makes each attempt carry heureka.ToldPeersHeader naming the
	// base it goes to and, of the bases named in tellAlso, each that this
	// call has not already failed at (see toldValue).
	told     bool
	tellAlso []string
}

// response is a registry's answer. For unary calls body has been read.
type response struct {
	status int
	header http.Header
	body   []byte
	stream io.ReadCloser // stream requests only
	base   *url.URL      // the peer that answered
	url    string        // the full URL, redacted
}

// attemptError is one failed attempt, worth repeating on another peer.
type attemptError struct {
	url    string
	status int
	msg    string
	err    error
}

// Error leaves out the URL, which the *Error around it carries.
func (e *attemptError) Error() string {
	if e.status != 0 {
		if e.msg != "" {
			return fmt.Sprintf("%d %s: %s", e.status, http.StatusText(e.status), e.msg)
		}
		return fmt.Sprintf("%d %s", e.status, http.StatusText(e.status))
	}
	return e.err.Error()
}

func (e *attemptError) Unwrap() error { return e.err }

// do sends req to the cluster's peers, starting with the preferred one, and
// returns the first answer that is not a 5xx. Connection errors, timeouts
// and 5xx move on to the next peer; after a full round it pauses (jittered
// exponential backoff) and goes round again, at most Rounds times. 4xx
// answers are returned as they are: retrying them elsewhere cannot help.
func (c *Client) do(ctx context.Context, cl *cluster, req *request) (*response, error) {
	bases := cl.bases
	start := int(cl.preferred.Load())
	rounds := c.cfg.Rounds
	if req.only != nil {
		bases, start, rounds = []*url.URL{req.only}, 0, 1
	}
	var last *attemptError
	var failed []*url.URL // for req.told
	attempts := 0
	for round := 0; round < rounds; round++ {
		if round > 0 {
			if err := sleep(ctx, backoff(round-1, c.cfg.Backoff, c.cfg.MaxBackoff)); err != nil {
				return nil, c.callError(req, last, err)
			}
		}
		for k := range bases {
			i := (start + k) % len(bases)
			sent := req
			if req.told {
				r := *req
				r.header = req.header.Clone()
				if r.header == nil {
					r.header = http.Header{}
				}
				r.header.Set(heureka.ToldPeersHeader, cl.toldValue(bases[i], req.tellAlso, failed))
				sent = &r
			}
			resp, aerr := c.attempt(ctx, bases[i], sent)
			attempts++
			if aerr == nil {
				if req.only == nil {
					cl.preferred.Store(int32(i))
				}
				return resp, nil
			}
			failed = append(failed, bases[i])
			last = aerr
			if ctx.Err() != nil {
				return nil, c.callError(req, last, ctx.Err())
			}
			c.log.Debug("registry attempt failed", "op", req.op, "url", aerr.url, "err", aerr)
		}
	}
	err := fmt.Errorf("%w after %d attempt(s) at %d URL(s); last: %w", ErrUnavailable, attempts, len(bases), last)
	return nil, c.callError(req, last, err)
}

func (c *Client) callError(req *request, last *attemptError, err error) *Error {
	e := &Error{Op: req.op, Method: req.method, Err: err}
	if last != nil {
		e.URL, e.Status = last.url, last.status
		if errors.Is(err, ErrUnavailable) {
			e.Message = err.Error()
		} else {
			e.Message = last.msg
		}
	}
	return e
}

// attempt sends req to one base. A nil error means an answer below 500.
func (c *Client) attempt(ctx context.Context, base *url.URL, req *request) (*response, *attemptError) {
	// req.path is already escaped; build the URL as a string so that an
	// escaped slash in an instance ID stays escaped.
	root := *base
	if req.origin {
		root = url.URL{Scheme: base.Scheme, User: base.User, Host: base.Host}
	}
	target := root.String() + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	shown := target
	if u, err := url.Parse(target); err == nil {
		shown = redact(u)
	}
	if !req.stream {
		// Streams are bounded by their caller; a unary attempt, body
		// included, by the two timeouts together.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.ConnectTimeout+c.cfg.ReadTimeout)
		defer cancel()
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return nil, &attemptError{url: shown, err: err}
	}
	for k, vs := range req.header {
		hr.Header[k] = vs
	}
	if req.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	accept := req.accept
	if accept == "" {
		accept = "application/json"
	}
	hr.Header.Set("Accept", accept)
	// Credentials: the base URL's user:password as basic auth, as Eureka
	// clients send it, else the bearer token. Set here rather than left to
	// net/http, so that the rule is one place and visible.
	if u := base.User; u != nil {
		pw, _ := u.Password()
		hr.SetBasicAuth(u.Username(), pw)
	} else if c.cfg.BearerToken != "" {
		hr.Header.Set("Authorization", "Bearer "+c.cfg.BearerToken)
	}
	hr.Header.Set("User-Agent", userAgent)
	hr.Header.Set("DiscoveryIdentity-Name", "heureka-go")
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, &attemptError{url: shown, err: transportError(err)}
	}
	out := &response{status: resp.StatusCode, header: resp.Header, base: base, url: shown}
	if req.stream && resp.StatusCode == http.StatusOK {
		out.stream = resp.Body
		return out, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, &attemptError{url: shown, status: resp.StatusCode, err: fmt.Errorf("reading the response: %w", transportError(err))}
	}
	if int64(len(b)) > c.cfg.MaxResponseBytes {
		return nil, &attemptError{url: shown, status: resp.StatusCode,
			msg: fmt.Sprintf("response is larger than MaxResponseBytes (%d)", c.cfg.MaxResponseBytes),
			err: errors.New("response too large")}
	}
	out.body = b
	if resp.StatusCode >= 500 {
		msg := serverMessage(resp.Header.Get("Content-Type"), b)
		return nil, &attemptError{url: shown, status: resp.StatusCode, msg: msg,
			err: fmt.Errorf("server error %d", resp.StatusCode)}
	}
	return out, nil
}

// transportError unwraps *url.Error, whose text repeats the method and
// URL that our own errors already carry.
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

const userAgent = "heureka-go-client/1"

// newTransport is the Client's own http.Transport: the configured connect
// and response-header timeouts, TLS settings (tc may be nil), keep-alives,
// and no proxy surprises beyond the environment's.
func newTransport(cfg Config, tc *tls.Config) *http.Transport {
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ResponseHeaderTimeout: cfg.ReadTimeout,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
	}
}

// backoff returns the pause before retry n (0-based): base·2ⁿ capped at
// max, jittered to between half and all of it, so that clients that failed
// together do not retry together.
func backoff(n int, base, max time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	half := d / 2
	return half + rand.N(half+1)
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

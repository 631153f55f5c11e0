package hdfsrole

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/urlcheck"
)

// Daemon is an HDFS daemon as the role reads it. JMXDaemon is the real
// one; tests stand in their own.
type Daemon interface {
	// Probe says whether the daemon answers: an error means it does not,
	// with agent.ErrRefused or agent.ErrNoAnswer wrapped as agent.Role's
	// Probe describes. For a NameNode it also reports the HA state.
	Probe(ctx context.Context) (Health, error)
	// Collect reads the daemon's figures in full. The role fills in rack,
	// ports and status where its Config says.
	Collect(ctx context.Context) (hdfs.NodeInfo, error)
}

// Health is what one successful probe of an HDFS daemon learnt. For a
// DataNode it is empty.
type Health struct {
	HAState          hdfs.HAState // "" when not reported
	HATransitionTime int64        // ms since the epoch; 0 = never
}

// DaemonConfig says where a daemon's JMX and main port are.
type DaemonConfig struct {
	Role hdfs.Role
	// JMXURL is the daemon's web address, e.g. "http://127.0.0.1:9864"
	// (DataNode) or "http://127.0.0.1:9870" (NameNode); "/jmx" is added
	// unless the path already ends in it.
	JMXURL string
	// PortAddr is the data-transfer (DataNode) or client RPC (NameNode)
	// "host:port" a probe connects to; "" skips that check.
	PortAddr string
	// DataDirs are a DataNode's storage directories. When the JMX does not
	// give the capacity, disk_total and disk_used come from their
	// filesystems (see DiskUsage).
	DataDirs []string
	// Transport sends the JMX requests; nil means a private transport
	// that keeps one idle connection to the daemon.
	Transport http.RoundTripper
	// Logger receives what the daemon's reader has to say that is not an
	// error of a call (a NameNode without HA identity, once); nil
	// discards it.
	Logger *slog.Logger
}

// JMXDaemon is a real HDFS daemon reached over HTTP (/jmx, and a
// NameNode's /conf) and TCP.
type JMXDaemon struct {
	cfg     DaemonConfig
	jmx     *url.URL
	conf    *url.URL // /conf?format=json, beside /jmx
	http    *http.Client
	log     *slog.Logger
	service string // "DataNode" or "NameNode"
	probeQ  string // the one bean a probe reads

	identity atomic.Pointer[haIdentity] // a NameNode's, once /conf answered
}

// haIdentity is a NameNode's nameservice and NameNode ID as its own
// configuration gives them; both empty when it gives none.
type haIdentity struct{ nameservice, id string }

// NewJMXDaemon checks cfg and returns the daemon. It dials nothing.
func NewJMXDaemon(cfg DaemonConfig) (*JMXDaemon, error) {
	d := &JMXDaemon{cfg: cfg}
	switch cfg.Role {
	case hdfs.RoleDataNode:
		// DataNodeInfo is the stable MXBean every Hadoop 2 and 3 DataNode
		// has; its presence says the daemon is up, not just its web server.
		d.service, d.probeQ = "DataNode", "Hadoop:service=DataNode,name=DataNodeInfo"
	case hdfs.RoleNameNode:
		// NameNodeStatus is small and holds the HA state and its
		// transition time, which must be pushed at once.
		d.service, d.probeQ = "NameNode", "Hadoop:service=NameNode,name=NameNodeStatus"
	default:
		return nil, heureka.InvalidConfig("Role", string(cfg.Role), "is not datanode or namenode")
	}
	u, err := urlcheck.Parse(cfg.JMXURL)
	if err != nil {
		return nil, heureka.InvalidConfig("JMXURL", cfg.JMXURL, "is not a URL like http://HOST:9864")
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/jmx") {
		u.Path = strings.TrimRight(u.Path, "/") + "/jmx"
	}
	d.jmx = u
	c := *u
	c.Path, c.RawQuery = strings.TrimSuffix(u.Path, "/jmx")+"/conf", "format=json"
	d.conf = &c
	d.log = cfg.Logger
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if cfg.PortAddr != "" {
		if _, _, err := net.SplitHostPort(cfg.PortAddr); err != nil {
			return nil, heureka.Errorf(heureka.EINVALID, "agent: port address %q is not host:port", cfg.PortAddr)
		}
	}
	rt := cfg.Transport
	if rt == nil {
		rt = &http.Transport{
			Proxy:               nil, // the daemon is local; never go through a proxy
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     30 * time.Second,
		}
	}
	d.http = &http.Client{Transport: rt}
	return d, nil
}

// JMXURL is the /jmx URL the daemon is read from.
func (d *JMXDaemon) JMXURL() string { return d.jmx.String() }

// Probe connects to the main port and reads one small bean, at the same
// time; both must succeed. For a NameNode it returns the HA state. A
// refused connection wraps agent.ErrRefused; connections that were accepted but
// went unanswered until ctx ended wrap agent.ErrNoAnswer.
func (d *JMXDaemon) Probe(ctx context.Context) (Health, error) {
	var connected atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})
	tcpErr := make(chan error, 1)
	if d.cfg.PortAddr != "" {
		go func() {
			var dl net.Dialer
			c, err := dl.DialContext(ctx, "tcp", d.cfg.PortAddr)
			if err == nil {
				c.Close()
			}
			tcpErr <- err
		}()
	} else {
		tcpErr <- nil
	}
	var h Health
	body, err := d.fetch(ctx, d.probeQ)
	if err == nil {
		if d.cfg.Role == hdfs.RoleNameNode {
			var n hdfs.NameNodeJMX
			n, err = hdfs.ParseNameNodeJMX(body)
			if st, ok := hdfs.ParseHAState(string(n.HAState)); ok {
				h.HAState = st
			}
			h.HATransitionTime = n.LastHATransitionTime
		} else {
			_, err = hdfs.ParseDataNodeJMX(body)
		}
		body.Close()
	}
	if terr := <-tcpErr; terr != nil {
		if errors.Is(terr, syscall.ECONNREFUSED) {
			return Health{}, fmt.Errorf("port %s: %w: %w", d.cfg.PortAddr, agent.ErrRefused, terr)
		}
		return Health{}, fmt.Errorf("port %s: %w", d.cfg.PortAddr, terr)
	}
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, syscall.ECONNREFUSED):
		return Health{}, fmt.Errorf("%w: %w", agent.ErrRefused, err)
	case connected.Load() && ctx.Err() != nil:
		return Health{}, fmt.Errorf("%w: %s accepted the connection: %w", agent.ErrNoAnswer, d.jmx.Redacted(), err)
	}
	return Health{}, err
}

// Collect reads all of the daemon's own beans (qry=Hadoop:service=X,*).
// A DataNode whose JMX gives no capacity gets it from DataDirs.
func (d *JMXDaemon) Collect(ctx context.Context) (hdfs.NodeInfo, error) {
	body, err := d.fetch(ctx, "Hadoop:service="+d.service+",*")
	if err != nil {
		return hdfs.NodeInfo{}, err
	}
	defer body.Close()
	if d.cfg.Role == hdfs.RoleNameNode {
		n, err := hdfs.ParseNameNodeJMX(body)
		if err != nil {
			return hdfs.NodeInfo{}, err
		}
		info := n.NodeInfo()
		if id := d.haIdentity(ctx, n.HostAndPort); id != nil {
			info.Nameservice, info.NameNodeID = id.nameservice, id.id
		}
		return info, nil
	}
	dn, err := hdfs.ParseDataNodeJMX(body)
	if err != nil {
		return hdfs.NodeInfo{}, err
	}
	info := dn.NodeInfo()
	if info.DiskTotal == 0 && len(d.cfg.DataDirs) > 0 {
		if total, used, err := DiskUsage(d.cfg.DataDirs); err == nil {
			info.DiskTotal, info.DiskUsed = total, used
		} else {
			return info, fmt.Errorf("the JMX has no capacity and the data directories cannot be read: %w", err)
		}
	}
	return info, nil
}

// haIdentity returns the NameNode's HA identity from its own
// configuration (GET /conf?format=json, hdfs.NameNodeIdentity over self,
// its RPC address), read once: nil until the NameNode has answered, empty
// when it refuses to show its configuration (403, 404) or has no HA keys
// that name self, which is logged at debug level once.
func (d *JMXDaemon) haIdentity(ctx context.Context, self string) *haIdentity {
	if id := d.identity.Load(); id != nil {
		return id
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.conf.String(), nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return nil // not answering now: the next collect asks again
	}
	defer resp.Body.Close()
	none := func(why string) *haIdentity {
		d.log.Debug("the NameNode's configuration gives no HA identity; registering no NameNode ID", "conf", d.conf.Redacted(), "reason", why)
		d.identity.Store(&haIdentity{})
		return d.identity.Load()
	}
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound:
		return none(resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil
	}
	conf, err := hdfs.ParseConfJSON(resp.Body)
	if err != nil {
		if heureka.ErrorCode(err) == heureka.EUNAVAILABLE {
			return nil // cut off mid-answer: ask again
		}
		return none(err.Error())
	}
	ns, id, err := hdfs.NameNodeIdentity(conf, self)
	if err != nil {
		return none(err.Error())
	}
	d.identity.Store(&haIdentity{ns, id})
	return d.identity.Load()
}

// fetch GETs /jmx?qry=q; the caller closes the body.
func (d *JMXDaemon) fetch(ctx context.Context, q string) (io.ReadCloser, error) {
	u := *d.jmx
	u.RawQuery = url.Values{"qry": {q}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s answered %s", d.jmx.Redacted(), resp.Status)
	}
	return resp.Body, nil
}

// ErrNoStatfs is DiskUsage's error on systems where it cannot read
// filesystem sizes.
var ErrNoStatfs = errors.New("hdfsrole: filesystem sizes cannot be read on this system")

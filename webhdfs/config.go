package webhdfs

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/auth"
)

// Config is what a Gateway forwards for, and how.
type Config struct {
	// Cluster names the HDFS cluster, for logs and messages.
	Cluster string
	// NameNodes and DataNodes return the cluster's registered instances,
	// usually a watching client.Cache's Instances(hdfs.AppName(...)). They
	// are called on every request and must be cheap and safe for
	// concurrent use.
	NameNodes func() []*heureka.Instance
	DataNodes func() []*heureka.Instance
	// Synced, when set, is closed once NameNodes and DataNodes reflect a
	// full read of the registry (a client.Cache's Synced). From then on a
	// cluster with no NameNode registered at all is answered at once, with
	// a 503 that says so, rather than after FailoverWait; before, a
	// request waits as for a failover. nil: the lists are always complete.
	Synced <-chan struct{}

	// RequestTimeout bounds each request to a NameNode, retries included.
	RequestTimeout time.Duration
	// FailoverWait is how long a request waits for the registry to name a
	// new active NameNode after the active one answered StandbyException
	// or refused the connection, or when none is active.
	FailoverWait time.Duration
	// ProbeTimeout bounds the TCP dial that checks the DataNode a
	// redirect points at, before the client is sent there; 0 turns the
	// probe off (only the registry is consulted).
	ProbeTimeout time.Duration
	// MaxRechoose is how many times a redirect to an unusable DataNode is
	// asked again with that node excluded.
	MaxRechoose int
	// MaxExcluded bounds the excludedatanodes list sent to the NameNode,
	// which must fit in its request line.
	MaxExcluded int
	// MaxBody bounds a request body (WebHDFS's first step carries none;
	// file data goes to the DataNode).
	MaxBody int64
	// FullnessThreshold: DataNodes more used than this are excluded from
	// writes (as in hdfs.PlacementRequest).
	FullnessThreshold float64
	// Penalties remembers DataNodes that failed a probe; nil makes one
	// with hdfs.DefaultPenalty.
	Penalties *hdfs.Penalties
	// NameNodeScheme is "http" or "https", the scheme of the NameNodes'
	// web servers; DefaultHTTPPort is their port when an instance has no
	// http_port metadata.
	NameNodeScheme  string
	DefaultHTTPPort int
	// DataNodeHTTPPort is a DataNode's web port when its instance has no
	// http_port metadata, to match redirects against the registry.
	DataNodeHTTPPort int

	// Transport sends requests to the NameNodes; nil uses a private one.
	Transport http.RoundTripper
	// Auth, when set, requires credentials of every caller: reads
	// (GET) as the credentials file's "reads" says, anything else from an
	// authenticated principal. The caller's Authorization header is then
	// the gateway's and is not forwarded.
	Auth *auth.Store
	// Registerer receives the gateway's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Logger receives the gateway's logs, with subsystem=gateway.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	return Config{
		// WebHDFS metadata calls answer in milliseconds; 15 s is the
		// project's client read timeout, long enough for a loaded
		// NameNode and short enough that a hung one frees the caller.
		RequestTimeout: 15 * time.Second,
		// The agent reports an HA change at its next probe (1 s) and the
		// watch delivers it in milliseconds: 3 s covers a busy machine.
		FailoverWait: 3 * time.Second,
		// A DataNode on the same network answers a dial in well under a
		// millisecond; a dead host does not answer at all.
		ProbeTimeout: 500 * time.Millisecond,
		MaxRechoose:  3,
		// 256 entries of "255.255.255.255:65535" are ~5.5 KB, inside
		// Jetty's default 8 KB request line.
		MaxExcluded: 256,
		MaxBody:     1 << 20,
		// The project's placement threshold (design notes).
		FullnessThreshold: hdfs.DefaultFullnessThreshold,
		NameNodeScheme:    "http",
		// Hadoop 3's dfs.namenode.http-address and dfs.datanode.http.address.
		DefaultHTTPPort:  9870,
		DataNodeHTTPPort: 9864,
	}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c Config) Validate() error {
	if err := heureka.Positive(heureka.NamedDuration{Field: "RequestTimeout", Value: c.RequestTimeout}); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(c.Cluster) == "":
		return heureka.InvalidConfig("Cluster", c.Cluster, "is empty; name the HDFS cluster")
	case c.NameNodes == nil:
		return heureka.InvalidConfig("NameNodes", nil, "is nil; the gateway needs the registry's NameNodes")
	case c.DataNodes == nil:
		return heureka.InvalidConfig("DataNodes", nil, "is nil; the gateway needs the registry's DataNodes")
	case c.FailoverWait < 0 || c.FailoverWait >= c.RequestTimeout:
		return heureka.InvalidConfig("FailoverWait", c.FailoverWait, "must be 0 or more and less than RequestTimeout %v", c.RequestTimeout)
	case c.ProbeTimeout < 0:
		return heureka.InvalidConfig("ProbeTimeout", c.ProbeTimeout, "is negative (0 turns the probe off)")
	case c.MaxRechoose < 0 || c.MaxRechoose > 16:
		return heureka.InvalidConfig("MaxRechoose", c.MaxRechoose, "is not in 0-16")
	case c.MaxExcluded < 1:
		return heureka.InvalidConfig("MaxExcluded", c.MaxExcluded, "want at least 1")
	case c.MaxBody < 0:
		return heureka.InvalidConfig("MaxBody", c.MaxBody, "is negative")
	case !(c.FullnessThreshold > 0 && c.FullnessThreshold <= 1):
		return heureka.InvalidConfig("FullnessThreshold", c.FullnessThreshold, "is not in (0, 1]")
	case c.NameNodeScheme != "http" && c.NameNodeScheme != "https":
		return heureka.InvalidConfig("NameNodeScheme", c.NameNodeScheme, "is not http or https")
	case c.DefaultHTTPPort < 1 || c.DefaultHTTPPort > 65535:
		return heureka.InvalidConfig("DefaultHTTPPort", c.DefaultHTTPPort, "is not a port")
	case c.DataNodeHTTPPort < 1 || c.DataNodeHTTPPort > 65535:
		return heureka.InvalidConfig("DataNodeHTTPPort", c.DataNodeHTTPPort, "is not a port")
	}
	return nil
}

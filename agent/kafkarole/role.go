package kafkarole

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/internal/reach"
	"github.com/heureka-project/heureka/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config is where the role reaches its broker and what it registers.
// Start from DefaultConfig and set Addr.
type Config struct {
	// Addr is a listener of the broker, "host:port", e.g.
	// "127.0.0.1:9092".
	Addr string
	// NodeID is the broker's node id (broker.id or node.id), which finds
	// it in its cluster's metadata; -1 finds it by its advertised
	// listener, which must then be Addr.
	NodeID int32
	// ClusterID is the cluster's id: a broker that answers with another
	// is refused (see the package doc). "" checks nothing.
	ClusterID string
	// Port is registered as the Eureka port; 0 takes the port of the
	// listener the broker advertises.
	Port int
	// Opts are franz-go client options added to the probe's client (TLS,
	// SASL, ...).
	Opts []kgo.Opt
}

// DefaultConfig returns the defaults, each with its reason; Addr is left
// empty.
func DefaultConfig() Config {
	// Found by the address it is reached on, until the operator names it.
	return Config{NodeID: kafka.NoNode}
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError.
func (c Config) Validate() error {
	if h, p, err := net.SplitHostPort(c.Addr); err != nil || h == "" {
		return heureka.InvalidConfig("Addr", c.Addr, "is not HOST:PORT, e.g. 127.0.0.1:9092")
	} else if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return heureka.InvalidConfig("Addr", c.Addr, "has no port in 1-65535")
	}
	switch {
	case c.NodeID < kafka.NoNode:
		return heureka.InvalidConfig("NodeID", c.NodeID, "is below -1")
	case c.Port < 0 || c.Port > 65535:
		return heureka.InvalidConfig("Port", c.Port, "is out of range 0-65535")
	case len(c.ClusterID) > 256 || strings.ContainsAny(c.ClusterID, " \t\r\n"):
		return heureka.InvalidConfig("ClusterID", c.ClusterID, "is not a cluster id")
	}
	return nil
}

// Role is a Kafka broker as the agent sees it. Close releases it.
type Role struct {
	cfg  Config
	self kafka.Self
	cl   *kgo.Client
	// refused is the outcome of the client's last dial: the broker's port
	// refused it.
	refused atomic.Bool
}

var _ agent.Role = (*Role)(nil)

// New checks cfg and returns the role with its client. The client dials
// nothing until the first probe.
func New(cfg Config) (*Role, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Role{cfg: cfg, self: kafka.Self{NodeID: cfg.NodeID, Addr: cfg.Addr}}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	dial := kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, host)
		r.refused.Store(errors.Is(err, syscall.ECONNREFUSED))
		return c, err
	})
	cl, err := kafka.NewClient(cfg.Addr, append([]kgo.Opt{dial}, cfg.Opts...)...)
	if err != nil {
		return nil, err
	}
	r.cl = cl
	return r, nil
}

// Close releases the client. It is idempotent.
func (r *Role) Close() { r.cl.Close() }

// probe asks the broker and says a failure in the agent's terms. A
// request that fails at once, before the deadline (its connection was cut
// under it: the broker died, or restarted), is asked again once on a new
// connection, as net/http does for a GET on a reused connection, so that
// a dead broker's probe says refused.
func (r *Role) probe(ctx context.Context) (kafka.Report, error) {
	rep, err := kafka.Probe(ctx, r.cl, r.self, r.cfg.ClusterID)
	if err != nil && ctx.Err() == nil && heureka.ErrorCode(err) == heureka.EUNAVAILABLE {
		rep, err = kafka.Probe(ctx, r.cl, r.self, r.cfg.ClusterID)
	}
	switch {
	case err == nil || heureka.ErrorCode(err) == heureka.ECONFLICT:
		return rep, err
	case r.refused.Load():
		return rep, fmt.Errorf("%w: %w", agent.ErrRefused, err)
	case ctx.Err() != nil:
		return rep, fmt.Errorf("%w: %w", agent.ErrNoAnswer, err)
	}
	return rep, err
}

// Probe asks the broker how it stands: controller or broker, whether its
// cluster lists it, and, as kafka.MetaKRaft, whether its cluster runs
// with KRaft (and so has no controller broker to expect).
func (r *Role) Probe(ctx context.Context) (agent.Health, error) {
	rep, err := r.probe(ctx)
	h, err := reach.Health(err, rep.RoleState, rep.Health)
	if err == nil && rep.KRaft && h.State != "" {
		h.Metadata = heureka.NewMetadata(kafka.MetaKRaft, "true")
	}
	return h, err
}

// Collect reads the broker's figures.
func (r *Role) Collect(ctx context.Context) (agent.Figures, error) {
	rep, err := r.probe(ctx)
	if err != nil {
		return agent.Figures{}, err
	}
	if !rep.Listed {
		return agent.Figures{}, heureka.Errorf(heureka.EUNAVAILABLE, "kafka broker %s: its cluster does not list broker %d", r.cfg.Addr, rep.NodeID)
	}
	port := r.cfg.Port
	if port == 0 {
		port = int(rep.Port)
	}
	kv := []string{kafka.MetaBrokerID, strconv.Itoa(int(rep.NodeID)), kafka.MetaListener, rep.Addr()}
	if rep.Version != "" {
		kv = append(kv, heureka.MetaVersion, rep.Version)
	}
	return agent.Figures{Port: port, Metadata: heureka.NewMetadata(kv...)}, nil
}

// Static is the configured port, or the one of Addr, and the configured
// node id.
func (r *Role) Static() agent.Figures {
	port := r.cfg.Port
	if port == 0 {
		_, p, _ := net.SplitHostPort(r.cfg.Addr)
		port, _ = strconv.Atoi(p)
	}
	var kv []string
	if r.cfg.NodeID >= 0 {
		kv = append(kv, kafka.MetaBrokerID, strconv.Itoa(int(r.cfg.NodeID)))
	}
	return agent.Figures{Port: port, Metadata: heureka.NewMetadata(kv...)}
}

// Material: every change is (they are the broker's identity, version and
// listener).
func (r *Role) Material(old, new agent.Figures) bool { return old != new }

// Rack reads the broker's broker.rack; "" when it has none.
func (r *Role) Rack(ctx context.Context) (string, error) {
	rep, err := r.probe(ctx)
	if err != nil {
		return "", err
	}
	return rep.Rack, nil
}

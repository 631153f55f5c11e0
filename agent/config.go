package agent

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

// Config is what an agent registers and how it paces itself. Start from
// DefaultConfig and fill the identity fields (Role, Cluster, Host, IPAddr,
// Rack).
type Config struct {
	// Role is the daemon beside the agent: hdfs.RoleDataNode or
	// hdfs.RoleNameNode. The application is hdfs.AppName(Role, Cluster).
	Role    hdfs.Role
	Cluster string
	// Host is the daemon's host name as clients reach it; IPAddr its
	// address. Both are registered; the instance ID is
	// hdfs.InstanceID(Cluster, Host, Rack).
	Host   string
	IPAddr string
	// Rack is the network location, e.g. "/dc1/rack-a" ("" means
	// hdfs.DefaultRack).
	Rack string
	// Port is the daemon's main port, registered as the Eureka port and in
	// the metadata: a DataNode's data-transfer port (data_port), a
	// NameNode's client RPC port (rpc_port). 0 takes what the daemon's JMX
	// reports.
	Port int
	// HTTPPort is the daemon's web port (/jmx and /webhdfs/v1), registered
	// as http_port metadata so WebHDFS clients and gateways can find it; 0
	// registers none.
	HTTPPort int
	// AdminState is a DataNode's metadata status: its JMX does not report
	// it (the NameNode knows), so the operator says it; default NORMAL.
	// NameNodes report their FSState (Operational, safeMode) instead.
	AdminState hdfs.AdminState
	// StatusPageURL is registered as the instance's status page (the
	// daemon's web UI or /jmx), optional.
	StatusPageURL string

	// RenewInterval is the heartbeat period and LeaseDuration the lease
	// the registry grants; both are sent in whole seconds.
	RenewInterval time.Duration
	LeaseDuration time.Duration
	// ProbeInterval is how often the daemon is probed; ProbeTimeout bounds
	// one probe. A failed probe is retried after RecheckInterval, and
	// FailureThreshold consecutive failures report DOWN at once.
	ProbeInterval    time.Duration
	ProbeTimeout     time.Duration
	RecheckInterval  time.Duration
	FailureThreshold int
	// MetadataInterval is how often the daemon's figures are read in
	// full; CollectTimeout bounds one read.
	MetadataInterval time.Duration
	CollectTimeout   time.Duration
	// A change in the figures is material, and pushed at once, when disk
	// use moves by more than DiskChange of the capacity, the capacity by
	// more than DiskChange of itself, or the block count by more than
	// BlockChange of itself (fractions). Smaller drifts are pushed when
	// the registry's copy is older than MetadataMaxAge.
	DiskChange     float64
	BlockChange    float64
	MetadataMaxAge time.Duration
	// DrainPeriod is how long the instance stays OUT_OF_SERVICE before it
	// deregisters on shutdown.
	DrainPeriod time.Duration
	// CallTimeout bounds one registry call, retries included.
	CallTimeout time.Duration
	// BackoffMin and BackoffMax bound the jittered, doubling pause between
	// failed registry calls.
	BackoffMin time.Duration
	BackoffMax time.Duration

	// Logger receives the agent's logs, with subsystem=agent.
	Logger *slog.Logger
}

// DefaultConfig returns the timing defaults, each with its reason. The
// identity fields are left empty.
func DefaultConfig() Config {
	return Config{
		AdminState: hdfs.AdminNormal,
		// From operating HDFS on Eureka: 30 s made failover take minutes,
		// 5 s raised false alarms during GC pauses.
		RenewInterval: 10 * time.Second,
		// Three missed renewals: a dead agent leaves the registry within
		// half a minute, a slow one is not evicted for one late beat.
		LeaseDuration: 30 * time.Second,
		// The agent is alive to see its daemon die: say so at once.
		ProbeInterval: time.Second,
		// Below the interval, so probes never overlap; a local daemon
		// that takes longer than this to answer is not serving anyway.
		ProbeTimeout: 800 * time.Millisecond,
		// A failure is confirmed quickly rather than a whole interval
		// later: one lost packet is not a verdict, and a dead daemon is
		// reported within about ProbeInterval + RecheckInterval.
		RecheckInterval: 250 * time.Millisecond,
		// Two consecutive failures: one can be a blip.
		FailureThreshold: 2,
		// Figures move slowly; one full read per renewal keeps the
		// registry within one renewal of the daemon without loading it.
		MetadataInterval: 10 * time.Second,
		// A NameNode's full /jmx holds a line per DataNode: allow it time.
		CollectTimeout: 5 * time.Second,
		// 1%: placement cares about fullness to a few percent; finer
		// changes would re-register every DataNode every few seconds
		// under write load.
		DiskChange:  0.01,
		BlockChange: 0.01,
		// Small drifts still reach the registry every few minutes.
		MetadataMaxAge: 5 * time.Minute,
		// Long enough for clients that watch (sub-second) and clients that
		// poll every 5 s to stop sending new work before the instance
		// disappears.
		DrainPeriod: 5 * time.Second,
		// Shorter than a renewal, so one slow registry cannot hold back the
		// next heartbeat or a status change for long.
		CallTimeout: 5 * time.Second,
		// A registry peer restarts in seconds; retry soon, then back off
		// to once per lease so a long outage is not hammered but a
		// returning registry hears from us within a lease.
		BackoffMin: time.Second,
		BackoffMax: 30 * time.Second,
	}
}

// Validate reports the first setting that cannot work, naming the field.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return heureka.Errorf(heureka.EINVALID, "agent: %s %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Role != hdfs.RoleDataNode && c.Role != hdfs.RoleNameNode:
		return bad("Role", "%q is not datanode or namenode", c.Role)
	case c.Cluster == "" || strings.ContainsAny(c.Cluster, "/\\ \t\r\n"):
		return bad("Cluster", "%q must be a non-empty name without slashes or spaces", c.Cluster)
	case c.Host == "":
		return bad("Host", "is empty")
	case net.ParseIP(c.IPAddr) == nil:
		return bad("IPAddr", "%q is not an IP address", c.IPAddr)
	case c.Port < 0 || c.Port > 65535:
		return bad("Port", "%d is out of range 0-65535", c.Port)
	case c.HTTPPort < 0 || c.HTTPPort > 65535:
		return bad("HTTPPort", "%d is out of range 0-65535", c.HTTPPort)
	}
	if c.AdminState != "" {
		if _, ok := hdfs.ParseAdminState(string(c.AdminState)); !ok {
			return bad("AdminState", "%q is not one of NORMAL, DECOMMISSION_INPROGRESS, DECOMMISSIONED, ENTERING_MAINTENANCE, IN_MAINTENANCE", c.AdminState)
		}
	}
	if err := heureka.ValidateName("instance ID", hdfs.InstanceID(c.Cluster, c.Host, c.Rack), heureka.DefaultLimits().MaxIDLength); err != nil {
		return bad("Host", "and Rack give an unusable instance ID: %v", err)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"RenewInterval", c.RenewInterval}, {"LeaseDuration", c.LeaseDuration},
		{"ProbeInterval", c.ProbeInterval}, {"ProbeTimeout", c.ProbeTimeout},
		{"RecheckInterval", c.RecheckInterval}, {"MetadataInterval", c.MetadataInterval},
		{"CollectTimeout", c.CollectTimeout}, {"MetadataMaxAge", c.MetadataMaxAge},
		{"CallTimeout", c.CallTimeout}, {"BackoffMin", c.BackoffMin}, {"BackoffMax", c.BackoffMax},
	} {
		if d.v <= 0 {
			return bad(d.name, "is %v; want a positive duration", d.v)
		}
	}
	switch {
	case c.RenewInterval < time.Second:
		return bad("RenewInterval", "is %v; Eureka counts in whole seconds, so at least 1s", c.RenewInterval)
	case c.LeaseDuration <= c.RenewInterval:
		return bad("LeaseDuration", "%v must be longer than RenewInterval %v, or every late heartbeat expires the lease", c.LeaseDuration, c.RenewInterval)
	case c.ProbeTimeout > c.ProbeInterval:
		return bad("ProbeTimeout", "%v is longer than ProbeInterval %v", c.ProbeTimeout, c.ProbeInterval)
	case c.FailureThreshold < 1:
		return bad("FailureThreshold", "is %d; want at least 1", c.FailureThreshold)
	case c.DrainPeriod < 0:
		return bad("DrainPeriod", "is %v; want zero or more", c.DrainPeriod)
	case c.BackoffMin > c.BackoffMax:
		return bad("BackoffMin", "%v is more than BackoffMax %v", c.BackoffMin, c.BackoffMax)
	case !(c.DiskChange >= 0 && c.DiskChange < 1):
		return bad("DiskChange", "is %v; want a fraction in [0, 1)", c.DiskChange)
	case !(c.BlockChange >= 0 && c.BlockChange < 1):
		return bad("BlockChange", "is %v; want a fraction in [0, 1)", c.BlockChange)
	}
	return nil
}

// App is the application the agent registers under, e.g.
// "hdfs-datanode.prod".
func (c Config) App() string { return hdfs.AppName(c.Role, c.Cluster) }

// InstanceID is the instance ID the agent registers, e.g.
// "prod-dn1.example.com-dc1.rack-a".
func (c Config) InstanceID() string { return hdfs.InstanceID(c.Cluster, c.Host, c.Rack) }

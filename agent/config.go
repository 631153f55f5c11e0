package agent

import (
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
)

// Config is what an agent registers and how it paces itself. Start from
// DefaultConfig and fill the identity fields (Role, Cluster, Host, IPAddr,
// Rack). Nothing in it is particular to one role: what is (ports, ...) is
// the Role's own configuration.
type Config struct {
	// Role names the kind of daemon beside the agent, e.g.
	// "hdfs-datanode" (hdfs.RoleName) or "zookeeper": lower-case letters,
	// digits and hyphens (heureka.ValidRoleName). The application is
	// heureka.RoleApp(Role, Cluster), e.g. "hdfs-datanode.prod". What the
	// agent knows of the daemon itself is the Role given to New.
	Role    string
	Cluster string
	// Host is the daemon's host name as clients reach it; IPAddr its
	// address. Both are registered; the instance ID is
	// heureka.InstanceID(Cluster, Host, Rack).
	Host   string
	IPAddr string
	// Rack is the network location, e.g. "/dc1/rack-a" ("" means
	// heureka.DefaultRack), registered as heureka.MetaRack.
	Rack string
	// StatusPageURL is registered as the instance's status and home page
	// (the daemon's web UI or /jmx), optional. Any user:password in it is
	// dropped, since every reader of the registry sees it, and a URL that
	// names a loopback host is not registered: no reader on another
	// machine could open it.
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
	// HangAfter is how long a daemon that accepts connections but does
	// not answer (a stop-the-world GC pause, a SIGSTOP) keeps its status
	// before it is reported DOWN with the cause "not answering".
	// HungMarkAfter is how long such a pause lasts before the agent marks
	// the registration probe_state=hung (one write, undone by one more
	// when it answers again) so pickers rank the node last; a value of
	// HangAfter or more never marks it.
	HangAfter     time.Duration
	HungMarkAfter time.Duration
	// UpAfter is how long a DOWN daemon must answer every probe before it
	// is reported UP again. A daemon that went DOWN n times within
	// FlapWindow must answer for UpAfter × 2^(n-1) instead, at most
	// FlapHoldMax: a flapping daemon is held DOWN with a backoff.
	UpAfter     time.Duration
	FlapWindow  time.Duration
	FlapHoldMax time.Duration

	// PID, PIDFile and SystemdUnit name the daemon's process; at most one
	// may be set. With one, the agent learns of the process's exit from
	// the kernel (pidfd on Linux) and reports DOWN with the cause "process
	// exited" at once, without waiting for a probe. PIDFile is a Hadoop
	// pid file ($HADOOP_PID_DIR/hadoop-USER-datanode.pid: the PID and a
	// newline), read again after an exit so a restarted daemon is
	// followed; SystemdUnit's MainPID is followed the same way. PID is
	// watched until it exits, then the probes alone decide.
	PID         int
	PIDFile     string
	SystemdUnit string

	// MetadataInterval is how often the daemon's figures are read in
	// full; CollectTimeout bounds one read.
	MetadataInterval time.Duration
	CollectTimeout   time.Duration
	// A change in the figures that the Role calls material is pushed at
	// once; smaller drifts are pushed when the registry's copy is older
	// than MetadataMaxAge.
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
		// Full GC pauses of a few seconds are ordinary on big-heap Hadoop
		// JVMs, and the field report behind this project saw false alarms
		// from heartbeats that did not allow for them. Hadoop's own
		// JvmPauseMonitor logs a pause of 1 s at INFO and only calls one
		// of 10 s a problem (jvm.pause.warn-threshold.ms = 10000), and
		// ZKFC gives a NameNode's health RPC 45 s. 10 s rides out every
		// pause Hadoop itself calls ordinary while a daemon that is truly
		// stuck is still DOWN long before the NameNode would notice
		// (10.5 min for a DataNode).
		HangAfter: 10 * time.Second,
		// Half of HangAfter: pauses under 5 s pass without a registry
		// write; one that lasts longer is long enough that writers should
		// prefer other nodes for new blocks.
		HungMarkAfter: 5 * time.Second,
		// Three probes in a row: a daemon that is restarting, or in a GC
		// storm, answers once between failures; one that is back answers
		// every second.
		UpAfter: 3 * time.Second,
		// A DataNode that dies twice in ten minutes is not well: each DOWN
		// in the window doubles the steady time, up to five minutes, so a
		// crash-looping node costs the registry one DOWN/UP pair per few
		// minutes, not one per restart.
		FlapWindow:  10 * time.Minute,
		FlapHoldMax: 5 * time.Minute,
		// Figures move slowly; one full read per renewal keeps the
		// registry within one renewal of the daemon without loading it.
		MetadataInterval: 10 * time.Second,
		// A NameNode's full /jmx holds a line per DataNode: allow it time.
		CollectTimeout: 5 * time.Second,
		// Small drifts still reach the registry, within half an hour. Every
		// push is a registration that enters the delta for 3 minutes: at
		// 5 minutes a fleet of 100k DataNodes under write load sent 333 a
		// second, every delta poll carried 60k instances, and the server
		// spent ~0.3 of a core more on it (docs/benchmarks.md, "A fleet
		// that pushes its figures"); below 1% of capacity the figures are
		// not worth that.
		MetadataMaxAge: 30 * time.Minute,
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

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field.
func (c Config) Validate() error {
	switch {
	case !heureka.ValidRoleName(c.Role):
		return heureka.InvalidConfig("Role", c.Role, "is not a role name (lower-case letters, digits and hyphens, e.g. hdfs-datanode)")
	case c.Cluster == "" || strings.ContainsAny(c.Cluster, "/\\ \t\r\n"):
		return heureka.InvalidConfig("Cluster", c.Cluster, "must be a non-empty name without slashes or spaces")
	case c.Host == "":
		return heureka.InvalidConfig("Host", nil, "is empty")
	case net.ParseIP(c.IPAddr) == nil:
		return heureka.InvalidConfig("IPAddr", c.IPAddr, "is not an IP address")
	}
	if err := heureka.ValidateName("instance ID", c.InstanceID(), heureka.DefaultLimits().MaxIDLength); err != nil {
		return heureka.InvalidConfig("Host", c.Host, "with Rack %q gives an unusable instance ID: %v", c.Rack, err)
	}
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "RenewInterval", Value: c.RenewInterval},
		heureka.NamedDuration{Field: "LeaseDuration", Value: c.LeaseDuration},
		heureka.NamedDuration{Field: "ProbeInterval", Value: c.ProbeInterval},
		heureka.NamedDuration{Field: "ProbeTimeout", Value: c.ProbeTimeout},
		heureka.NamedDuration{Field: "RecheckInterval", Value: c.RecheckInterval},
		heureka.NamedDuration{Field: "MetadataInterval", Value: c.MetadataInterval},
		heureka.NamedDuration{Field: "CollectTimeout", Value: c.CollectTimeout},
		heureka.NamedDuration{Field: "MetadataMaxAge", Value: c.MetadataMaxAge},
		heureka.NamedDuration{Field: "CallTimeout", Value: c.CallTimeout},
		heureka.NamedDuration{Field: "BackoffMin", Value: c.BackoffMin},
		heureka.NamedDuration{Field: "BackoffMax", Value: c.BackoffMax},
		heureka.NamedDuration{Field: "HangAfter", Value: c.HangAfter},
		heureka.NamedDuration{Field: "FlapWindow", Value: c.FlapWindow},
		heureka.NamedDuration{Field: "FlapHoldMax", Value: c.FlapHoldMax},
	); err != nil {
		return err
	}
	switch {
	case c.RenewInterval < time.Second:
		return heureka.InvalidConfig("RenewInterval", c.RenewInterval, "Eureka counts in whole seconds, so at least 1s")
	case c.LeaseDuration <= c.RenewInterval:
		return heureka.InvalidConfig("LeaseDuration", c.LeaseDuration, "must be longer than RenewInterval %v, or every late heartbeat expires the lease", c.RenewInterval)
	case c.ProbeTimeout > c.ProbeInterval:
		return heureka.InvalidConfig("ProbeTimeout", c.ProbeTimeout, "is longer than ProbeInterval %v", c.ProbeInterval)
	case c.FailureThreshold < 1:
		return heureka.InvalidConfig("FailureThreshold", c.FailureThreshold, "want at least 1")
	case c.DrainPeriod < 0:
		return heureka.InvalidConfig("DrainPeriod", c.DrainPeriod, "want zero or more")
	case c.BackoffMin > c.BackoffMax:
		return heureka.InvalidConfig("BackoffMin", c.BackoffMin, "is more than BackoffMax %v", c.BackoffMax)
	case c.HungMarkAfter < 0:
		return heureka.InvalidConfig("HungMarkAfter", c.HungMarkAfter, "want zero or more")
	case c.UpAfter < 0:
		return heureka.InvalidConfig("UpAfter", c.UpAfter, "want zero or more")
	case c.FlapHoldMax < c.UpAfter:
		return heureka.InvalidConfig("FlapHoldMax", c.FlapHoldMax, "is less than UpAfter %v", c.UpAfter)
	case countSet(c.PID != 0, c.PIDFile != "", c.SystemdUnit != "") > 1:
		if c.PID == 0 {
			return heureka.InvalidConfig("PIDFile", c.PIDFile, "is set with SystemdUnit %q: give at most one of them", c.SystemdUnit)
		}
		return heureka.InvalidConfig("PID", c.PID, "is set with PIDFile %q or SystemdUnit %q: give at most one of the three", c.PIDFile, c.SystemdUnit)
	case c.PID < 0 || c.PID > maxPID:
		return heureka.InvalidConfig("PID", c.PID, "is out of range 1-%d", maxPID)
	case strings.ContainsAny(c.SystemdUnit, " \t\r\n/") || strings.HasPrefix(c.SystemdUnit, "-"):
		return heureka.InvalidConfig("SystemdUnit", c.SystemdUnit, "is not a unit name")
	}
	return nil
}

// App is the application the agent registers under, e.g.
// "hdfs-datanode.prod".
func (c Config) App() string { return heureka.RoleApp(c.Role, c.Cluster) }

// InstanceID is the instance ID the agent registers, e.g.
// "prod-dn1.example.com-dc1.rack-a".
func (c Config) InstanceID() string { return heureka.InstanceID(c.Cluster, c.Host, c.Rack) }

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// statusPage is the page registered for u: u without credentials, or ""
// when u does not parse, has no host or names a loopback one.
func statusPage(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Hostname() == "" || p.Hostname() == "localhost" {
		return ""
	}
	if ip, err := netip.ParseAddr(p.Hostname()); err == nil && ip.IsLoopback() {
		return ""
	}
	p.User = nil
	return p.String()
}

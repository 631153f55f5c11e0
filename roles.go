package heureka

import (
	"strings"
	"unicode"
)

// The metadata keys every role's agent registers and every consumer
// (dashboard, alerts, pick, DNS, the CLI) may read without knowing the
// role. A role adds keys of its own beside them (hdfs.Meta*, say).
const (
	MetaRack = "rack" // network location, e.g. "/dc1/rack-a" (NormalizeRack)
	// MetaVersion is the daemon's own software version, e.g. "3.3.6".
	MetaVersion = "version"
	// MetaRoleState is the daemon's place in its cluster as the daemon
	// says it: a NameNode's or ResourceManager's "active" or "standby", a
	// ZooKeeper server's "leader" or "follower", and so on; absent for a
	// role that has none. A NameNode's also stays under hdfs.MetaHAState.
	MetaRoleState = "role_state"
	// MetaDownCause says, while the status is DOWN, why the agent reported
	// it, e.g. "process exited".
	MetaDownCause = "down_cause"
	// MetaProbeState is ProbeStateHung while the daemon accepts
	// connections but does not answer, before it is reported DOWN.
	MetaProbeState = "probe_state"
	// MetaHTTPPort is the daemon's web port, where it has one: the port
	// of its /jmx, REST API or admin server (hdfs.MetaHTTPPort is the
	// same key).
	MetaHTTPPort = "http_port"
)

// ProbeStateHung is MetaProbeState's value while a daemon is paused (a
// long GC, say): it is still UP, and whoever places work takes it last.
const ProbeStateHung = "hung"

// DefaultRack is the rack of a node nobody has placed (Hadoop's
// NetworkTopology.DEFAULT_RACK, which every role shares).
const DefaultRack = "/default-rack"

// RoleApp returns the application a role's daemons of one cluster register
// under, "<role>.<cluster>" in lower case: RoleApp("hdfs-datanode", "prod")
// = "hdfs-datanode.prod". Eureka upper-cases application names on the
// wire, so case carries nothing.
func RoleApp(role, cluster string) string {
	return strings.ToLower(role + "." + cluster)
}

// ParseRoleApp splits an application name made by RoleApp, in any case, at
// its first dot: the role comes back lower-case, and so does the cluster,
// which may hold dots of its own. ok is false when either part is empty or
// the role is not a role name (ValidRoleName).
func ParseRoleApp(app string) (role, cluster string, ok bool) {
	role, cluster, found := strings.Cut(strings.ToLower(strings.TrimSpace(app)), ".")
	if !found || cluster == "" || !ValidRoleName(role) {
		return "", "", false
	}
	return role, cluster, true
}

// ValidRoleName reports whether role can name a role: lower-case letters,
// digits and inner hyphens, 1 to 63 of them (a DNS label, so that a role
// can be a name in heureka's DNS).
func ValidRoleName(role string) bool {
	if role == "" || len(role) > 63 || role[0] == '-' || role[len(role)-1] == '-' {
		return false
	}
	for _, r := range role {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// NormalizeRack returns the rack path Hadoop would use for rack: surrounding
// spaces trimmed, a leading '/' added, repeated and trailing slashes removed.
// An empty rack, "/", or a rack containing whitespace or control characters
// (which the topology-script protocol cannot carry: its output is split on
// whitespace) becomes DefaultRack.
func NormalizeRack(rack string) string {
	rack = strings.TrimSpace(rack)
	if strings.ContainsFunc(rack, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == 0xa0 }) {
		return DefaultRack
	}
	if len(rack) > 1 && rack[0] == '/' && rack[len(rack)-1] != '/' && !strings.Contains(rack, "//") {
		return rack // already in shape: the usual case, without a copy
	}
	var b strings.Builder
	b.Grow(len(rack) + 1)
	for part := range strings.SplitSeq(rack, "/") {
		if part == "" {
			continue
		}
		b.WriteByte('/')
		b.WriteString(part)
	}
	if b.Len() == 0 {
		return DefaultRack
	}
	return b.String()
}

// rackInID writes a normalised rack's inner slashes as dots, and a
// backslash as '_', for InstanceID.
var rackInID = strings.NewReplacer("/", ".", `\`, "_")

// InstanceID returns the registry instance ID "<cluster>-<host>-<rack>" of
// a daemon of any role, e.g. InstanceID("prod", "dn1.example.com",
// "/dc1/rack-a") = "prod-dn1.example.com-dc1.rack-a".
//
// Cluster and host are lower-cased (both are case-insensitive). The rack is
// normalised (NormalizeRack), its leading '/' dropped and every other '/'
// written as '.', since an ID is one URL path segment; a backslash becomes
// '_'. The rack part is therefore one-to-one for every rack whose components
// contain no '.', which covers named racks such as "/dc1/rack-a"; an
// IP-style single-level rack such as "/10.1.2.0" maps to "10.1.2.0" and could
// only collide with a rack spelled "/10/1/2/0". The ID is a key, not a
// record: read the rack from the metadata, never back out of the ID.
func InstanceID(cluster, host, rack string) string {
	r := rackInID.Replace(strings.TrimPrefix(NormalizeRack(rack), "/"))
	return strings.ToLower(cluster) + "-" + strings.ToLower(host) + "-" + r
}

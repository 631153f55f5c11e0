package hdfs

import (
	"strings"
	"unicode"
)

// Role is the HDFS daemon an instance runs.
type Role string

const (
	RoleDataNode Role = "datanode"
	RoleNameNode Role = "namenode"
)

// App-name prefixes. An HDFS cluster registers its DataNodes under
// "hdfs-datanode.<cluster>" and its NameNodes under "hdfs-namenode.<cluster>".
const (
	appPrefix         = "hdfs-"
	AppPrefixDataNode = appPrefix + string(RoleDataNode) + "."
	AppPrefixNameNode = appPrefix + string(RoleNameNode) + "."
)

// DefaultRack is Hadoop's rack for a node nobody has placed
// (NetworkTopology.DEFAULT_RACK).
const DefaultRack = "/default-rack"

// AppName returns the application name for role in cluster, e.g.
// AppName(RoleDataNode, "prod") = "hdfs-datanode.prod".
//
// Eureka upper-cases application names on the wire, so case carries no
// information: AppName returns the lower-case form and ParseAppName accepts
// any case. Cluster names should be lower-case and must not contain '/'.
func AppName(role Role, cluster string) string {
	return strings.ToLower(appPrefix + string(role) + "." + cluster)
}

// ParseAppName reports the role and cluster an application name stands for.
// It accepts both the form AppName returns and the upper-case form Eureka
// serves ("HDFS-DATANODE.PROD"); the cluster comes back lower-case. ok is
// false for any other name, including one with an empty cluster.
func ParseAppName(app string) (role Role, cluster string, ok bool) {
	s := strings.ToLower(strings.TrimSpace(app))
	for _, r := range []Role{RoleDataNode, RoleNameNode} {
		prefix := appPrefix + string(r) + "."
		if c, found := strings.CutPrefix(s, prefix); found && c != "" {
			return r, c, true
		}
	}
	return "", "", false
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

// InstanceID returns the registry instance ID "<cluster>-<host>-<rack>" of
// an HDFS daemon, e.g. InstanceID("prod", "dn1.example.com", "/dc1/rack-a")
// = "prod-dn1.example.com-dc1.rack-a".
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
	r := strings.TrimPrefix(NormalizeRack(rack), "/")
	r = strings.NewReplacer("/", ".", `\`, "_").Replace(r)
	return strings.ToLower(cluster) + "-" + strings.ToLower(host) + "-" + r
}

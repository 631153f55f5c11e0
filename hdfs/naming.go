package hdfs

import (
	"strings"

	"github.com/heureka-project/heureka"
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
// (NetworkTopology.DEFAULT_RACK), heureka.DefaultRack.
const DefaultRack = heureka.DefaultRack

// RoleName is the role, in heureka's sense (heureka.RoleApp), that an HDFS
// daemon registers as: "hdfs-datanode" or "hdfs-namenode".
func RoleName(role Role) string { return appPrefix + string(role) }

// AppName returns the application name for role in cluster, e.g.
// AppName(RoleDataNode, "prod") = "hdfs-datanode.prod":
// heureka.RoleApp(RoleName(role), cluster).
//
// Eureka upper-cases application names on the wire, so case carries no
// information: AppName returns the lower-case form and ParseAppName accepts
// any case. Cluster names should be lower-case and must not contain '/'.
func AppName(role Role, cluster string) string {
	return heureka.RoleApp(RoleName(role), cluster)
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

// NormalizeRack is heureka.NormalizeRack: the rack path Hadoop would use.
func NormalizeRack(rack string) string { return heureka.NormalizeRack(rack) }

// InstanceID is heureka.InstanceID, the ID of a daemon of every role:
// "<cluster>-<host>-<rack>", e.g. InstanceID("prod", "dn1.example.com",
// "/dc1/rack-a") = "prod-dn1.example.com-dc1.rack-a".
func InstanceID(cluster, host, rack string) string { return heureka.InstanceID(cluster, host, rack) }

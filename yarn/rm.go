package yarn

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/fetch"
)

// Endpoints and bounds.
const (
	// ClusterInfoPath is the RM's cluster information resource
	// (ResourceManagerRest.md, "Cluster Information API").
	ClusterInfoPath = "/ws/v1/cluster/info"
	// ClusterIDKey names the RM HA cluster (YarnConfiguration.RM_CLUSTER_ID);
	// the RMs of one cluster share it and use it for their election znode.
	ClusterIDKey = "yarn.resourcemanager.cluster-id"
	// ConfPath is Hadoop's ConfServlet; ?name=KEY returns one property.
	ConfPath = "/conf"
	// MaxAnswerBytes bounds each answer read. The cluster info is under a
	// kilobyte; a megabyte leaves room for any build string.
	MaxAnswerBytes = 1 << 20
)

// HAState is an RM's HA state, lower case (HAServiceProtocol.HAServiceState).
type HAState string

const (
	HAInitializing HAState = "initializing"
	HAActive       HAState = "active"
	HAStandby      HAState = "standby"
	HAObserver     HAState = "observer"
	HAStopping     HAState = "stopping"
)

// ZKConnection is haZooKeeperConnectionState read: the RM's elector's view
// of ZooKeeper.
type ZKConnection string

const (
	// ZKConnected: "CONNECTED" (ActiveStandbyElector) or "Connected to
	// zookeeper : true" (the Curator elector).
	ZKConnected ZKConnection = "connected"
	// ZKLost: "DISCONNECTED" or "TERMINATED", or "Connected to zookeeper :
	// false".
	ZKLost ZKConnection = "lost"
	// ZKNoElector: HA or automatic failover is off, so there is no elector
	// ("ResourceManager HA is not enabled.", "Auto Failover is not
	// enabled.", "Could not find leader elector. ...").
	ZKNoElector ZKConnection = "no-elector"
	// ZKUnknown: absent (Hadoop before 2.8) or a text not listed above.
	ZKUnknown ZKConnection = ""
)

// ResourceManager is what heureka reads from one RM.
type ResourceManager struct {
	// StartedOn is the RM's start time, ms since the epoch. The answer's
	// "id" is the same stamp (ResourceManager.getClusterTimeStamp).
	StartedOn int64
	// ServiceState is the RM service's state: NOTINITED, INITED, STARTED
	// or STOPPED.
	ServiceState string
	HAState      HAState // "" when absent (Hadoop 2.0)
	// ZooKeeper is the elector's connection, from ZooKeeperText.
	ZooKeeper     ZKConnection
	ZooKeeperText string
	StateStore    string // rmStateStoreName, a class name
	Version       string // resourceManagerVersion, e.g. "3.3.6"
	HadoopVersion string
	// ClusterID is yarn.resourcemanager.cluster-id, set by Read (the
	// cluster info does not carry it); "" when not read.
	ClusterID string
}

type clusterInfo struct {
	ClusterInfo *struct {
		ID                         json.Number `json:"id"`
		StartedOn                  json.Number `json:"startedOn"`
		State                      string      `json:"state"`
		HAState                    string      `json:"haState"`
		RMStateStoreName           string      `json:"rmStateStoreName"`
		ResourceManagerVersion     string      `json:"resourceManagerVersion"`
		HadoopVersion              string      `json:"hadoopVersion"`
		HAZooKeeperConnectionState string      `json:"haZooKeeperConnectionState"`
	} `json:"clusterInfo"`
}

// ParseClusterInfo reads the JSON answer of ClusterInfoPath. Errors
// (EINVALID) name the endpoint and say what is wrong: not JSON, no
// clusterInfo object, no state, or an haState Hadoop does not define.
func ParseClusterInfo(b []byte) (ResourceManager, error) {
	var rm ResourceManager
	var ci clusterInfo
	if err := json.Unmarshal(b, &ci); err != nil {
		return rm, heureka.Errorf(heureka.EINVALID, "%s: the answer is not the cluster-info JSON: %v (starts %s)", ClusterInfoPath, err, fetch.Excerpt(b))
	}
	c := ci.ClusterInfo
	if c == nil {
		return rm, heureka.Errorf(heureka.EINVALID, "%s: the answer has no \"clusterInfo\" object (starts %s)", ClusterInfoPath, fetch.Excerpt(b))
	}
	if strings.TrimSpace(c.State) == "" {
		return rm, heureka.Errorf(heureka.EINVALID, "%s: clusterInfo has no \"state\"", ClusterInfoPath)
	}
	rm.ServiceState = strings.ToUpper(strings.TrimSpace(c.State))
	if n, err := c.StartedOn.Int64(); err == nil && n > 0 {
		rm.StartedOn = n
	}
	if s := strings.TrimSpace(c.HAState); s != "" {
		st, ok := ParseHAState(s)
		if !ok {
			return rm, heureka.Errorf(heureka.EINVALID, "%s: haState %q is not one of INITIALIZING, ACTIVE, STANDBY, OBSERVER, STOPPING", ClusterInfoPath, s)
		}
		rm.HAState = st
	}
	rm.ZooKeeperText = c.HAZooKeeperConnectionState
	rm.ZooKeeper = ParseZKConnection(c.HAZooKeeperConnectionState)
	rm.StateStore = c.RMStateStoreName
	rm.Version = strings.TrimSpace(c.ResourceManagerVersion)
	rm.HadoopVersion = strings.TrimSpace(c.HadoopVersion)
	return rm, nil
}

// ParseHAState reads an HA state in any case; ok is false for anything
// HAServiceState does not define.
func ParseHAState(s string) (HAState, bool) {
	switch st := HAState(strings.ToLower(strings.TrimSpace(s))); st {
	case HAInitializing, HAActive, HAStandby, HAObserver, HAStopping:
		return st, true
	}
	return "", false
}

// ParseZKConnection reads haZooKeeperConnectionState, as the two electors
// and the no-elector cases word it (see ZKConnection).
func ParseZKConnection(s string) ZKConnection {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "connected", t == "connected to zookeeper : true":
		return ZKConnected
	case t == "disconnected", t == "terminated", t == "connected to zookeeper : false":
		return ZKLost
	case strings.Contains(t, "not enabled"), strings.HasPrefix(t, "could not find leader elector"):
		return ZKNoElector
	}
	return ZKUnknown
}

// ParseConfProperty reads the JSON answer of /conf?name=key:
// {"property":{"key":...,"value":...,"isFinal":...,"resource":...}}.
func ParseConfProperty(b []byte, key string) (string, error) {
	var v struct {
		Property *struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"property"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Property == nil {
		return "", heureka.Errorf(heureka.EINVALID, "%s?name=%s: the answer is not a configuration property in JSON (starts %s)", ConfPath, key, fetch.Excerpt(b))
	}
	if v.Property.Key != key {
		return "", heureka.Errorf(heureka.EINVALID, "%s?name=%s: the answer is property %q", ConfPath, key, v.Property.Key)
	}
	return v.Property.Value, nil
}

// Health says whether the RM can do its part, and if not why:
//   - its service is not STARTED (a stopping or failed RM);
//   - it is initializing or stopping (HA state), so neither serving nor
//     ready to take over;
//   - its elector lost ZooKeeper: an active RM in that state is about to
//     step down and a standby cannot be elected, so neither can be relied
//     on.
//
// An active or standby RM with ZooKeeper connected, or without an elector
// (HA or automatic failover off), is healthy.
func (rm ResourceManager) Health() (bool, string) {
	switch {
	case rm.ServiceState != "STARTED":
		return false, "resourcemanager service is " + rm.ServiceState + ", not STARTED"
	case rm.HAState == HAInitializing || rm.HAState == HAStopping:
		return false, "resourcemanager HA state is " + string(rm.HAState)
	case rm.ZooKeeper == ZKLost:
		return false, "resourcemanager lost its ZooKeeper connection (" + strings.TrimSpace(rm.ZooKeeperText) + "): it cannot hold or win the election"
	}
	return true, ""
}

// RoleState is the state to register: the HA state ("active", "standby",
// ...), or "active" for an RM without HA (it is the only one).
func (rm ResourceManager) RoleState() string {
	if rm.HAState == "" {
		return string(HAActive)
	}
	return string(rm.HAState)
}

// Read asks the RM at baseURL (e.g. "http://rm1:8088") for its cluster
// info and, when wantClusterID is not "", for its cluster id, which must
// match: an RM of another cluster is an ECONFLICT error, never a report.
// c bounds nothing itself; ctx's deadline bounds the whole exchange.
func Read(ctx context.Context, c *http.Client, baseURL, wantClusterID string) (ResourceManager, error) {
	base := strings.TrimRight(baseURL, "/")
	b, err := fetch.Get(ctx, c, base+ClusterInfoPath, "application/json", MaxAnswerBytes)
	if err != nil {
		return ResourceManager{}, err
	}
	rm, err := ParseClusterInfo(b)
	if err != nil {
		return ResourceManager{}, heureka.Errorf(heureka.ErrorCode(err), "%s: %v", base, err)
	}
	if wantClusterID == "" {
		return rm, nil
	}
	b, err = fetch.Get(ctx, c, base+ConfPath+"?name="+ClusterIDKey, "application/json", MaxAnswerBytes)
	if err != nil {
		return ResourceManager{}, err
	}
	id, err := ParseConfProperty(b, ClusterIDKey)
	if err != nil {
		return ResourceManager{}, heureka.Errorf(heureka.ErrorCode(err), "%s: %v", base, err)
	}
	rm.ClusterID = id
	if id != wantClusterID {
		return ResourceManager{}, heureka.Errorf(heureka.ECONFLICT, "%s: the resourcemanager belongs to cluster %q (%s), not %q: not registering it", base, id, ClusterIDKey, wantClusterID)
	}
	return rm, nil
}

package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/heureka-project/heureka/yarn"
)

// yarnModel simulates ResourceManagers: GET /ws/v1/cluster/info in
// Hadoop 3's shape (ClusterInfo), which a standby answers itself, and
// GET /conf?name=yarn.resourcemanager.cluster-id (ConfServlet). The
// first RM starts active and the others standby; one RM alone has no HA
// (haState ACTIVE, "ResourceManager HA is not enabled."). When the active
// RM stops, the first running standby becomes active at once, as the
// elector makes it (without the ZooKeeper session timeout a crash costs);
// a restarted RM comes back standby while another is active.
type yarnModel struct {
	c   *Cluster
	rms []yarnRM
}

type yarnRM struct {
	ha        yarn.HAState
	zkLost    bool
	startedOn int64
}

const yarnRole = yarn.RoleName

func newYARN(c *Cluster) *yarnModel {
	c.addHTTPMembers(yarnRole, "rm", c.cfg.Members)
	m := &yarnModel{c: c, rms: make([]yarnRM, len(c.members))}
	for i := range m.rms {
		m.rms[i] = yarnRM{ha: yarn.HAStandby, startedOn: startCode()}
	}
	m.rms[0].ha = yarn.HAActive
	return m
}

func (m *yarnModel) ha() bool { return len(m.rms) > 1 }

func (m *yarnModel) answer(i int, r *http.Request) (int, []byte) {
	switch strings.TrimRight(r.URL.Path, "/") {
	case yarn.ClusterInfoPath, "/ws/v1/cluster":
		return http.StatusOK, m.clusterInfo(i)
	case yarn.ConfPath:
		key := r.URL.Query().Get("name")
		if key != yarn.ClusterIDKey {
			return http.StatusNotFound, fmt.Appendf(nil, `{"RemoteException":{"message":"Property %s not found (heureka's simulator knows only %s)"}}`, jsonEscape(key), yarn.ClusterIDKey)
		}
		b, _ := json.Marshal(map[string]any{"property": map[string]any{
			"key": key, "value": m.c.cfg.ClusterID, "isFinal": false, "resource": "yarn-site.xml"}})
		return http.StatusOK, b
	}
	return http.StatusNotFound, []byte(`{"RemoteException":{"exception":"NotFoundException","message":"heureka's simulated ResourceManager serves /ws/v1/cluster/info and /conf only"}}`)
}

func (m *yarnModel) clusterInfo(i int) []byte {
	rm := m.rms[i]
	v := m.c.members[i].version
	zk := "CONNECTED"
	switch {
	case !m.ha():
		zk = "ResourceManager HA is not enabled."
	case rm.zkLost:
		zk = "DISCONNECTED"
	}
	build := v + " from heureka-simulator by heureka source checksum 0"
	info := struct {
		ID                 int64  `json:"id"`
		StartedOn          int64  `json:"startedOn"`
		State              string `json:"state"`
		HAState            string `json:"haState"`
		StateStore         string `json:"rmStateStoreName"`
		Version            string `json:"resourceManagerVersion"`
		BuildVersion       string `json:"resourceManagerBuildVersion"`
		BuiltOn            string `json:"resourceManagerVersionBuiltOn"`
		HadoopVersion      string `json:"hadoopVersion"`
		HadoopBuildVersion string `json:"hadoopBuildVersion"`
		HadoopBuiltOn      string `json:"hadoopVersionBuiltOn"`
		ZK                 string `json:"haZooKeeperConnectionState"`
	}{
		ID: rm.startedOn, StartedOn: rm.startedOn, State: "STARTED", HAState: strings.ToUpper(string(rm.ha)),
		StateStore: "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
		Version:    v, BuildVersion: build, BuiltOn: "2023-06-18T08:22Z",
		HadoopVersion: v, HadoopBuildVersion: build, HadoopBuiltOn: "2023-06-18T08:22Z", ZK: zk,
	}
	if !m.ha() {
		info.StateStore = "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore"
	}
	b, _ := json.MarshalIndent(map[string]any{"clusterInfo": info}, "", "  ")
	return b
}

func (m *yarnModel) state(i int) string { return string(m.rms[i].ha) }

func (m *yarnModel) setState(i int, state string) error {
	st, ok := yarn.ParseHAState(state)
	if !ok || st == yarn.HAObserver {
		return fmt.Errorf("sim: a ResourceManager's state is one of %s, not %q", m.states(), state)
	}
	if st == yarn.HAActive {
		for j := range m.rms {
			if j != i && m.rms[j].ha == yarn.HAActive {
				m.rms[j].ha = yarn.HAStandby
			}
		}
	}
	m.rms[i].ha = st
	return nil
}

func (m *yarnModel) up(i int, running bool) {
	if running {
		m.rms[i] = yarnRM{ha: yarn.HAStandby, startedOn: startCode()}
		if !m.ha() || m.active() < 0 {
			m.rms[i].ha = yarn.HAActive
		}
		return
	}
	if m.rms[i].ha != yarn.HAActive {
		return
	}
	m.rms[i].ha = yarn.HAStandby // what a restart brings it back as
	for _, j := range m.c.running(yarnRole) {
		if m.rms[j].ha == yarn.HAStandby {
			m.rms[j].ha = yarn.HAActive
			m.c.log.Info("the standby ResourceManager took over", "member", m.c.members[j].name)
			return
		}
	}
}

// active is the running active RM, or -1.
func (m *yarnModel) active() int {
	for _, j := range m.c.running(yarnRole) {
		if m.rms[j].ha == yarn.HAActive {
			return j
		}
	}
	return -1
}

func (m *yarnModel) set(i int, key, value string) error {
	if key != "zk" {
		return fmt.Errorf("sim: a ResourceManager has version and zk (connected or lost), not %q", key)
	}
	switch value {
	case "connected":
		m.rms[i].zkLost = false
	case "lost":
		m.rms[i].zkLost = true
	default:
		return fmt.Errorf("sim: zk=%q: want connected or lost", value)
	}
	return nil
}

func (m *yarnModel) states() string { return "active (a failover), standby, initializing, stopping" }

// jsonEscape returns s as the inside of a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

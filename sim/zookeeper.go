package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka/zookeeper"
)

// zkModel simulates a ZooKeeper ensemble's AdminServers (one server is a
// standalone one): GET /commands/mntr, /commands/srvr and
// /commands/voting_view in ZooKeeper 3.8's shapes. A server without quorum
// answers as 3.8 does: mntr with HTTP 500 (Jetty's error page), srvr with
// "This ZooKeeper instance is not currently serving requests". The
// servers that run and are not set not-serving or read-only vote; while
// more than half of the ensemble votes, the leader is the one told, or
// else the voter with the highest id (as ZooKeeper's election picks it
// among servers with the same history), elected at once when the leader
// stops; with half or fewer, none serves.
type zkModel struct {
	c      *Cluster
	leader int      // -1: none
	flag   []string // "", "not-serving" or "read-only", as set
}

const zkRole = zookeeper.RoleName

func newZooKeeper(c *Cluster) *zkModel {
	c.addHTTPMembers(zkRole, "zk", c.cfg.Members)
	m := &zkModel{c: c, flag: make([]string, len(c.members)), leader: -1}
	// Before Open nothing runs; the servers start together, and the
	// highest id leads.
	m.leader = len(c.members) - 1
	return m
}

func (m *zkModel) standalone() bool { return len(m.flag) == 1 }

// quorumAddr is server i's quorum address, as server.N= names it.
func (m *zkModel) quorumAddr(i int) string {
	return fmt.Sprintf("zk%d.%s:2888", i+1, m.c.cfg.ClusterID)
}

// ensemble is the voting members as zookeeper.ParseEnsemble reads them.
func (m *zkModel) ensemble() string {
	if m.standalone() {
		return ""
	}
	parts := make([]string, len(m.flag))
	for i := range m.flag {
		parts[i] = strconv.Itoa(i+1) + "=" + m.quorumAddr(i)
	}
	return strings.Join(parts, ",")
}

// voters are the running servers not set aside, in id order.
func (m *zkModel) voters() []int {
	var out []int
	for _, j := range m.c.running(zkRole) {
		if m.flag[j] == "" {
			out = append(out, j)
		}
	}
	return out
}

func (m *zkModel) quorum() bool { return 2*len(m.voters()) > len(m.flag) }

// elect keeps the leader while it votes and the ensemble has a quorum,
// else picks the voter with the highest id, or none.
func (m *zkModel) elect() {
	vs := m.voters()
	switch {
	case !m.quorum():
		if m.leader >= 0 {
			m.c.log.Info("the ZooKeeper ensemble lost its quorum")
		}
		m.leader = -1
	case m.leader < 0 || m.flag[m.leader] != "" || !m.c.members[m.leader].d.running():
		m.leader = lastOf(vs)
		m.c.log.Info("a ZooKeeper leader was elected", "member", m.c.members[m.leader].name)
	}
}

func (m *zkModel) state(i int) string {
	switch {
	case m.standalone():
		return string(zookeeper.StateStandalone)
	case m.flag[i] != "":
		return m.flag[i]
	case m.leader < 0:
		return string(zookeeper.StateNotServing)
	case i == m.leader:
		return string(zookeeper.StateLeader)
	}
	return string(zookeeper.StateFollower)
}

func (m *zkModel) answer(i int, r *http.Request) (int, []byte) {
	st := m.state(i)
	notServing := st == string(zookeeper.StateNotServing)
	cmd := strings.TrimPrefix(strings.TrimRight(r.URL.Path, "/"), "/commands/")
	var v map[string]any
	switch cmd {
	case "mntr":
		if notServing {
			return http.StatusInternalServerError, []byte("<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html;charset=ISO-8859-1\"/>\n" +
				"<title>Error 500 java.lang.NullPointerException</title>\n</head>\n<body><h2>HTTP ERROR 500 java.lang.NullPointerException</h2>\n" +
				"<p>heureka's simulated ZooKeeper: this server has no quorum.</p>\n</body>\n</html>\n")
		}
		v = m.mntr(i, st)
	case "srvr":
		if notServing {
			v = map[string]any{"command": "srvr", "error": zookeeper.NotServing}
			break
		}
		v = map[string]any{"version": m.versionText(i), "read_only": st == string(zookeeper.StateReadOnly),
			"server_stats": map[string]any{"server_state": st, "outstanding_requests": 0, "num_alive_client_connections": 0},
			"node_count":   5, "command": "srvr", "error": nil}
	case "voting_view":
		cfg := map[string]any{}
		if !m.standalone() {
			for j := range m.flag {
				cfg[strconv.Itoa(j+1)] = map[string]any{
					"server_addresses": []string{m.quorumAddr(j)}, "election_addresses": []string{strings.Replace(m.quorumAddr(j), ":2888", ":3888", 1)},
					"client_address": "", "learner_type": "participant"}
			}
		}
		v = map[string]any{"current_config": cfg, "command": "voting_view", "error": nil}
	default:
		b, _ := json.Marshal(map[string]any{"command": cmd, "error": "Unknown command: " + cmd + " (heureka's simulated AdminServer serves mntr, srvr and voting_view)"})
		return http.StatusNotFound, b
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return http.StatusOK, b
}

func (m *zkModel) versionText(i int) string {
	return m.c.members[i].version + "-heureka-simulator, built on 2024-01-01 00:00 UTC"
}

func (m *zkModel) mntr(i int, st string) map[string]any {
	v := map[string]any{
		"version": m.versionText(i), "server_state": st,
		"ephemerals_count": 0, "num_alive_connections": 1, "avg_latency": 0.0, "outstanding_requests": 0,
		"znode_count": 5, "watch_count": 0, "approximate_data_size": 182, "uptime": 1000,
		"command": "mntr", "error": nil,
	}
	if !m.standalone() {
		v["quorum_size"] = len(m.flag)
		v["peer_state"] = map[string]string{"leader": "leading - broadcast", "follower": "following - broadcast"}[st]
	}
	if st == string(zookeeper.StateLeader) {
		n := len(m.voters()) - 1
		v["learners"], v["synced_followers"], v["synced_non_voting_followers"], v["synced_observers"] = n, n, 0, 0
	}
	return v
}

func (m *zkModel) setState(i int, state string) error {
	switch zookeeper.ServerState(state) {
	case zookeeper.StateLeader:
		if m.flag[i] = ""; !m.quorum() || !m.c.members[i].d.running() {
			m.elect()
			return fmt.Errorf("sim: %s cannot lead: it is stopped or the ensemble has no quorum", m.c.members[i].name)
		}
		m.leader = i
	case zookeeper.StateFollower:
		m.flag[i] = ""
		if m.leader == i {
			vs := m.voters()
			m.leader = -1
			for _, j := range vs {
				if j != i {
					m.leader = j // the highest other voter, as the loop ends
				}
			}
		}
		m.elect()
	case zookeeper.StateNotServing, zookeeper.StateReadOnly:
		m.flag[i] = state
		m.elect()
	default:
		return fmt.Errorf("sim: a ZooKeeper server's state is one of %s, not %q", m.states(), state)
	}
	return nil
}

func (m *zkModel) up(i int, running bool) {
	if running {
		m.flag[i] = ""
	}
	m.elect()
}

func (m *zkModel) set(i int, key, value string) error {
	return fmt.Errorf("sim: a ZooKeeper server has version, not %q", key)
}

func (m *zkModel) states() string {
	return "leader (an election), follower, not-serving (lost its leader), read-only"
}

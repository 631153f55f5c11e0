package zookeeper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/fetch"
)

// Endpoints and bounds.
const (
	// MntrPath is the AdminServer's monitoring command (admin.enableServer,
	// admin.serverPort, 8080 by default).
	MntrPath = "/commands/mntr"
	// SrvrPath answers, on a server without quorum, the JSON error that
	// tells "not serving" from a broken AdminServer.
	SrvrPath = "/commands/srvr"
	// VotingViewPath lists the ensemble's voting members.
	VotingViewPath = "/commands/voting_view"
	// MaxAnswerBytes bounds each answer. A 3.8 leader's mntr is about 20 KB
	// (it carries every metric); 1 MiB leaves room for many more.
	MaxAnswerBytes = 1 << 20
	// NotServing is what ZooKeeper says instead of answering while it has
	// no quorum (ZooKeeperServer.isRunning() is false).
	NotServing = "This ZooKeeper instance is not currently serving requests"
)

// ServerState is zk_server_state (QuorumPeer.ServerState, lower case), or
// StateNotServing.
type ServerState string

const (
	StateLeader     ServerState = "leader"
	StateFollower   ServerState = "follower"
	StateObserver   ServerState = "observer"
	StateStandalone ServerState = "standalone"
	StateReadOnly   ServerState = "read-only"
	// StateNotServing is a server that answered but is not serving: in a
	// quorum, one looking for a leader.
	StateNotServing ServerState = "not-serving"
)

// Mntr is what heureka reads from a server's mntr.
type Mntr struct {
	State ServerState
	// PeerState is zk_peer_state (3.6+), e.g. "following - broadcast",
	// "leading - broadcast"; "" for a standalone server or when absent.
	PeerState string
	// Version is the release, e.g. "3.8.0", from zk_version
	// ("3.8.0-<commit>, built on ..."); VersionText is all of it.
	Version, VersionText string

	OutstandingRequests int64
	ZnodeCount          int64
	WatchCount          int64
	EphemeralsCount     int64
	AliveConnections    int64
	// QuorumSize is zk_quorum_size (3.6+): voting members; 0 if absent.
	QuorumSize int64
	// Learners and SyncedFollowers are a leader's (zk_learners,
	// zk_synced_followers); valid only when LeaderFiguresKnown.
	LeaderFiguresKnown bool
	Learners           int64
	SyncedFollowers    int64
}

// ParseAdminMntr reads the AdminServer's /commands/mntr JSON. An answer
// with an "error" (the command failed) is StateNotServing when the error
// is NotServing, else an error.
func ParseAdminMntr(b []byte) (Mntr, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return Mntr{}, heureka.Errorf(heureka.EINVALID, "%s: the answer is not the AdminServer's JSON (starts %s)", MntrPath, fetch.Excerpt(b))
	}
	kv := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v) // numbers and booleans as written
		}
		kv[k] = s
	}
	if e := kv["error"]; e != "" && e != "null" {
		if strings.Contains(e, NotServing) {
			return Mntr{State: StateNotServing}, nil
		}
		return Mntr{}, heureka.Errorf(heureka.EINVALID, "%s: the command failed: %s", MntrPath, fetch.Excerpt([]byte(e)))
	}
	return fromKV(MntrPath, kv)
}

// ParseMntr reads the mntr four-letter word's answer: "zk_key<TAB>value"
// lines, or NotServing.
func ParseMntr(b []byte) (Mntr, error) {
	t := bytes.TrimSpace(b)
	if string(t) == NotServing {
		return Mntr{State: StateNotServing}, nil
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxAnswerBytes)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok || !strings.HasPrefix(k, "zk_") {
			return Mntr{}, heureka.Errorf(heureka.EINVALID, "mntr: line %s is not \"zk_<key><TAB><value>\"", fetch.Excerpt([]byte(line)))
		}
		kv[strings.TrimPrefix(k, "zk_")] = v
	}
	if err := sc.Err(); err != nil {
		return Mntr{}, heureka.Errorf(heureka.EINVALID, "mntr: %v", err)
	}
	return fromKV("mntr", kv)
}

// fromKV builds a Mntr from keys without the zk_ prefix.
func fromKV(endpoint string, kv map[string]string) (Mntr, error) {
	var m Mntr
	st, ok := kv["server_state"]
	if !ok {
		return m, heureka.Errorf(heureka.EINVALID, "%s: the answer has no server_state (not a ZooKeeper mntr answer?)", endpoint)
	}
	switch s := ServerState(strings.ToLower(strings.TrimSpace(st))); s {
	case StateLeader, StateFollower, StateObserver, StateStandalone, StateReadOnly:
		m.State = s
	default:
		return m, heureka.Errorf(heureka.EINVALID, "%s: server_state %s is not leader, follower, observer, standalone or read-only", endpoint, fetch.Excerpt([]byte(st)))
	}
	m.PeerState = kv["peer_state"]
	m.VersionText = kv["version"]
	m.Version, _, _ = strings.Cut(m.VersionText, ",")
	m.Version, _, _ = strings.Cut(m.Version, "-")
	m.Version = strings.TrimSpace(m.Version)
	num := func(k string) (int64, bool) {
		v, err := strconv.ParseInt(strings.TrimSpace(kv[k]), 10, 64)
		return v, err == nil
	}
	m.OutstandingRequests, _ = num("outstanding_requests")
	m.ZnodeCount, _ = num("znode_count")
	m.WatchCount, _ = num("watch_count")
	m.EphemeralsCount, _ = num("ephemerals_count")
	m.AliveConnections, _ = num("num_alive_connections")
	m.QuorumSize, _ = num("quorum_size")
	if m.State == StateLeader {
		var ok1, ok2 bool
		m.Learners, ok1 = num("learners")
		if !ok1 {
			m.Learners, ok1 = num("followers") // before 3.6
		}
		m.SyncedFollowers, ok2 = num("synced_followers")
		m.LeaderFiguresKnown = ok1 && ok2
	}
	return m, nil
}

// Health says whether the server serves its ensemble, and if not why:
//   - not serving: it lost its leader (or never had one) and is looking
//     for one; clients connected to it are refused until it rejoins;
//   - read-only: cut off from the quorum with readonlymode.enabled, it
//     serves reads of possibly stale data and refuses writes;
//   - a leader that knows fewer synced followers than a majority needs
//     (QuorumSize/2): ZooKeeper would drop leadership at the next tick, so
//     it is already leading nothing.
//
// A leader, follower, observer or standalone server is otherwise healthy.
// Outstanding requests are a figure to register, not a health rule: a
// queue says load, not failure.
func (m Mntr) Health() (bool, string) {
	switch m.State {
	case StateNotServing:
		return false, "zookeeper is not serving requests: it has no leader (an election is under way or it is cut off from its ensemble)"
	case StateReadOnly:
		return false, "zookeeper is read-only: it is cut off from its ensemble's quorum and refuses writes"
	case StateLeader:
		if m.LeaderFiguresKnown && m.QuorumSize > 1 && m.SyncedFollowers < m.QuorumSize/2 {
			return false, "zookeeper leader has " + strconv.FormatInt(m.SyncedFollowers, 10) + " synced followers of the " + strconv.FormatInt(m.QuorumSize/2, 10) + " a quorum of " + strconv.FormatInt(m.QuorumSize, 10) + " needs"
		}
	}
	return true, ""
}

// RoleState is the state to register: leader, follower, observer,
// standalone, read-only or not-serving.
func (m Mntr) RoleState() string { return string(m.State) }

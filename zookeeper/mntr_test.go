package zookeeper

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

const recorded = "testdata/debian-3.8.0/"

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recorded, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseRecorded(t *testing.T) {
	for _, tc := range []struct {
		file     string
		parse    func([]byte) (Mntr, error)
		state    ServerState
		peer     string
		learners int64 // -1: not a leader's figure
		healthy  bool
	}{
		{"admin-mntr-leader.json", ParseAdminMntr, StateLeader, "leading - broadcast", 2, true},
		{"admin-mntr-follower.json", ParseAdminMntr, StateFollower, "following - broadcast", -1, true},
		{"admin-mntr-standalone.json", ParseAdminMntr, StateStandalone, "", -1, true},
		{"admin-srvr-looking.json", ParseAdminMntr, StateNotServing, "", -1, false},
		{"4lw-mntr-leader.txt", ParseMntr, StateLeader, "leading - broadcast", 2, true},
		{"4lw-mntr-follower.txt", ParseMntr, StateFollower, "following - broadcast", -1, true},
		{"4lw-mntr-standalone.txt", ParseMntr, StateStandalone, "", -1, true},
		{"4lw-mntr-looking.txt", ParseMntr, StateNotServing, "", -1, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m, err := tc.parse(readFile(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.State != tc.state || m.PeerState != tc.peer {
				t.Errorf("state %q peer %q, want %q %q", m.State, m.PeerState, tc.state, tc.peer)
			}
			if m.State != StateNotServing && (m.Version != "3.8.0" || !strings.HasPrefix(m.VersionText, "3.8.0-")) {
				t.Errorf("version %q (%q)", m.Version, m.VersionText)
			}
			if tc.learners >= 0 && (!m.LeaderFiguresKnown || m.Learners != tc.learners || m.SyncedFollowers != 2 || m.QuorumSize != 3) {
				t.Errorf("leader figures %+v", m)
			}
			if m.State == StateLeader || m.State == StateFollower {
				if m.ZnodeCount != 5 || m.QuorumSize != 3 {
					t.Errorf("znodes %d quorum %d", m.ZnodeCount, m.QuorumSize)
				}
			}
			if ok, cause := m.Health(); ok != tc.healthy || (!ok && cause == "") {
				t.Errorf("Health() = %v %q, want %v", ok, cause, tc.healthy)
			}
			if m.RoleState() != string(tc.state) {
				t.Errorf("RoleState %q", m.RoleState())
			}
		})
	}
}

// The AdminServer's answer on a server without quorum is an HTML page with
// HTTP 500 (recorded); it is no mntr answer.
func TestParseAdminMntrHTML500(t *testing.T) {
	_, err := ParseAdminMntr(readFile(t, "admin-mntr-looking.json"))
	if heureka.ErrorCode(err) != heureka.EINVALID || !strings.Contains(err.Error(), MntrPath) {
		t.Fatalf("%v", err)
	}
}

func TestParseBad(t *testing.T) {
	for _, tc := range []struct {
		parse func([]byte) (Mntr, error)
		in    string
		want  string
	}{
		{ParseAdminMntr, ``, "not the AdminServer's JSON"},
		{ParseAdminMntr, `[1]`, "not the AdminServer's JSON"},
		{ParseAdminMntr, `{"version":"3.8.0"}`, "no server_state"},
		{ParseAdminMntr, `{"server_state":"boss"}`, `server_state "boss" is not`},
		{ParseAdminMntr, `{"command":"mntr","error":"boom"}`, "the command failed"},
		{ParseAdminMntr, `{"server_state" : "leader", "version" : "3.8.0-x, built on`, "not the AdminServer's JSON"},
		{ParseMntr, "zk_version\t3.8.0\nnonsense", `line "nonsense" is not`},
		{ParseMntr, "zk_version\t3.8.0\n", "no server_state"},
		{ParseMntr, "HTTP/1.1 400 Bad Request\r\n", "is not"},
		{ParseMntr, "mntr is not executed because it is not in the whitelist.", "is not"},
	} {
		_, err := tc.parse([]byte(tc.in))
		if heureka.ErrorCode(err) != heureka.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want EINVALID with %q", tc.in, err, tc.want)
		}
	}
}

func TestLeaderWithoutQuorumIsUnhealthy(t *testing.T) {
	m := Mntr{State: StateLeader, LeaderFiguresKnown: true, QuorumSize: 5, Learners: 4, SyncedFollowers: 1}
	if ok, cause := m.Health(); ok || !strings.Contains(cause, "1 synced followers of the 2") {
		t.Errorf("Health() = %v %q", ok, cause)
	}
	m.SyncedFollowers = 2
	if ok, _ := m.Health(); !ok {
		t.Error("a leader with a majority is unhealthy")
	}
}

func TestEnsemble(t *testing.T) {
	got, err := ParseVotingView(readFile(t, "admin-voting-view.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseEnsemble("3=127.0.0.1:22383, 1=127.0.0.1:22381:22481,2=127.0.0.1:22382")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Matches(want) || got.String() != "1=127.0.0.1:22381,2=127.0.0.1:22382,3=127.0.0.1:22383" {
		t.Errorf("voting view %s, want %s", got, want)
	}
	other, _ := ParseEnsemble("1=127.0.0.1:22381,2=127.0.0.1:22382,4=127.0.0.1:22384")
	if got.Matches(other) {
		t.Error("another ensemble matches")
	}
	for _, bad := range []string{"x=host:1", "1=host", "1"} {
		if _, err := ParseEnsemble(bad); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("ParseEnsemble(%q): %v", bad, err)
		}
	}
	for _, bad := range []string{`{`, `{"current_config":{"x":{"server_addresses":["h:1"]}}}`, `{"current_config":{"1":{}}}`, `{"error":"nope"}`} {
		if _, err := ParseVotingView([]byte(bad)); heureka.ErrorCode(err) != heureka.EINVALID {
			t.Errorf("ParseVotingView(%q): %v", bad, err)
		}
	}
}

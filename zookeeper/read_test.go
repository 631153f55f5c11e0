package zookeeper

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/zookeeper/zktest"
)

// fakeAdmin serves recorded answers, or misbehaves, by path.
func fakeAdmin(t *testing.T, routes map[string]func(http.ResponseWriter, *http.Request)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func answer(status int, body []byte) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status); w.Write(body) }
}

func TestReadBadAnswers(t *testing.T) {
	ctx := context.Background()
	leader := readFile(t, "admin-mntr-leader.json")
	voting := readFile(t, "admin-voting-view.json")
	members, _ := ParseEnsemble("1=127.0.0.1:22381,2=127.0.0.1:22382,3=127.0.0.1:22383")
	other, _ := ParseEnsemble("1=10.9.9.1:2888,2=10.9.9.2:2888,3=10.9.9.3:2888")

	for _, tc := range []struct {
		name   string
		routes map[string]func(http.ResponseWriter, *http.Request)
		want   Ensemble
		code   string
		text   string
		state  ServerState
	}{
		{name: "leader of the expected ensemble", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: answer(200, leader), VotingViewPath: answer(200, voting)}, want: members, state: StateLeader},
		{name: "another ensemble", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: answer(200, leader), VotingViewPath: answer(200, voting)}, want: other, code: heureka.ECONFLICT, text: "belongs to ensemble 1=127.0.0.1:22381"},
		{name: "no quorum, as 3.8 answers it", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: answer(500, readFile(t, "admin-mntr-looking.json")), SrvrPath: answer(200, readFile(t, "admin-srvr-looking.json"))}, state: StateNotServing},
		{name: "garbage", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: answer(200, []byte("\x00\x01garbage"))}, code: heureka.EINVALID, text: MntrPath + ": the answer is not"},
		{name: "truncated", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: answer(200, leader[:len(leader)/2])}, code: heureka.EINVALID, text: "not the AdminServer's JSON"},
		{name: "huge", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: answer(200, []byte(strings.Repeat(" ", MaxAnswerBytes+1)))}, code: heureka.ETOOLARGE, text: "larger than"},
		{name: "broken AdminServer", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: answer(500, []byte("oops"))}, code: heureka.EUNAVAILABLE, text: "HTTP 500"},
		{name: "slow", routes: map[string]func(http.ResponseWriter, *http.Request){MntrPath: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }}, code: heureka.EUNAVAILABLE, text: "no answer before the deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := fakeAdmin(t, tc.routes)
			// A short deadline for the slow daemon; room for the huge answer.
			timeout := 10 * time.Second
			if tc.name == "slow" {
				timeout = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			m, err := Read(ctx, http.DefaultClient, base, tc.want)
			if tc.code != "" {
				if heureka.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), base) {
					t.Fatalf("err %v (code %q), want %s naming %s with %q", err, heureka.ErrorCode(err), tc.code, base, tc.text)
				}
				return
			}
			if err != nil || m.State != tc.state {
				t.Fatalf("Read: %+v, %v; want state %s", m, err, tc.state)
			}
		})
	}
}

func TestRealStandalone(t *testing.T) {
	s := zktest.StartStandalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := Read(ctx, http.DefaultClient, s.AdminURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, cause := m.Health(); m.State != StateStandalone || !ok || m.Version == "" {
		t.Fatalf("standalone: %+v healthy=%v %q", m, ok, cause)
	}
}

// TestRealEnsembleLeaderKilled runs three real servers, kills the leader,
// and checks that the other two report a new leader; then kills one more
// and checks that the last reports it is not serving.
func TestRealEnsembleLeaderKilled(t *testing.T) {
	servers := zktest.StartEnsemble(t, 3)
	want, err := ParseEnsemble(zktest.Members(servers))
	if err != nil {
		t.Fatal(err)
	}
	read := func(s *zktest.Server) (Mntr, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return Read(ctx, http.DefaultClient, s.AdminURL, want)
	}
	// states polls until f accepts the states the live servers report.
	states := func(live []*zktest.Server, f func([]ServerState) bool) []ServerState {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			var got []ServerState
			for _, s := range live {
				m, err := read(s)
				if err != nil {
					t.Fatalf("server %d: %v", s.ID, err)
				}
				got = append(got, m.State)
			}
			if f(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("servers report %v", got)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	oneLeader := func(st []ServerState) bool {
		n := 0
		for _, s := range st {
			if s == StateLeader {
				n++
			} else if s != StateFollower {
				return false
			}
		}
		return n == 1
	}
	got := states(servers, oneLeader)
	leader := servers[indexOf(got, StateLeader)]
	t.Logf("leader is server %d", leader.ID)

	other, _ := ParseEnsemble("1=127.0.0.1:1,2=127.0.0.1:2,3=127.0.0.1:3")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Read(ctx, http.DefaultClient, leader.AdminURL, other); heureka.ErrorCode(err) != heureka.ECONFLICT {
		t.Errorf("a real server checked against another ensemble: %v", err)
	}

	leader.Kill()
	if _, err := read(leader); heureka.ErrorCode(err) != heureka.EUNAVAILABLE {
		t.Errorf("killed leader: %v, want EUNAVAILABLE", err)
	}
	var live []*zktest.Server
	for _, s := range servers {
		if s != leader {
			live = append(live, s)
		}
	}
	got = states(live, oneLeader)
	t.Logf("after the kill: %v", got)

	live[indexOf(got, StateLeader)].Kill()
	last := live[1-indexOf(got, StateLeader)]
	states([]*zktest.Server{last}, func(st []ServerState) bool { return st[0] == StateNotServing })
	m, _ := read(last)
	if ok, cause := m.Health(); ok || !strings.Contains(cause, "no leader") {
		t.Errorf("lone server: healthy=%v %q", ok, cause)
	}
}

func indexOf(st []ServerState, s ServerState) int {
	for i, x := range st {
		if x == s {
			return i
		}
	}
	return -1
}

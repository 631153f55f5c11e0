package zookeeper

import (
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob(recorded + "*")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "{}", "null", `{"server_state":null}`, "zk_server_state\tleader\nzk_learners\t-1", NotServing, "\t\n"} {
		f.Add([]byte(s))
	}
}

// checkMntr holds for every Mntr a parser returns.
func checkMntr(t *testing.T, m Mntr) {
	switch m.State {
	case StateLeader, StateFollower, StateObserver, StateStandalone, StateReadOnly, StateNotServing:
	default:
		t.Fatalf("state %q", m.State)
	}
	if ok, cause := m.Health(); !ok && cause == "" {
		t.Fatal("unhealthy without a cause")
	}
}

func FuzzParseAdminMntr(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := ParseAdminMntr(b); err == nil {
			checkMntr(t, m)
		}
	})
}

func FuzzParseMntr(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := ParseMntr(b); err == nil {
			checkMntr(t, m)
		}
	})
}

func FuzzParseVotingView(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseVotingView(b)
		if err != nil {
			return
		}
		for i := 1; i < len(e); i++ {
			if e[i-1].ID > e[i].ID {
				t.Fatalf("not sorted: %s", e)
			}
		}
	})
}

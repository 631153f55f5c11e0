package roles_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/zookeeper"
	"github.com/heureka-project/heureka/zookeeper/zktest"
)

// zkAgent is one server's pair of agents: one that knows its process
// through a pid file (host zkN.test), one that only probes
// (zkN-probe.test).
type zkAgent struct {
	pidID, probeID string
	pidFile        string
	pidAgent       *proctest.Proc
}

// zkAgents starts a zkAgent beside each server of a real ensemble.
func zkAgents(t *testing.T, reg *server, servers []*zktest.Server, extra ...string) []zkAgent {
	t.Helper()
	members := zktest.Members(servers)
	dir := t.TempDir()
	var out []zkAgent
	for _, s := range servers {
		_, port, _ := net.SplitHostPort(s.ClientAddr)
		n := "zk" + strconv.FormatInt(s.ID, 10)
		a := zkAgent{pidID: id(n+".test", ""), probeID: id(n+"-probe.test", ""), pidFile: filepath.Join(dir, n+".pid")}
		writePID(t, a.pidFile, s.PID())
		args := append([]string{"--url", s.AdminURL, "--ensemble", members, "--port", port}, extra...)
		a.pidAgent = startAgent(t, reg, zookeeper.RoleName, n+".test", append(args, "--pid-file", a.pidFile)...)
		startAgent(t, reg, zookeeper.RoleName, n+"-probe.test", args...)
		out = append(out, a)
	}
	return out
}

// writePID replaces a pid file whole, as a daemon's start script does.
func writePID(t *testing.T, path string, pid int) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// leaderOf returns the index of the server whose agents report it leader,
// waiting until every instance is UP and exactly one server leads.
func leaderOf(t *testing.T, w *watcher, app string, agents []zkAgent) int {
	t.Helper()
	leader := -1
	proctest.Eventually(t, 90*time.Second, "every ZooKeeper agent UP, one leader", func() bool {
		leader = -1
		for i, a := range agents {
			p, okP := w.cache.Instance(app, a.pidID)
			q, okQ := w.cache.Instance(app, a.probeID)
			if !okP || !okQ || p.Status != heureka.StatusUp || q.Status != heureka.StatusUp {
				return false
			}
			st := p.Metadata.Get(heureka.MetaRoleState)
			if st != q.Metadata.Get(heureka.MetaRoleState) || (st != "leader" && st != "follower") {
				return false
			}
			if st == "leader" {
				if leader >= 0 {
					return false
				}
				leader = i
			}
		}
		return leader >= 0
	})
	return leader
}

// TestZooKeeperEnsemble: a real three-server ensemble with two agents
// beside each server, one that knows its process (its pid file) and one
// that only probes. They register zookeeper.prod with leader and
// follower; when the leader is killed, the first reports it DOWN "process
// exited" at once, the second "port refused" within a probe and a
// recheck, and the survivors' agents report the new leader.
func TestZooKeeperEnsemble(t *testing.T) {
	t.Parallel()
	zktest.Need(t)
	servers := zktest.StartEnsemble(t, 3)
	reg := startServer(t)
	app := heureka.RoleApp(zookeeper.RoleName, "prod")
	w := newWatcher(t, reg, app)
	agents := zkAgents(t, reg, servers)
	old := leaderOf(t, w, app, agents)

	from := w.mark()
	killed := time.Now()
	servers[old].Kill()
	atPID := w.await(t, from, agents[old].pidID, `^DOWN role_state=leader down_cause=process exited$`, bound)
	atProbe := w.await(t, from, agents[old].probeID, `^DOWN role_state=leader down_cause=port refused$`, bound)
	t.Logf("leader killed: DOWN seen %v later with its pid file, %v by probes alone", atPID.Sub(killed).Round(time.Millisecond), atProbe.Sub(killed).Round(time.Millisecond))

	var elected time.Time
	proctest.Eventually(t, 90*time.Second, "a new leader among the survivors", func() bool {
		for i, a := range agents {
			if in, ok := w.cache.Instance(app, a.pidID); i != old && ok && in.Status == heureka.StatusUp && in.Metadata.Get(heureka.MetaRoleState) == "leader" {
				elected = time.Now()
				return true
			}
		}
		return false
	})
	t.Logf("a new leader registered %v after the kill", elected.Sub(killed).Round(time.Millisecond))
}

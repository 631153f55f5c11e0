package roles_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/zookeeper"
	"github.com/heureka-project/heureka/zookeeper/zktest"
)

// zkAgents starts, beside each server of a real ensemble, an agent that
// knows the server's PID (host zkN.test) and one that only probes
// (zkN-probe.test), and waits until all are UP with one leader; it returns
// the instance IDs of both kinds, by server.
func zkAgents(t *testing.T, reg *server, servers []*zktest.Server, extra ...string) (pid, probe []string) {
	t.Helper()
	members := zktest.Members(servers)
	for _, s := range servers {
		_, port, _ := net.SplitHostPort(s.ClientAddr)
		n := "zk" + strconv.FormatInt(s.ID, 10)
		args := append([]string{"--url", s.AdminURL, "--ensemble", members, "--port", port}, extra...)
		startAgent(t, reg, zookeeper.RoleName, n+".test", append(args, "--pid", strconv.Itoa(s.PID()))...)
		startAgent(t, reg, zookeeper.RoleName, n+"-probe.test", args...)
		pid, probe = append(pid, id(n+".test", "")), append(probe, id(n+"-probe.test", ""))
	}
	return pid, probe
}

// leaderOf returns the index of the server whose agents report it leader,
// waiting until every instance is UP and exactly one server leads.
func leaderOf(t *testing.T, w *watcher, app string, pid, probe []string) int {
	t.Helper()
	leader := -1
	proctest.Eventually(t, 90*time.Second, "every ZooKeeper agent UP, one leader", func() (ok bool) {
		leader = -1
		for i := range pid {
			a, okA := w.cache.Instance(app, pid[i])
			b, okB := w.cache.Instance(app, probe[i])
			if !okA || !okB || a.Status != heureka.StatusUp || b.Status != heureka.StatusUp {
				return false
			}
			st := a.Metadata.Get(heureka.MetaRoleState)
			if st != b.Metadata.Get(heureka.MetaRoleState) || (st != "leader" && st != "follower") {
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
// beside each server, one that knows its PID and one that only probes.
// They register zookeeper.prod with leader and follower; when the leader
// is killed, the PID agent reports it DOWN "process exited" at once, the
// probing one "port refused" within a probe and a recheck, and the
// survivors' agents report the new leader.
func TestZooKeeperEnsemble(t *testing.T) {
	zktest.Need(t)
	servers := zktest.StartEnsemble(t, 3)
	reg := startServer(t)
	app := heureka.RoleApp(zookeeper.RoleName, "prod")
	w := newWatcher(t, reg, app)
	pid, probe := zkAgents(t, reg, servers)
	old := leaderOf(t, w, app, pid, probe)

	from := w.mark()
	killed := time.Now()
	servers[old].Kill()
	atPID := w.await(t, from, pid[old], `^DOWN role_state=leader down_cause=process exited$`, bound)
	atProbe := w.await(t, from, probe[old], `^DOWN role_state=leader down_cause=port refused$`, bound)
	t.Logf("leader killed: DOWN seen %v later with its PID, %v by probes alone", atPID.Sub(killed).Round(time.Millisecond), atProbe.Sub(killed).Round(time.Millisecond))

	var newLeader time.Time
	proctest.Eventually(t, 90*time.Second, "a new leader among the survivors", func() bool {
		for i := range servers {
			if i == old {
				continue
			}
			if in, ok := w.cache.Instance(app, pid[i]); ok && in.Status == heureka.StatusUp && in.Metadata.Get(heureka.MetaRoleState) == "leader" {
				newLeader = time.Now()
				return true
			}
		}
		return false
	})
	t.Logf("a new leader registered %v after the kill", newLeader.Sub(killed).Round(time.Millisecond))
}

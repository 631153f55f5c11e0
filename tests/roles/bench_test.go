package roles_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
	"github.com/heureka-project/heureka/yarn"
	"github.com/heureka-project/heureka/zookeeper"
	"github.com/heureka-project/heureka/zookeeper/zktest"
)

// These run only with HEUREKA_BENCH=1, and report figures (t.Logf lines
// starting BENCH); they assert nothing about speed:
//
//	HEUREKA_BENCH=1 HEUREKA_BENCH_TRIALS=20 go test ./tests/roles -run 'Benchmark' -v -timeout 60m
func benchOnly(t *testing.T) int {
	t.Helper()
	if os.Getenv("HEUREKA_BENCH") == "" {
		t.Skip("set HEUREKA_BENCH=1 to measure")
	}
	t.Logf("BENCH load average at start: %s", loadavg())
	t.Cleanup(func() { t.Logf("BENCH load average at end: %s", loadavg()) })
	if n, err := strconv.Atoi(os.Getenv("HEUREKA_BENCH_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 10
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func summarize(d []time.Duration) string {
	s := slices.Clone(d)
	slices.Sort(s)
	pct := func(q float64) time.Duration {
		return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)].Round(time.Millisecond)
	}
	return fmt.Sprintf("n=%d p50=%v p99=%v min=%v max=%v", len(s), pct(0.5), pct(0.99), s[0].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// phase sleeps a random 0.5-1.5 s, so that changes fall at every point of
// the agents' probe interval.
func phase() { time.Sleep(time.Duration(500+rand.IntN(1000)) * time.Millisecond) }

// TestFailoverBenchmark: a simulated ResourceManager failover until a
// watching client (client.Cache over /v1/watch) sees the new active's
// role state. No process exits in a failover, so the agent's PID watch
// has nothing to add: this is the probe-driven figure.
func TestFailoverBenchmark(t *testing.T) {
	trials := benchOnly(t)
	reg := startServer(t)
	c := simtest.Open(t, sim.SystemYARN, nil)
	app := heureka.RoleApp(yarn.RoleName, "prod")
	w := newWatcher(t, reg, app)
	ids := map[string]string{}
	for _, rm := range []string{"rm1", "rm2"} {
		startAgent(t, reg, yarn.RoleName, rm+".test", "--url", simtest.URL(t, c, rm))
		ids[rm] = id(rm+".test", "")
	}
	w.await(t, 0, ids["rm1"], `^UP role_state=active$`, settle)
	w.await(t, 0, ids["rm2"], `^UP role_state=standby$`, settle)
	var seen []time.Duration
	active := "rm1"
	for range trials {
		phase()
		next := map[string]string{"rm1": "rm2", "rm2": "rm1"}[active]
		from := w.mark()
		at := time.Now()
		if err := c.SetState(next, "active"); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, w.await(t, from, ids[next], `^UP role_state=active$`, bound).Sub(at))
		w.await(t, from, ids[active], `^UP role_state=standby$`, bound)
		active = next
	}
	t.Logf("BENCH RM failover → new active seen by a watcher (probes; no PID applies): %s (target p99 ≤ 1.5s)", summarize(seen))
}

// TestLeaderKillBenchmark: a real ZooKeeper ensemble's leader killed with
// SIGKILL, until a watching client sees (a) the dead leader DOWN, from the
// agent that knows its PID and from the one that only probes, and (b) the
// new leader's role state (the election's time included). The killed
// server is restarted between trials.
func TestLeaderKillBenchmark(t *testing.T) {
	trials := benchOnly(t)
	zktest.Need(t)
	servers := zktest.StartEnsemble(t, 3)
	reg := startServer(t)
	app := heureka.RoleApp(zookeeper.RoleName, "prod")
	w := newWatcher(t, reg, app)
	// Every trial is a DOWN: keep flap damping from holding the later ones.
	agents := zkAgents(t, reg, servers, "--up-after", "200ms", "--flap-hold-max", "200ms")
	var withPID, withoutPID, elected []time.Duration
	for range trials {
		old := leaderOf(t, w, app, agents)
		agents[old].pidAgent.WaitFor(regexp.MustCompile(`msg="watching the daemon's process".* pid=`+strconv.Itoa(servers[old].PID())+` `), settle)
		phase()
		from := w.mark()
		at := time.Now()
		servers[old].Kill()
		withPID = append(withPID, w.await(t, from, agents[old].pidID, `^DOWN .*down_cause=process exited$`, bound).Sub(at))
		withoutPID = append(withoutPID, w.await(t, from, agents[old].probeID, `^DOWN .*down_cause=port refused$`, bound).Sub(at))
		var first time.Time
		proctest.Eventually(t, 90*time.Second, "a new leader", func() bool {
			for i, a := range agents {
				for _, s := range w.seenSince(from, a.pidID) {
					if i != old && strings.HasPrefix(describe(s.change.New), "UP role_state=leader") {
						first = s.at
						return true
					}
				}
			}
			return false
		})
		elected = append(elected, first.Sub(at))
		servers[old].Restart(t)
		writePID(t, agents[old].pidFile, servers[old].PID())
	}
	t.Logf("BENCH ZooKeeper leader kill -9 → DOWN seen by a watcher, agent knows the PID (pid file): %s (target p99 ≤ 300ms)", summarize(withPID))
	t.Logf("BENCH ZooKeeper leader kill -9 → DOWN seen by a watcher, probes only: %s (target p99 ≤ 1.5s)", summarize(withoutPID))
	t.Logf("BENCH ZooKeeper leader kill -9 → new leader's role_state seen by a watcher (election + probe): %s", summarize(elected))
}

// seenSince returns the changes to id from mark on.
func (w *watcher) seenSince(from int, id string) []seen {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []seen
	for _, s := range w.seen[from:] {
		if s.change.ID == id {
			out = append(out, s)
		}
	}
	return out
}

// procStat reads a process's CPU time (user + system) and resident set.
func procStat(t *testing.T, pid int) (cpu time.Duration, rss, hwm int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)       // utime, field 14
	st, _ := strconv.ParseInt(f[12], 10, 64)       // stime, field 15
	cpu = time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(s), "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return cpu, rss, hwm
}

// TestAgentCostBenchmark: one agent per role, at the default probe and
// metadata intervals, beside the HDFS DataNode agent, for
// HEUREKA_BENCH_SECONDS (60): each agent's CPU time and memory, and its
// ratio to the DataNode agent's. The daemons are the simulators (a
// `heureka sim datanode` process for HDFS), and a real standalone
// ZooKeeper when the machine has one.
func TestAgentCostBenchmark(t *testing.T) {
	benchOnly(t)
	secs := 60
	if n, err := strconv.Atoi(os.Getenv("HEUREKA_BENCH_SECONDS")); err == nil && n > 0 {
		secs = n
	}
	reg := startServer(t)
	type agentRun struct {
		name string
		p    *proctest.Proc
	}
	var runs []agentRun
	add := func(name, role string, args ...string) {
		runs = append(runs, agentRun{name, startAgent(t, reg, role, strings.ReplaceAll(name, " ", "-")+".test", append(args, "--rack", "/bench")...)})
	}
	dn := proctest.Start(t, "sim datanode", "sim", "datanode")
	m := dn.WaitFor(regexp.MustCompile(`heureka sim listening.* http=(\S+) port=(\S+)`), 20*time.Second)
	_, dport, _ := net.SplitHostPort(m[2])
	add("hdfs datanode", "datanode", "--jmx", "http://"+m[1], "--data-port", dport)
	y := simtest.Open(t, sim.SystemYARN, nil)
	add("yarn-resourcemanager", yarn.RoleName, "--url", simtest.URL(t, y, "rm1"))
	hb := simtest.Open(t, sim.SystemHBase, nil)
	add("hbase-master", hbase.MasterRoleName, "--url", simtest.URL(t, hb, "master1"))
	add("hbase-regionserver", hbase.RegionServerRoleName, "--url", simtest.URL(t, hb, "rs1"), "--masters", simtest.URL(t, hb, "master1")+","+simtest.URL(t, hb, "master2"))
	es := simtest.Open(t, sim.SystemElasticsearch, nil)
	add("elasticsearch", elasticsearch.RoleName, "--url", simtest.URL(t, es, "es1"))
	zk := simtest.Open(t, sim.SystemZooKeeper, nil)
	add("zookeeper sim", zookeeper.RoleName, "--url", simtest.URL(t, zk, "zk1"), "--ensemble", zk.State().Ensemble)
	if zktest.Available() == "" {
		add("zookeeper real", zookeeper.RoleName, "--url", zktest.StartStandalone(t).AdminURL)
	}
	k := simtest.Open(t, sim.SystemKafka, nil)
	add("kafka-broker", kafka.RoleName, "--broker", simtest.Addr(t, k, "broker0"), "--broker-id", "0")
	for _, r := range runs {
		r.p.WaitFor(regexp.MustCompile(`msg=registered .*status=UP`), settle)
	}
	time.Sleep(15 * time.Second) // past start-up and the first full reads
	type sample struct {
		cpu      time.Duration
		rss, hwm int64
	}
	before := map[string]sample{}
	for _, r := range runs {
		c, _, _ := procStat(t, r.p.Pid())
		before[r.name] = sample{cpu: c}
	}
	time.Sleep(time.Duration(secs) * time.Second)
	after := map[string]sample{}
	for _, r := range runs {
		c, rss, hwm := procStat(t, r.p.Pid())
		after[r.name] = sample{cpu: c - before[r.name].cpu, rss: rss, hwm: hwm}
	}
	base := after["hdfs datanode"]
	t.Logf("BENCH agent cost over %d s at the default intervals (probe 1 s, metadata 10 s); CPU time, resident memory now and at peak; ratio to the DataNode agent:", secs)
	for _, r := range runs {
		s := after[r.name]
		t.Logf("BENCH   %-22s CPU %6v (%.2f%% of a core, %.2f×)  RSS %5.1f MiB (%.2f×)  peak %5.1f MiB",
			r.name, s.cpu, 100*s.cpu.Seconds()/float64(secs), s.cpu.Seconds()/max(base.cpu.Seconds(), 0.01),
			float64(s.rss)/1024, float64(s.rss)/float64(max(base.rss, 1)), float64(s.hwm)/1024)
	}
}

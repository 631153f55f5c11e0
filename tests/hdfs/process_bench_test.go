package hdfs_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

// TestProcessBenchmark measures what issue 15 sets targets for, as a
// watching client sees it. It runs only with HEUREKA_BENCH=1:
//
//	HEUREKA_BENCH=1 HEUREKA_BENCH_TRIALS=50 go test ./tests/hdfs -run TestProcessBenchmark -v -timeout 30m
//
// "kill -9" runs two agents beside one simulated DataNode, one that knows
// its pid file and one that does not, so both latencies come from the
// same kills. "SIGSTOP" pauses 10 simulators 10 times each, concurrently,
// for 2-8 s, with the default --hang-after.
func TestProcessBenchmark(t *testing.T) {
	if os.Getenv("HEUREKA_BENCH") == "" {
		t.Skip("set HEUREKA_BENCH=1 to measure")
	}
	trials := 10
	if n, err := strconv.Atoi(os.Getenv("HEUREKA_BENCH_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	reg := startServer(t)
	w := newWatcher(t, reg)

	t.Run("kill -9", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "hadoop-hdfs-datanode.pid")
		simArgs := []string{"--hostname", "bench-kill.test", "--pid-file", pidFile}
		dn := startSim(t, "datanode", simArgs...)
		simArgs = append(simArgs, "--listen", dn.http, "--port", dn.port)
		// Every trial is a DOWN: keep flap damping from holding the
		// later ones.
		damping := []string{"--up-after", "200ms", "--flap-hold-max", "200ms"}
		pidAgent := startAgent(t, reg, "datanode", dn, "bench-pid.test", "/bench", append([]string{"--pid-file", pidFile}, damping...)...)
		startAgent(t, reg, "datanode", dn, "bench-port.test", "/bench", damping...)
		const withPID, withoutPID = "prod-bench-pid.test-bench", "prod-bench-port.test-bench"
		awaitAll(t, w, heureka.StatusUp, withPID, withoutPID)
		var pidDown, portDown []time.Duration
		causes := map[string]int{}
		for range trials {
			// The restarted daemon is found within a probe interval.
			pidAgent.WaitFor(watching(dn.Cmd.Process.Pid), 10*time.Second)
			time.Sleep(time.Duration(500+rand.IntN(1000)) * time.Millisecond) // a random phase against the probes
			w.drain()
			dn.Signal(syscall.SIGKILL)
			killed := time.Now()
			seen := map[string]time.Duration{}
			deadline := time.After(10 * time.Second)
			for len(seen) < 2 {
				select {
				case ev := <-w.events:
					id := ev.change.ID
					if (id == withPID || id == withoutPID) && ev.change.New != nil && ev.change.New.Status == heureka.StatusDown {
						if _, ok := seen[id]; !ok {
							seen[id] = ev.at.Sub(killed)
							causes[id+": "+ev.change.New.Metadata.Get(hdfs.MetaDownCause)]++
						}
					}
				case <-deadline:
					t.Fatalf("DOWN not seen within 10 s of the kill: %v", seen)
				}
			}
			pidDown, portDown = append(pidDown, seen[withPID]), append(portDown, seen[withoutPID])
			dn.Exit(5 * time.Second)
			dn = startSim(t, "datanode", simArgs...)
			awaitAll(t, w, heureka.StatusUp, withPID, withoutPID)
		}
		t.Logf("BENCH kill -9 → DOWN seen by a watcher, agent knows the pid file: %s (target p99 ≤ 300ms)", summarize(pidDown))
		t.Logf("BENCH kill -9 → DOWN seen by a watcher, probes only (port refused): %s (target p99 ≤ 1.5s)", summarize(portDown))
		t.Logf("BENCH p50 ratio probes/pid: %.1f×; causes %v", float64(median(portDown))/float64(median(pidDown)), causes)
		overTarget(t, "kill -9 → DOWN with the PID", p99(pidDown), 300*time.Millisecond)
		overTarget(t, "kill -9 → DOWN without the PID", p99(portDown), 1500*time.Millisecond)
	})

	t.Run("SIGSTOP 2-8 s", func(t *testing.T) {
		const nodes, pauses = 10, 10
		answered := regexp.MustCompile(`msg="daemon answers again; status unchanged"`)
		type node struct {
			dn    *simDaemon
			agent *proctest.Proc
			id    string
		}
		var ns []node
		ids := map[string]bool{}
		for i := range nodes {
			host := fmt.Sprintf("bench-gc-%d.test", i)
			dn := startSim(t, "datanode", "--hostname", host)
			ns = append(ns, node{dn: dn, agent: startAgent(t, reg, "datanode", dn, host, "/bench"), id: "prod-" + host + "-bench"})
			ids["prod-"+host+"-bench"] = true
		}
		var all []string
		for _, n := range ns {
			all = append(all, n.id)
		}
		awaitAll(t, w, heureka.StatusUp, all...)
		for _, n := range ns {
			n.agent.WaitFor(regexp.MustCompile(`msg=registered`), 10*time.Second)
		}
		w.drain()
		began := time.Now()
		var (
			mu     sync.Mutex
			paused []time.Duration
			errs   []string
			wg     sync.WaitGroup
		)
		for _, n := range ns {
			wg.Go(func() {
				for range pauses {
					time.Sleep(time.Duration(1000+rand.IntN(2000)) * time.Millisecond) // running time between pauses: part of the load
					d := time.Duration(2000+rand.IntN(6001)) * time.Millisecond
					if err := n.dn.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
						mu.Lock()
						errs = append(errs, err.Error())
						mu.Unlock()
						return
					}
					time.Sleep(d) // the pause: its length is the input
					_ = n.dn.Cmd.Process.Signal(syscall.SIGCONT)
					mu.Lock()
					paused = append(paused, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("signals failed: %v", errs)
		}
		// Every pause was seen and ended, by every agent's account.
		for _, n := range ns {
			proctest.Retry(t, 20*time.Second, n.id+" to see every pause end", func() error {
				if got := len(answered.FindAllString(n.agent.Output(), -1)); got < pauses {
					return fmt.Errorf("%d pauses ended, want %d", got, pauses)
				}
				return nil
			})
		}
		took := time.Since(began)
		statusChanges, marks, other := 0, 0, 0
		for {
			select {
			case ev := <-w.events:
				if !ids[ev.change.ID] {
					continue
				}
				c := ev.change
				switch {
				case c.Old == nil || c.New == nil || c.Old.Status != c.New.Status:
					statusChanges++
					t.Logf("status change: %s %v → %v", c.ID, c.Old, c.New)
				case c.Old.Metadata.Get(hdfs.MetaProbeState) != c.New.Metadata.Get(hdfs.MetaProbeState):
					marks++
				default:
					other++
				}
				continue
			default:
			}
			break
		}
		long := 0
		for _, d := range paused {
			if d >= 5*time.Second {
				long++
			}
		}
		t.Logf("BENCH %d SIGSTOP pauses (%s) on %d nodes in %v: %d status changes (target 0); %d probe_state changes, i.e. %d pauses marked hung and unmarked (of %d pauses ≥ 5 s: a mark needs a probe to see 5 s unanswered); %d other changes",
			len(paused), summarize(paused), nodes, took.Round(time.Second), statusChanges, marks, marks/2, long, other)
		if statusChanges != 0 {
			t.Errorf("%d status changes over %d pauses shorter than --hang-after", statusChanges, len(paused))
		}
		if !strings.Contains(ns[0].agent.Output(), "holding its status") {
			t.Errorf("the agent never logged a pause")
		}
	})
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// awaitAll waits until every one of ids has been seen with status st.
func awaitAll(t *testing.T, w *watcher, st heureka.Status, ids ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, id := range ids {
		left[id] = true
	}
	w.await(t, fmt.Sprintf("%d instances %s", len(ids), st), 30*time.Second, func(ev watchEvent) bool {
		if ev.change.New != nil && ev.change.New.Status == st {
			delete(left, ev.change.ID)
		}
		return len(left) == 0
	})
}

package hdfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

// instanceOf reads an instance; it fails the test when it is not there.
func instanceOf(t *testing.T, c *client.Client, app, id string) *heureka.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, err := c.Instance(ctx, app, id)
	if err != nil {
		t.Fatalf("reading %s/%s: %v", app, id, err)
	}
	return in
}

// downWith waits for a watched DOWN of id and checks its down_cause.
func downWith(t *testing.T, w *watcher, id, cause string, bound time.Duration) time.Time {
	t.Helper()
	var got string
	at := w.await(t, "DOWN", bound, func(ev watchEvent) bool {
		if !statusIs(id, heureka.StatusDown)(ev) {
			return false
		}
		got = ev.change.New.Metadata.Get(hdfs.MetaDownCause)
		return true
	})
	if got != cause {
		t.Errorf("%s DOWN with down_cause %q, want %q", id, got, cause)
	}
	return at
}

func watching(pid int) *regexp.Regexp {
	return regexp.MustCompile(`msg="watching the daemon's process" .*pid=` + strconv.Itoa(pid) + `\b`)
}

// TestKilledWithPIDFile: the agent follows the daemon through its pid
// file. kill -9 is DOWN "process exited"; the restarted daemon rewrites
// the pid file, the agent follows the new process, and its kill -9 is
// "process exited" too (the probes alone would say "port refused").
func TestKilledWithPIDFile(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	w := newWatcher(t, reg)
	pidFile := filepath.Join(t.TempDir(), "hadoop-hdfs-datanode.pid")
	dn := startSim(t, "datanode", "--hostname", "dn-pid.test", "--pid-file", pidFile)
	agent := startAgent(t, reg, "datanode", dn, "dn-pid.test", "/dc1/rack-p", "--pid-file", pidFile, "--up-after", "500ms")
	const id = "prod-dn-pid.test-dc1.rack-p"
	w.await(t, "registered UP", 20*time.Second, statusIs(id, heureka.StatusUp))
	agent.WaitFor(watching(dn.Cmd.Process.Pid), 10*time.Second)

	dn.Signal(syscall.SIGKILL)
	dn.Exit(5 * time.Second)
	downWith(t, w, id, "process exited", 10*time.Second)

	again := startSim(t, "datanode", "--hostname", "dn-pid.test", "--listen", dn.http, "--port", dn.port, "--pid-file", pidFile)
	agent.WaitFor(watching(again.Cmd.Process.Pid), 10*time.Second)
	w.await(t, "UP after the restart", 20*time.Second, statusIs(id, heureka.StatusUp))
	if md := instanceOf(t, newClient(t, reg), dnApp, id).Metadata; md.Get(hdfs.MetaDownCause) != "" {
		t.Errorf("UP with down_cause %q", md.Get(hdfs.MetaDownCause))
	}

	again.Signal(syscall.SIGKILL)
	again.Exit(5 * time.Second)
	downWith(t, w, id, "process exited", 10*time.Second)
}

// TestReusedPIDNotTaken: the daemon is killed and leaves its pid file
// behind; the PID in it then belongs to another program. The kernel
// cannot be made to hand out a chosen PID, so the stale file is made to
// name a program that started after the file was written, which is
// exactly what a reused PID looks like (the file keeps its old time). The agent refuses it and keeps
// the node DOWN.
func TestReusedPIDNotTaken(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	w := newWatcher(t, reg)
	pidFile := filepath.Join(t.TempDir(), "hadoop-hdfs-datanode.pid")
	dn := startSim(t, "datanode", "--hostname", "dn-reuse.test", "--pid-file", pidFile)
	agent := startAgent(t, reg, "datanode", dn, "dn-reuse.test", "/dc1/rack-r", "--pid-file", pidFile)
	const id = "prod-dn-reuse.test-dc1.rack-r"
	w.await(t, "registered UP", 20*time.Second, statusIs(id, heureka.StatusUp))
	agent.WaitFor(watching(dn.Cmd.Process.Pid), 10*time.Second)
	fi, err := os.Stat(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	written := fi.ModTime()

	dn.Signal(syscall.SIGKILL)
	dn.Exit(5 * time.Second)
	downWith(t, w, id, "process exited", 10*time.Second)

	// Another program (a simulator on other ports: it answers, but not
	// where the daemon does) now holds the PID the stale file names.
	other := startSim(t, "datanode", "--hostname", "someone-else.test")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(other.Cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// As if the daemon had run for a minute before it was killed (this
	// test is quicker than the agent's 10 s allowance for clock steps).
	written = written.Add(-time.Minute)
	if err := os.Chtimes(pidFile, written, written); err != nil {
		t.Fatal(err)
	}
	agent.WaitFor(regexp.MustCompile(`names PID `+strconv.Itoa(other.Cmd.Process.Pid)+`, which started at .* a reused PID, not the daemon`), 10*time.Second)
	if watching(other.Cmd.Process.Pid).MatchString(agent.Output()) {
		t.Errorf("the agent took PID %d, another program, for the daemon", other.Cmd.Process.Pid)
	}
	in := instanceOf(t, newClient(t, reg), dnApp, id)
	if in.Status != heureka.StatusDown || in.Metadata.Get(hdfs.MetaDownCause) != "process exited" {
		t.Errorf("after the reused PID: %s %v", in.Status, in.Metadata)
	}
}

// TestShortPauseNoChange: SIGSTOP for 3 s, less than --hang-after (and
// --hung-mark-after): no registry write, no watch event.
func TestShortPauseNoChange(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	w := newWatcher(t, reg)
	c := newClient(t, reg)
	dn := startSim(t, "datanode", "--hostname", "dn-gc.test")
	agent := startAgent(t, reg, "datanode", dn, "dn-gc.test", "/dc1/rack-g")
	const id = "prod-dn-gc.test-dc1.rack-g"
	w.await(t, "registered UP", 20*time.Second, statusIs(id, heureka.StatusUp))
	agent.WaitFor(regexp.MustCompile(`msg=registered`), 10*time.Second)
	before := instanceOf(t, c, dnApp, id)
	w.drain()

	stopped := time.Now()
	dn.Signal(syscall.SIGSTOP)
	agent.WaitFor(regexp.MustCompile(`does not answer \(paused`), 10*time.Second)
	time.Sleep(3*time.Second - time.Since(stopped)) // the rest of the pause: its length is what is tested
	dn.Signal(syscall.SIGCONT)
	agent.WaitFor(regexp.MustCompile(`msg="daemon answers again; status unchanged" .*paused_for=`), 10*time.Second)

	after := instanceOf(t, c, dnApp, id)
	if after.Status != heureka.StatusUp || after.LastDirtyTimestamp != before.LastDirtyTimestamp {
		t.Errorf("after a 3 s pause: %s, lastDirtyTimestamp %d (was %d): the agent wrote", after.Status, after.LastDirtyTimestamp, before.LastDirtyTimestamp)
	}
	select {
	case ev := <-w.events:
		t.Errorf("a watch event during a 3 s pause: %+v", ev.change)
	default:
	}
}

// TestLongPauseDownThenUp: SIGSTOP longer than --hang-after is DOWN "not
// answering"; after SIGCONT and --up-after of answers, UP.
func TestLongPauseDownThenUp(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	w := newWatcher(t, reg)
	dn := startSim(t, "datanode", "--hostname", "dn-hung.test")
	startAgent(t, reg, "datanode", dn, "dn-hung.test", "/dc1/rack-h", "--hang-after", "2s", "--up-after", "1s")
	const id = "prod-dn-hung.test-dc1.rack-h"
	w.await(t, "registered UP", 20*time.Second, statusIs(id, heureka.StatusUp))
	w.drain()

	dn.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	down := downWith(t, w, id, "not answering", 15*time.Second)
	if down.Sub(stopped) < 2*time.Second {
		t.Errorf("DOWN %v after SIGSTOP, before --hang-after 2s", down.Sub(stopped))
	}
	dn.Signal(syscall.SIGCONT)
	w.await(t, "UP after SIGCONT", 15*time.Second, statusIs(id, heureka.StatusUp))
}

// TestFlappingHeldDown: a daemon that stops and starts again and again is
// held DOWN longer each time, and the agent says so.
func TestFlappingHeldDown(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	w := newWatcher(t, reg)
	c := newClient(t, reg)
	dn := startSim(t, "datanode", "--hostname", "dn-flap.test")
	agent := startAgent(t, reg, "datanode", dn, "dn-flap.test", "/dc1/rack-f", "--up-after", "300ms", "--flap-hold-max", "1m")
	const id = "prod-dn-flap.test-dc1.rack-f"
	w.await(t, "registered UP", 20*time.Second, statusIs(id, heureka.StatusUp))
	for i := range 3 {
		dn.do(t, "/sim/stop")
		w.await(t, fmt.Sprintf("DOWN %d", i+1), 10*time.Second, statusIs(id, heureka.StatusDown))
		dn.do(t, "/sim/start")
		if i < 2 {
			w.await(t, fmt.Sprintf("UP %d", i+1), 15*time.Second, statusIs(id, heureka.StatusUp))
		}
	}
	// The third DOWN within the window: held for 300ms × 4.
	agent.WaitFor(regexp.MustCompile(`msg="daemon is flapping; holding it DOWN until it answers steadily" .*downs=3 within=10m0s hold=1.2s`), 10*time.Second)
	if st := statusOf(t, c, dnApp, id); st != heureka.StatusDown {
		t.Errorf("while held: %s, want DOWN", st)
	}
	w.await(t, "UP after the hold", 15*time.Second, statusIs(id, heureka.StatusUp))
}

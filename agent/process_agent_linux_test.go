package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

// waitAgent polls the agent's status until ok or a bound.
func waitAgent(t *testing.T, a *agent.Agent, what string, ok func(agent.Status) bool) agent.Status {
	t.Helper()
	var st agent.Status
	proctest.Retry(t, 20*time.Second, what, func() error {
		if st = a.Status(); !ok(st) {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	return st
}

// runReal runs an agent on the real clock with cfg. Its drain period is
// zero: the tests do not look at the drain (TestDrain does, in a bubble),
// so the cleanup need not wait DrainPeriod of wall-clock time.
func runReal(t *testing.T, cfg testConfig) (*agent.Agent, *fakeRegistry) {
	t.Helper()
	cfg.DrainPeriod = 0
	reg := newFakeRegistry()
	a, err := newAgent(cfg, reg, &fakeDaemon{alive: true, info: dataNodeInfo()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return a, reg
}

// TestFollowsSystemdUnit runs the process watcher against a stand-in
// `systemctl` on PATH that answers `show -p MainPID --value UNIT` from a
// file: the unit's main process is watched, its exit is DOWN "process
// exited", and the restarted unit's new MainPID is followed. (A real
// systemd is not there on CI.)
func TestFollowsSystemdUnit(t *testing.T) {
	dir := t.TempDir()
	mainPID := filepath.Join(dir, "mainpid")
	script := "#!/bin/sh\n[ \"$1 $2 $3 $4 $5\" = \"show -p MainPID --value hadoop-hdfs-datanode\" ] || { echo \"bad args: $*\" >&2; exit 1; }\ncat " + mainPID + "\n"
	if err := os.WriteFile(filepath.Join(dir, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	first := agent.Sleeper(t)
	if err := os.WriteFile(mainPID, []byte(strconv.Itoa(first.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := newTestConfig(t, hdfs.RoleDataNode)
	cfg.SystemdUnit, cfg.ProbeInterval, cfg.ProbeTimeout = "hadoop-hdfs-datanode", 100*time.Millisecond, 50*time.Millisecond
	a, reg := runReal(t, cfg)
	waitAgent(t, a, "watching the first process", func(st agent.Status) bool {
		return st.PID == first.Process.Pid && st.Reported == heureka.StatusUp
	})

	// systemd restarts the daemon: the old one dies, a new MainPID.
	if err := os.WriteFile(mainPID, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = first.Process.Kill()
	waitAgent(t, a, "DOWN after the exit", func(st agent.Status) bool {
		return st.Health == heureka.StatusDown && st.Cause == agent.CauseProcessExited
	})
	second := agent.Sleeper(t)
	if err := os.WriteFile(mainPID, []byte(strconv.Itoa(second.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitAgent(t, a, "watching the new process", func(st agent.Status) bool { return st.PID == second.Process.Pid })
	in, _ := reg.get(cfg.InstanceID())
	if in == nil || in.Metadata.Get(hdfs.MetaDownCause) != agent.CauseProcessExited {
		t.Errorf("registered %+v", in)
	}
}

// TestStaticPID: a PID given directly is watched until it exits (DOWN
// "process exited"), then never again, whatever later runs under it.
func TestStaticPID(t *testing.T) {
	cmd := agent.Sleeper(t)
	cfg := newTestConfig(t, hdfs.RoleDataNode)
	cfg.PID, cfg.ProbeInterval, cfg.ProbeTimeout = cmd.Process.Pid, 100*time.Millisecond, 50*time.Millisecond
	a, _ := runReal(t, cfg)
	waitAgent(t, a, "watching", func(st agent.Status) bool { return st.PID == cmd.Process.Pid })
	_ = cmd.Process.Kill()
	st := waitAgent(t, a, "DOWN after the exit", func(st agent.Status) bool { return st.Cause == agent.CauseProcessExited })
	if st.PID != 0 || st.Health != heureka.StatusDown {
		t.Errorf("after the exit: %+v", st)
	}
}

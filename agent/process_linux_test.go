package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

// sleeper runs `sleep 60` and kills it when the test ends.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd
}

func writePIDFile(t *testing.T, path string, pid int, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenProcessWakesAtExit(t *testing.T) {
	cmd := sleeper(t)
	p, err := openProcess(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if since := time.Since(p.started); since < 0 || since > time.Minute {
		t.Errorf("start time %v is %v ago", p.started, since)
	}
	waited := make(chan error, 1)
	go func() { waited <- p.Wait(context.Background(), time.Hour) }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned before the exit: %v", err)
	default:
	}
	_ = cmd.Process.Kill()
	// The poll interval is an hour: only the pidfd can wake it.
	if err := <-waited; err != nil {
		t.Fatalf("Wait after the kill: %v", err)
	}
	if _, err := openProcess(cmd.Process.Pid); !errors.Is(err, errNoProcess) {
		t.Errorf("reopening a dead process: %v; want errNoProcess", err)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	p, err := openProcess(sleeper(t).Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() { waited <- p.Wait(ctx, time.Hour) }()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after cancel: %v", err)
	}
}

// TestPIDFileReusedPID: a stale pid file (written before the process it
// names started) names a PID the kernel gave to another program; the
// agent must not take that program for the daemon.
func TestPIDFileReusedPID(t *testing.T) {
	cmd := sleeper(t)
	path := filepath.Join(t.TempDir(), "hadoop-hdfs-datanode.pid")
	writePIDFile(t, path, cmd.Process.Pid, time.Now().Add(-time.Minute))
	if p, err := openPIDFile(path); !errors.Is(err, errNotDaemon) {
		if p != nil {
			p.Close()
		}
		t.Fatalf("stale pid file: %v; want errNotDaemon", err)
	}
	writePIDFile(t, path, cmd.Process.Pid, time.Time{})
	p, err := openPIDFile(path)
	if err != nil {
		t.Fatalf("fresh pid file: %v", err)
	}
	p.Close()
	for _, bad := range []string{"", "abc\n", "0\n", "-5\n", "99999999999\n", "12 13\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := openPIDFile(path); err == nil || errors.Is(err, errNotDaemon) {
			t.Errorf("pid file %q: %v", bad, err)
		}
	}
	if _, err := openPIDFile(filepath.Join(t.TempDir(), "none.pid")); !errors.Is(err, errNoProcess) {
		t.Errorf("missing pid file: %v", err)
	}
}

func TestParseStat(t *testing.T) {
	line := []byte("4242 (java (x) y) S 1 4242 4242 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 70 0 987654 1000 100 184467")
	ticks, state, err := parseStat(line)
	if err != nil || ticks != 987654 || state != 'S' {
		t.Errorf("parseStat = %d %q %v", ticks, state, err)
	}
	for _, bad := range []string{"4242 java S 1", "4242 (java) S 1 2 3", ""} {
		if _, _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

// waitAgent polls the agent's status until ok or a bound.
func waitAgent(t *testing.T, a *Agent, what string, ok func(Status) bool) Status {
	t.Helper()
	var st Status
	proctest.Retry(t, 20*time.Second, what, func() error {
		if st = a.Status(); !ok(st) {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	return st
}

// runReal runs an agent on the real clock with cfg.
func runReal(t *testing.T, cfg Config) (*Agent, *fakeRegistry) {
	t.Helper()
	reg := newFakeRegistry()
	a, err := New(cfg, reg, &fakeDaemon{alive: true, info: dataNodeInfo()})
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
	first := sleeper(t)
	if err := os.WriteFile(mainPID, []byte(strconv.Itoa(first.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, hdfs.RoleDataNode)
	cfg.SystemdUnit, cfg.ProbeInterval, cfg.ProbeTimeout = "hadoop-hdfs-datanode", 100*time.Millisecond, 50*time.Millisecond
	a, reg := runReal(t, cfg)
	waitAgent(t, a, "watching the first process", func(st Status) bool {
		return st.PID == first.Process.Pid && st.Reported == heureka.StatusUp
	})

	// systemd restarts the daemon: the old one dies, a new MainPID.
	if err := os.WriteFile(mainPID, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = first.Process.Kill()
	waitAgent(t, a, "DOWN after the exit", func(st Status) bool {
		return st.Health == heureka.StatusDown && st.Cause == CauseProcessExited
	})
	second := sleeper(t)
	if err := os.WriteFile(mainPID, []byte(strconv.Itoa(second.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitAgent(t, a, "watching the new process", func(st Status) bool { return st.PID == second.Process.Pid })
	in, _ := reg.get(a.id)
	if in == nil || in.Metadata.Get(hdfs.MetaDownCause) != CauseProcessExited {
		t.Errorf("registered %+v", in)
	}
}

// TestStaticPID: a PID given directly is watched until it exits (DOWN
// "process exited"), then never again, whatever later runs under it.
func TestStaticPID(t *testing.T) {
	cmd := sleeper(t)
	cfg := testConfig(t, hdfs.RoleDataNode)
	cfg.PID, cfg.ProbeInterval, cfg.ProbeTimeout = cmd.Process.Pid, 100*time.Millisecond, 50*time.Millisecond
	a, _ := runReal(t, cfg)
	waitAgent(t, a, "watching", func(st Status) bool { return st.PID == cmd.Process.Pid })
	_ = cmd.Process.Kill()
	st := waitAgent(t, a, "DOWN after the exit", func(st Status) bool { return st.Cause == CauseProcessExited })
	if st.PID != 0 || st.Health != heureka.StatusDown {
		t.Errorf("after the exit: %+v", st)
	}
}

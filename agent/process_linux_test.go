package agent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Sleeper is sleeper, for the tests of package agent_test.
var Sleeper = sleeper

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

package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/heureka-project/heureka/internal/tick"
)

// maxPID is Linux's PID_MAX_LIMIT (2^22), the largest PID any system gives.
const maxPID = 1 << 22

// pidFileSlack is how much later than its pid file a process may have
// started and still be the one the file names. The file is written after
// the fork (Hadoop's scripts write $$ before exec'ing java, and $! after
// starting it), so the daemon started before the file's time; but the
// start time is computed from the boot clock, and a wall clock stepped
// since (not slewed: NTP's slewing moves both clocks) shifts it. 10 s
// absorbs ordinary steps, while a PID reused within 10 s of its daemon's
// start would need the daemon to die at once and the PID space to wrap
// in that time. A process that started later got a reused PID.
const pidFileSlack = 10 * time.Second

// systemctlTimeout bounds one `systemctl show`.
const systemctlTimeout = 5 * time.Second

var (
	// errNoProcess: nothing runs under the PID (or it has already exited).
	errNoProcess = errors.New("no such process")
	// errNotDaemon: a process runs under the PID, but it is not the daemon.
	errNotDaemon = errors.New("not the daemon")
)

// processLoop watches the daemon's process: it finds it (Config.PID,
// PIDFile or SystemdUnit), waits for the kernel to say it exited, reports
// DOWN at once, and finds the next one, until ctx is done.
func (a *Agent) processLoop(ctx context.Context) {
	var (
		gonePID     int
		goneStarted time.Time // the process that last exited, so a zombie is not watched twice
		lastErr     string
	)
	t := time.NewTimer(0)
	defer t.Stop()
	for tick.Wait(ctx, t, nil) {
		p, err := a.findProcess(ctx)
		if err == nil && p.pid == gonePID && p.started.Equal(goneStarted) {
			p.Close()
			err = fmt.Errorf("PID %d: %w (exited, not yet reaped)", gonePID, errNoProcess)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if a.cfg.PID != 0 {
				// A PID given once is looked at once: a process that
				// shows up under it later could be anything.
				a.log.Warn("cannot watch the process given by PID; the probes alone decide", "err", err)
				return
			}
			if msg := err.Error(); msg != lastErr {
				lastErr = msg
				lvl := a.log.Info
				if errors.Is(err, errNotDaemon) {
					lvl = a.log.Warn
				}
				lvl("the daemon's process is not running; looking again every probe interval", "err", err)
			}
			t.Reset(a.cfg.ProbeInterval)
			continue
		}
		lastErr = ""
		a.mu.Lock()
		a.s.pid = p.pid
		a.mu.Unlock()
		a.log.Info("watching the daemon's process", "pid", p.pid, "started", p.started)
		err = p.Wait(ctx, a.cfg.RecheckInterval)
		p.Close()
		a.mu.Lock()
		a.s.pid = 0
		a.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			a.log.Warn("cannot wait for the daemon's process; looking for it again", "pid", p.pid, "err", err)
			t.Reset(a.cfg.ProbeInterval)
			continue
		}
		a.exited(p.pid)
		gonePID, goneStarted = p.pid, p.started
		if a.cfg.PID != 0 {
			a.log.Warn("the process given by PID exited and cannot be followed; the probes decide from now on", "pid", p.pid)
			return
		}
		t.Reset(0)
	}
}

// findProcess opens the daemon's process as the configuration names it,
// checking that a PID read from somewhere is the daemon's.
func (a *Agent) findProcess(ctx context.Context) (*process, error) {
	switch {
	case a.cfg.PIDFile != "":
		return openPIDFile(a.cfg.PIDFile)
	case a.cfg.SystemdUnit != "":
		return openUnit(ctx, a.cfg.SystemdUnit)
	}
	return openProcess(a.cfg.PID)
}

// openPIDFile opens the process a pid file names, if it started before
// the file was written: one that started later got a reused PID from a
// stale file (the daemon died without removing it).
func openPIDFile(path string) (*process, error) {
	pid, written, err := readPIDFile(path)
	if err != nil {
		return nil, err
	}
	p, err := openProcess(pid)
	if err != nil {
		return nil, fmt.Errorf("pid file %s: %w", path, err)
	}
	if !p.started.IsZero() && p.started.After(written.Add(pidFileSlack)) {
		p.Close()
		return nil, fmt.Errorf("pid file %s names PID %d, which started at %s, after the file was written at %s: a reused PID, %w",
			path, pid, p.started.Format(time.RFC3339Nano), written.Format(time.RFC3339Nano), errNotDaemon)
	}
	return p, nil
}

// readPIDFile reads a pid file: a PID and a newline, as Hadoop's scripts
// write it. It returns the PID and the file's modification time.
func readPIDFile(path string) (int, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, time.Time{}, fmt.Errorf("pid file %s does not exist: %w", path, errNoProcess)
		}
		return 0, time.Time{}, fmt.Errorf("pid file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("pid file: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("pid file %s: %w", path, err)
	}
	pid, err := parsePID(string(b))
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("pid file %s: %w", path, err)
	}
	return pid, fi.ModTime(), nil
}

// parsePID reads a PID written as decimal digits and white space.
func parsePID(s string) (int, error) {
	t := strings.TrimSpace(s)
	pid, err := strconv.Atoi(t)
	if err != nil || pid < 1 || pid > maxPID {
		if len(t) > 20 {
			t = t[:20] + "…"
		}
		return 0, fmt.Errorf("%q is not a PID (1-%d)", t, maxPID)
	}
	return pid, nil
}

// openUnit opens a systemd unit's main process. systemd keeps MainPID
// itself, so the PID is the daemon's if it is still MainPID once the
// process is held open.
func openUnit(ctx context.Context, unit string) (*process, error) {
	pid, err := mainPID(ctx, unit)
	if err != nil {
		return nil, err
	}
	p, err := openProcess(pid)
	if err != nil {
		return nil, fmt.Errorf("unit %s: %w", unit, err)
	}
	again, err := mainPID(ctx, unit)
	if err != nil || again != pid {
		p.Close()
		if err == nil {
			err = fmt.Errorf("unit %s: MainPID changed from %d to %d while it was opened: %w", unit, pid, again, errNotDaemon)
		}
		return nil, err
	}
	return p, nil
}

// mainPID asks systemd for a unit's MainPID.
func mainPID(ctx context.Context, unit string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, systemctlTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "systemctl", "show", "-p", "MainPID", "--value", unit).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return 0, fmt.Errorf("systemctl show %s: %w", unit, err)
	}
	if strings.TrimSpace(string(out)) == "0" {
		return 0, fmt.Errorf("unit %s has no main process: %w", unit, errNoProcess)
	}
	pid, err := parsePID(string(out))
	if err != nil {
		return 0, fmt.Errorf("systemctl show %s: MainPID %w", unit, err)
	}
	return pid, nil
}

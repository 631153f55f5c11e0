package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// process is a running process held by a pidfd: the descriptor refers to
// that process and no other, so a PID reused after it exits cannot be
// mistaken for it, and it becomes readable the moment the process exits.
type process struct {
	pid     int
	started time.Time // from /proc/PID/stat, to 10 ms
	fd      int
}

// openProcess holds pid with a pidfd. The process's start time is read
// from /proc after the pidfd is open and the pidfd is checked again after
// that: if the process is still running, /proc/PID was the pidfd's
// process, not a successor.
func openProcess(pid int) (*process, error) {
	fd, err := unix.PidfdOpen(pid, 0) // no flags: PIDFD_NONBLOCK needs Linux 5.10, and poll(2) does not need it
	if errors.Is(err, unix.ESRCH) {
		return nil, fmt.Errorf("PID %d: %w", pid, errNoProcess)
	}
	if err != nil {
		return nil, fmt.Errorf("pidfd_open(%d): %w", pid, err)
	}
	p := &process{pid: pid, fd: fd}
	started, zombie, err := procStart(pid)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("PID %d: %w", pid, err)
	}
	if zombie || p.exitedNow() {
		p.Close()
		return nil, fmt.Errorf("PID %d has exited: %w", pid, errNoProcess)
	}
	p.started = started
	return p, nil
}

// exitedNow reports whether the process has exited, without waiting.
func (p *process) exitedNow() bool {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// Wait returns nil when the process exits, or ctx's error. It wakes at
// once for either: poll(2) waits on the pidfd and on a pipe that ctx's end
// writes to.
func (p *process) Wait(ctx context.Context, _ time.Duration) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	defer w.Close()
	stop := context.AfterFunc(ctx, func() { _, _ = w.Write([]byte{0}) })
	defer stop()
	rc, err := r.SyscallConn()
	if err != nil {
		return err
	}
	var pollErr error
	exited := false
	err = rc.Control(func(rfd uintptr) {
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}, {Fd: int32(rfd), Events: unix.POLLIN}}
		for {
			_, pollErr = unix.Poll(fds, -1)
			if errors.Is(pollErr, unix.EINTR) {
				continue
			}
			exited = fds[0].Revents != 0
			return
		}
	})
	switch {
	case err != nil:
		return err
	case pollErr != nil:
		return fmt.Errorf("poll on the pidfd of %d: %w", p.pid, pollErr)
	case exited:
		return nil
	}
	return ctx.Err()
}

// Close releases the pidfd.
func (p *process) Close() { _ = unix.Close(p.fd) }

// procStart reads when pid started from /proc/PID/stat (field 22, clock
// ticks since boot) and whether it is a zombie (exited, not reaped).
func procStart(pid int) (time.Time, bool, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// ENOENT once the process is reaped; ESRCH when it is reaped
		// between opening the file and reading it.
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			return time.Time{}, false, errNoProcess
		}
		return time.Time{}, false, err
	}
	ticks, state, err := parseStat(b)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	var now, boot unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME, &now); err != nil {
		return time.Time{}, false, err
	}
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		return time.Time{}, false, err
	}
	booted := time.Unix(now.Unix()).Add(-time.Duration(boot.Nano()))
	// The kernel counts in USER_HZ, 100 on every Linux architecture.
	return booted.Add(time.Duration(ticks) * (time.Second / 100)), state == 'Z' || state == 'X', nil
}

// parseStat returns the start time (ticks) and state of a /proc/PID/stat
// line. The command name (field 2) may hold spaces and parentheses, so
// fields are counted from its last ')'.
func parseStat(b []byte) (uint64, byte, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("no command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("%d fields after the command name; want at least 20", len(f))
	}
	ticks, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("start time %q: %w", f[19], err)
	}
	return ticks, f[0][0], nil
}

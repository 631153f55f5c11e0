//go:build unix && !linux

package agent

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// process is a running process, polled with kill(pid, 0) where Linux's
// pidfd is not available: its exit is seen within the poll interval, and a
// PID reused within one interval cannot be told from it (no start time).
type process struct {
	pid     int
	started time.Time // unknown: always zero
}

func openProcess(pid int) (*process, error) {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("PID %d: %w", pid, errNoProcess)
	}
	return &process{pid: pid}, nil
}

// Wait polls every interval until the process is gone or ctx is done.
func (p *process) Wait(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := syscall.Kill(p.pid, 0); errors.Is(err, syscall.ESRCH) {
				return nil
			}
		}
	}
}

func (p *process) Close() {}

//go:build !unix

package agent

import (
	"context"
	"errors"
	"time"
)

// process is not supported here: the agent relies on its probes.
type process struct {
	pid     int
	started time.Time
}

func openProcess(pid int) (*process, error) {
	return nil, errors.New("watching a process needs Linux or another Unix")
}

func (p *process) Wait(context.Context, time.Duration) error { return errors.New("not supported") }
func (p *process) Close()                                    {}

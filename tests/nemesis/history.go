package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// op is one operation of the workload and its outcome, a line of the
// history file.
type op struct {
	At     float64 `json:"t"`    // seconds since the run began
	Proc   string  `json:"proc"` // who: plain-03, hagent-02, operator, reader, watch-p1, nemesis
	Op     string  `json:"op"`
	ID     string  `json:"id,omitempty"`
	Peer   string  `json:"peer,omitempty"`
	Result string  `json:"result"` // ok, error, timeout (for the nemesis: start, heal)
	Code   int     `json:"code,omitempty"`
	Info   string  `json:"info,omitempty"`

	at time.Time
}

// history writes ops to a JSON-lines file and keeps them for the checker.
type history struct {
	begin time.Time
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	ops   []op
}

func newHistory(path string) (*history, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &history{begin: time.Now(), f: f, w: bufio.NewWriter(f)}, nil
}

func (h *history) add(o op) op {
	o.at = time.Now()
	o.At = float64(o.at.Sub(h.begin).Milliseconds()) / 1000
	b, _ := json.Marshal(o)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, o)
	_, _ = h.w.Write(append(b, '\n'))
	return o
}

func (h *history) snapshot() []op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]op(nil), h.ops...)
}

func (h *history) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.w.Flush(); err != nil {
		return err
	}
	return h.f.Close()
}

// outcome classifies an error: ok, timeout or error.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return "timeout"
	}
	return "error"
}

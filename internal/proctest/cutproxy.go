package proctest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// CutProxy forwards TCP connections from a loopback port to a target;
// Cut drops every open connection at once, as a network failure would,
// while new connections still go through.
type CutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewCutProxy listens on a free 127.0.0.1 port and forwards to target
// (host:port) until the test ends.
func NewCutProxy(t testing.TB, target string) *CutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy to %s: %v", target, err)
	}
	p := &CutProxy{ln: ln}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(up, c); up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); c.Close() })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *CutProxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every connection open through the proxy and returns how
// many there were.
func (p *CutProxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.conns) / 2
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	return n
}

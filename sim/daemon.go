package sim

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// daemon is one simulated process's listener, as the outside sees the
// process: it answers, it is gone (stop: its port refuses, every open
// connection is cut, as when the process dies), or it is paused (pause:
// connections are accepted and nothing is answered until resume, as under
// SIGSTOP or a long GC pause). A stopped daemon starts again on the same
// address, unpaused, as a restarted process does.
type daemon interface {
	start() error
	stop()
	pause()
	resume()
	addr() string
	running() bool
	paused() bool
}

// httpDaemon is a daemon whose surface is HTTP: a ResourceManager's web
// port, an HBase info port, an Elasticsearch HTTP port, a ZooKeeper
// AdminServer.
type httpDaemon struct {
	h   http.Handler
	log *slog.Logger
	wg  *sync.WaitGroup

	mu      sync.Mutex
	address string       // fixed at the first start
	srv     *http.Server // nil while stopped
	gate    gate
}

// gate holds a paused daemon's work: closed (work passes) while it runs,
// open (work waits) while it is paused. Its owner's mutex guards the
// field that holds it.
type gate chan struct{}

// passing returns a closed gate.
func passing() gate {
	g := make(gate)
	close(g)
	return g
}

// paused reports whether work waits at g.
func (g gate) paused() bool {
	select {
	case <-g:
		return false
	default:
		return true
	}
}

// release lets the work waiting at g pass.
func (g gate) release() {
	if g.paused() {
		close(g)
	}
}

func newHTTPDaemon(address string, h http.Handler, log *slog.Logger, wg *sync.WaitGroup) *httpDaemon {
	return &httpDaemon{h: h, log: log, wg: wg, address: address, gate: passing()}
}

func (d *httpDaemon) start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", d.address)
	if err != nil {
		return err
	}
	d.address = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(d.serve), ReadHeaderTimeout: 10 * time.Second}
	d.srv = srv
	d.wg.Go(func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			d.log.Warn("simulated daemon's server ended", "addr", ln.Addr().String(), "err", err)
		}
	})
	return nil
}

// serve holds a request while the daemon is paused; the request's
// connection closing (the client gave up, or stop cut it) ends the wait.
func (d *httpDaemon) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	gate := d.gate
	d.mu.Unlock()
	select {
	case <-gate:
	case <-r.Context().Done():
		return
	}
	d.h.ServeHTTP(w, r)
}

func (d *httpDaemon) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv == nil {
		return
	}
	_ = d.srv.Close() // the listener and every connection
	d.srv = nil
	d.gate.release()
}

func (d *httpDaemon) pause() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv != nil && !d.gate.paused() {
		d.gate = make(gate)
	}
}

func (d *httpDaemon) resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gate.release()
}

func (d *httpDaemon) addr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.address
}

func (d *httpDaemon) running() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.srv != nil
}

func (d *httpDaemon) paused() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gate.paused()
}

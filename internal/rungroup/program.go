package rungroup

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Running is a started Group as the Close of the program that owns it sees
// it: Done while it stops, and one Close that stops the actors and waits
// for them. Its methods may be called on a nil *Running, a program that
// was never opened: Done is then nil and Close does nothing.
type Running struct {
	g    *Group
	done chan struct{} // closed when every actor has returned
	err  error         // Wait's; read after done

	once     sync.Once
	closeErr error
}

// Start waits for g's actors in a goroutine of its own and returns g as
// running. Go must not be called on g afterwards.
func (g *Group) Start() *Running {
	r := &Running{g: g, done: make(chan struct{})}
	go func() {
		r.err = g.Wait()
		close(r.done)
	}()
	return r
}

// Done is closed once the actors have been asked to stop: Close was called
// or an actor returned.
func (r *Running) Done() <-chan struct{} {
	if r == nil {
		return nil
	}
	return r.g.Done()
}

// Close asks every actor to stop, waits for them and returns the first
// failure. If ctx ends first it calls cut (to close connections at once,
// say) and returns ctx's error. Close is idempotent.
func (r *Running) Close(ctx context.Context, cut func()) error {
	if r == nil {
		return nil
	}
	r.once.Do(func() {
		r.g.Stop()
		select {
		case <-r.done:
			r.closeErr = r.err
		case <-ctx.Done():
			cut()
			r.closeErr = ctx.Err()
		}
	})
	return r.closeErr
}

// HTTP runs srv on ln as the actor "http" (over TLS when tlsOn: the
// certificate comes from srv.TLSConfig), and the actor "stopper", which
// once the group stops calls before (if set: streams that would hold the
// shutdown up end there) and shuts srv down gracefully within timeout,
// closing every connection when that runs out.
func (g *Group) HTTP(srv *http.Server, ln net.Listener, tlsOn bool, timeout time.Duration, logger *slog.Logger, before func()) {
	g.Go("http", func(context.Context) error {
		var err error
		if tlsOn {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go("stopper", func(ctx context.Context) error {
		<-ctx.Done()
		if before != nil {
			before()
		}
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			logger.Warn("graceful shutdown cut short; closing connections", "err", err)
			return srv.Close()
		}
		return nil
	})
}

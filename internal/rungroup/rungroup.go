// Package rungroup runs the actors of one process (loops, listeners,
// pollers) on golang.org/x/sync/errgroup, with one rule added: the first
// actor to return, with or without an error, stops the others, since a
// process missing any of its actors is not working. Wait returns the first
// error, prefixed with the actor's name.
//
// It also holds what every heureka program (server.Server,
// webhdfs.Server) does with its group the same way: HTTP runs an
// http.Server and its graceful stop as two actors, and Start returns a
// Running whose Done and idempotent Close are the program's.
//
// A Group's and a Running's methods are safe for concurrent use; Go must
// not be called after Wait or Start. It does not restart actors or catch
// panics.
package rungroup

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// Group is a set of actors sharing one context.
type Group struct {
	g    *errgroup.Group
	ctx  context.Context
	stop context.CancelFunc
}

// New returns a Group whose actors stop when parent ends, when Stop is
// called, or when one of them returns.
func New(parent context.Context) *Group {
	ctx, stop := context.WithCancel(parent)
	g, gctx := errgroup.WithContext(ctx)
	return &Group{g: g, ctx: gctx, stop: stop}
}

// Go starts fn as the actor called name.
func (g *Group) Go(name string, fn func(ctx context.Context) error) {
	g.g.Go(func() error {
		defer g.stop()
		if err := fn(g.ctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
}

// Stop asks every actor to return.
func (g *Group) Stop() { g.stop() }

// Done is closed once the actors have been asked to stop.
func (g *Group) Done() <-chan struct{} { return g.ctx.Done() }

// Wait waits for every actor and returns the first error.
func (g *Group) Wait() error {
	err := g.g.Wait()
	g.stop()
	return err
}

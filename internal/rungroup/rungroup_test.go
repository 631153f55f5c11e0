package rungroup

import (
	"context"
	"errors"
	"testing"
)

func TestFirstToReturnStopsTheRest(t *testing.T) {
	g := New(context.Background())
	stopped := make(chan struct{})
	g.Go("loop", func(ctx context.Context) error { <-ctx.Done(); close(stopped); return nil })
	g.Go("quitter", func(context.Context) error { return nil })
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
	<-stopped // the loop saw its context end
}

func TestWaitNamesTheFailedActor(t *testing.T) {
	g := New(context.Background())
	boom := errors.New("boom")
	g.Go("loop", func(ctx context.Context) error { <-ctx.Done(); return nil })
	g.Go("listener", func(context.Context) error { return boom })
	err := g.Wait()
	if !errors.Is(err, boom) || err.Error() != "listener: boom" {
		t.Fatalf("Wait = %v, want listener: boom", err)
	}
	select {
	case <-g.Done():
	default:
		t.Fatal("Done not closed after a failure")
	}
}

func TestStop(t *testing.T) {
	g := New(context.Background())
	g.Go("loop", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	g.Stop()
	if err := g.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want the loop's context.Canceled", err)
	}
}

package rungroup

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
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

// TestHTTPAndRunning: HTTP serves until the group stops, then shuts the
// server down gracefully, letting a request in flight finish; Close waits
// for it, is idempotent, and a nil Running does nothing.
func TestHTTPAndRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inFlight, release := make(chan struct{}), make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(inFlight)
		<-release
		w.Write([]byte("done"))
	})}
	g := New(context.Background())
	closed := 0
	g.HTTP(srv, ln, false, time.Minute, slog.New(slog.DiscardHandler), func() { closed++ })
	r := g.Start()
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			answer <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answer <- string(b)
	}()
	<-inFlight
	closeErr := make(chan error, 1)
	go func() { closeErr <- r.Close(context.Background(), func() { t.Error("cut a graceful stop") }) }()
	<-r.Done()
	close(release)
	if got := <-answer; got != "done" {
		t.Errorf("the request in flight got %q", got)
	}
	if err := <-closeErr; err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := r.Close(context.Background(), nil); err != nil || closed != 1 {
		t.Errorf("a second Close: %v; before ran %d times", err, closed)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
		t.Error("still serving after Close")
	}
	var never *Running
	if never.Done() != nil || never.Close(context.Background(), nil) != nil {
		t.Error("a nil Running is not inert")
	}
}

// TestCloseCutWhenContextEnds: a Close whose context ends before the
// actors return calls cut and returns the context's error.
func TestCloseCutWhenContextEnds(t *testing.T) {
	g := New(context.Background())
	unblock := make(chan struct{})
	g.Go("slow", func(ctx context.Context) error { <-ctx.Done(); <-unblock; return nil })
	r := g.Start()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cut := false
	if err := r.Close(ctx, func() { cut = true; close(unblock) }); !errors.Is(err, context.Canceled) || !cut {
		t.Errorf("Close = %v, cut %v", err, cut)
	}
}

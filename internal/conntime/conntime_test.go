package conntime

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/configtest"
	"github.com/heureka-project/heureka/internal/proctest"
	dto "github.com/prometheus/client_model/go"
)

// short are limits a test can wait out: a tick of 30 ms.
var short = Limits{Header: 2 * time.Second, Body: 300 * time.Millisecond, Idle: 300 * time.Millisecond, Answer: 300 * time.Millisecond}

// How a test server serves: plain HTTP/1.1, HTTP/1.1 over TLS, or
// HTTP/2 over TLS.
const (
	plain = iota
	tls1
	tls2
)

// serve runs h on loopback behind a Watchdog keeping l, and returns the
// server and the watchdog.
func serve(t *testing.T, l Limits, h http.Handler, mode int) (*httptest.Server, *Watchdog) {
	t.Helper()
	w, err := New(l, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(h)
	w.Guard(ts.Config)
	ts.Listener = w.Listener(smallSendBuffers{ts.Listener})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	switch mode {
	case plain:
		ts.Start()
	case tls1:
		ts.StartTLS()
	case tls2:
		ts.EnableHTTP2 = true
		ts.StartTLS()
	}
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		cancel()
		<-done
	})
	return ts, w
}

// smallSendBuffers gives every accepted connection a 16 KiB send buffer,
// so that a server writing to a client that does not read blocks soon.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		err = c.(*net.TCPConn).SetWriteBuffer(16 << 10)
	}
	return c, err
}

// rawConn is a client connection that sends requests by hand and reads
// answers, so that a test decides when it stops reading.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, ts *httptest.Server, readBuffer int) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if readBuffer > 0 {
		if err := c.(*net.TCPConn).SetReadBuffer(readBuffer); err != nil {
			t.Fatal(err)
		}
	}
	if ts.TLS != nil {
		cfg := ts.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		cfg.NextProtos, cfg.ServerName = nil, "127.0.0.1" // HTTP/1.1
		c = tls.Client(c, cfg)
	}
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) get(path string) *http.Response {
	rc.t.Helper()
	if _, err := fmt.Fprintf(rc.c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		rc.t.Fatalf("GET %s: %v", path, err)
	}
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		rc.t.Fatalf("GET %s: %v", path, err)
	}
	return resp
}

// tryGet is get for a connection the server may have cut: it reads the
// whole answer and returns any error instead of failing the test.
func (rc *rawConn) tryGet(path string) error {
	if _, err := fmt.Fprintf(rc.c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("GET %s: reading the body: %w", path, err)
	}
	return nil
}

// expectClosed fails the test unless the server closes rc within wait.
func (rc *rawConn) expectClosed(wait time.Duration) {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, rc.br)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		rc.t.Fatalf("the server kept the connection open for %v", wait)
	}
}

// cuts is how many connections w cut for reason.
func cuts(t *testing.T, w *Watchdog, reason string) float64 {
	t.Helper()
	var m dto.Metric
	if err := w.cuts.WithLabelValues(reason).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func drain(t *testing.T, resp *http.Response) {
	t.Helper()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

func TestLimitsValidate(t *testing.T) {
	good := Limits{Header: time.Second, Body: time.Second, Idle: time.Second, Answer: time.Second}
	configtest.Refuses(t, good, configtest.Cases[Limits]{
		"Header": func(l *Limits) { l.Header = 0 },
		"Body":   func(l *Limits) { l.Body = -1 },
		"Idle":   func(l *Limits) { l.Idle = 0 },
		"Answer": func(l *Limits) { l.Answer = 0 },
	})
	if _, err := New(Limits{}, slog.Default()); err == nil {
		t.Error("New with zero limits succeeded")
	}
	if d := (Limits{Idle: 2 * time.Minute, Answer: time.Minute}).Tick(); d != time.Second {
		t.Errorf("tick for minutes-long limits: %v, want 1s", d)
	}
	if d := short.Tick(); d != 30*time.Millisecond {
		t.Errorf("tick for %+v: %v, want 30ms", short, d)
	}
}

// A kept connection that sends nothing is cut after Idle; one that keeps
// asking is not, however long it lives. The busy connection asks every
// Idle/3, but a machine loaded enough to stall this test's goroutine for
// most of Idle between two of its requests makes the server right to cut
// it too: such an attempt is run again, at most three times, and only a
// cut of a connection that never paused that long fails the test.
func TestIdleConnectionIsCut(t *testing.T) {
	for attempt := 1; ; attempt++ {
		gap, err := idleAttempt(t)
		if err == nil {
			return
		}
		if gap < short.Idle-2*short.Tick() {
			t.Fatalf("the busy connection was cut though it never paused for more than %v (Idle %v): %v", gap, short.Idle, err)
		}
		if attempt == 3 {
			t.Fatalf("three attempts in a row stalled past Idle (the last for %v); the machine is too loaded to tell: %v", gap, err)
		}
		t.Logf("attempt %d: the busy connection paused %v, near Idle %v, and was cut (%v); again", attempt, gap, short.Idle, err)
	}
}

// idleAttempt runs TestIdleConnectionIsCut once on a new server. It
// returns the longest pause the busy connection made between an answer
// and its next request, and the error that ended it early, if any.
func idleAttempt(t *testing.T) (time.Duration, error) {
	ts, w := serve(t, short, ok, plain)
	busy, idle := dial(t, ts, 0), dial(t, ts, 0)
	drain(t, idle.get("/"))
	var longest time.Duration
	last := time.Now()
	for range 12 { // 1.2 s: four times Idle
		if gap := time.Since(last); gap > longest {
			longest = gap
		}
		if err := busy.tryGet("/"); err != nil {
			return longest, err
		}
		last = time.Now()
		time.Sleep(short.Idle / 3)
	}
	idle.expectClosed(5 * time.Second)
	if gap := time.Since(last); gap > longest {
		longest = gap
	}
	if err := busy.tryGet("/"); err != nil {
		return longest, err
	}
	if n := cuts(t, w, cutIdle); n != 1 {
		t.Errorf("idle cuts: %v, want 1", n)
	}
	return longest, nil
}

// The header bound is net/http's, set by Guard.
func TestHalfHeaderIsCut(t *testing.T) {
	ts, _ := serve(t, Limits{Header: 300 * time.Millisecond, Body: time.Minute, Idle: time.Minute, Answer: time.Minute}, ok, plain)
	proctest.ExpectHalfHeaderDropped(t, ts.Listener.Addr().String(), 5*time.Second)
}

// A body that stops coming is cut after Body; the handler's read fails.
func TestSlowBodyIsCut(t *testing.T) {
	readErr := make(chan error, 1)
	ts, _ := serve(t, short, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
	}), plain)
	c := dial(t, ts, 0)
	start := time.Now()
	if _, err := io.WriteString(c.c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("a 1-byte body of 100 promised read without error")
		}
		if d := time.Since(start); d < short.Body {
			t.Fatalf("the body's read failed after %v, before Body (%v)", d, short.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a body that stopped coming was still being read after 5s")
	}
}

// A client that stops reading a large answer is cut once Answer has
// passed; on a kept connection, a request that comes later than Answer
// after the last one is still answered (no bound outlives its answer).
// Over TLS the same holds: the watchdog finds its connection under the
// TLS one.
func TestClientThatStopsReadingIsCut(t *testing.T) {
	for name, mode := range map[string]int{"plain": plain, "TLS": tls1} {
		t.Run(name, func(t *testing.T) { testStopsReading(t, mode) })
	}
}

func testStopsReading(t *testing.T, mode int) {
	big := []byte(strings.Repeat("x", 8<<20))
	mux := http.NewServeMux()
	mux.Handle("/small", ok)
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
	l := short
	l.Idle = time.Minute // not the bound under test
	ts, w := serve(t, l, mux, mode)

	c := dial(t, ts, 16<<10)
	drain(t, c.get("/small"))
	time.Sleep(short.Answer + 200*time.Millisecond)
	drain(t, c.get("/small"))
	for range 20 {
		drain(t, c.get("/small"))
	}
	if n := cuts(t, w, cutAnswer); n != 0 {
		t.Fatalf("answer cuts before the stalled read: %v, want 0", n)
	}

	resp := c.get("/big")
	time.Sleep(3 * short.Answer) // the fault: a client that stops reading
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, resp.Body)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("a client that stopped reading for %v was still connected 10s later, after %d bytes", 3*short.Answer, n)
	}
	if err == nil {
		t.Fatalf("a client that stopped reading for %v got the whole %d-byte answer", 3*short.Answer, n)
	}
	if n := cuts(t, w, cutAnswer); n != 1 {
		t.Errorf("answer cuts: %v, want 1", n)
	}
}

// A stream that sets its own write deadline on each write outlives Answer
// and Idle while its client reads, even a client slow enough that writes
// block for longer than the watchdog's two ticks.
func TestStreamWithItsOwnDeadlinesOutlivesAnswer(t *testing.T) {
	const events = 16 // each read 100 ms after the last: 1.6 s, five times Answer
	event := []byte(strings.Repeat("x", 64<<10-1) + "\n")
	ts, w := serve(t, short, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for range events {
			_ = rc.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := w.Write(event); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}), plain)
	c := dial(t, ts, 16<<10)
	resp := c.get("/")
	c.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	lines := bufio.NewReaderSize(resp.Body, 1<<10)
	for i := range events {
		time.Sleep(100 * time.Millisecond)
		_, err := lines.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = lines.ReadSlice('\n')
		}
		if err != nil {
			t.Fatalf("stream cut at event %d: %v", i, err)
		}
	}
	if n := cuts(t, w, cutAnswer) + cuts(t, w, cutIdle); n != 0 {
		t.Errorf("cuts: %v, want 0", n)
	}
}

// Over HTTP/2 a request is answered with its write deadline set, and an
// idle connection is cut after Idle as over HTTP/1.
func TestHTTP2(t *testing.T) {
	ts, w := serve(t, short, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d", r.ProtoMajor)
	}), tls2)
	client := ts.Client()
	resp, err := client.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "2" || resp.ProtoMajor != 2 {
		t.Fatalf("over TLS: proto %d, body %q, %v; want HTTP/2", resp.ProtoMajor, body, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for cuts(t, w, cutIdle) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("an idle HTTP/2 connection was not cut within 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

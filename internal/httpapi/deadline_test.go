package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/heureka-project/heureka/registry"
)

// ResponseTimeout holds on a kept-alive connection: a request that comes
// longer than ResponseTimeout after the last one is still answered, and a
// client that stops reading a large answer, after a burst of requests on
// the same connection, is cut off once ResponseTimeout has passed. (A
// version that moved the deadline only now and then failed here: net/http
// clears the write deadline after every answer.)
func TestResponseTimeoutOnAKeptConnection(t *testing.T) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	// ~1 KB each: a listing of ~1 MB, far more than the small socket
	// buffers below hold, so that its writer blocks on a client that
	// stops reading.
	registerRange(t, reg, 0, 1000)
	cfg := DefaultConfig()
	cfg.ResponseTimeout = 500 * time.Millisecond
	api := mustNew(t, cfg, reg, nil)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := smallSendBuffers{inner}
	hs := &http.Server{Handler: api.Handler()}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	// Encode the listing once, so that the timed answer below is a copy
	// of cached bytes, not an encoding that a slow (-race) build might
	// not finish within ResponseTimeout.
	warm, err := http.Get("http://" + ln.Addr().String() + "/eureka/apps")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, warm.Body)
	warm.Body.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.(*net.TCPConn).SetReadBuffer(16 << 10); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	get := func(path string) *http.Response {
		t.Helper()
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: heureka\r\nAccept: application/json\r\n\r\n", path); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp
	}
	read := func(resp *http.Response) error {
		_, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err
	}

	if err := read(get("/healthz")); err != nil {
		t.Fatal(err)
	}
	// The gap is the input: longer than the deadline the first answer set.
	time.Sleep(cfg.ResponseTimeout + 200*time.Millisecond)
	resp := get("/healthz")
	if err := read(resp); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a request %v after the last one: %v, %v; want 200 (a stale deadline?)", cfg.ResponseTimeout+200*time.Millisecond, resp.Status, err)
	}

	for range 50 {
		if err := read(get("/healthz")); err != nil {
			t.Fatal(err)
		}
	}
	resp = get("/eureka/apps")
	// The pause is the fault: a client that stops reading.
	time.Sleep(3 * cfg.ResponseTimeout)
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("a client that stopped reading for %v got the whole %d-byte listing; want it cut off after %v", 3*cfg.ResponseTimeout, n, cfg.ResponseTimeout)
	}
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

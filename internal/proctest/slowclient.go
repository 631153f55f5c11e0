package proctest

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// ExpectHalfHeaderDropped sends half a request header to the HTTP server
// at addr and fails t unless the server closes the connection within
// wait, as a server whose header timeout is shorter than wait does. The
// server may answer 408 first.
func ExpectHalfHeaderDropped(t testing.TB, addr string, wait time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "PUT /eureka/apps/A/1 HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(wait))
	n, err := c.Read(make([]byte, 512))
	if err == nil && n > 0 {
		_, err = c.Read(make([]byte, 512)) // after a 408, the close
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("%s kept a half-sent request header open for %s", addr, wait)
	}
	if err != io.EOF {
		t.Fatalf("read from a connection %s should have closed: %v, want EOF", addr, err)
	}
}

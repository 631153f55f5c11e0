package ui

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// This file drives headless Chromium over the DevTools protocol (CDP):
// JSON messages over the browser's remote-debugging WebSocket. It holds
// the smallest WebSocket client that talks to Chromium (RFC 6455: the
// upgrade handshake, masked client frames, fragmented and control frames)
// and a CDP session on top of it.

const chromiumPath = "/usr/bin/chromium"

// requireChromium skips the test when Chromium is not installed, except in
// CI, where the dashboard must be tested.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing and CI=true: the dashboard test must run in CI (apt-get install -y chromium): %v", chromiumPath, err)
		}
		t.Skipf("skipping the headless-browser test: %s is not installed (apt-get install -y chromium); CI=true makes this a failure", chromiumPath)
	}
}

// browser is a running headless Chromium.
type browser struct {
	cmd     *exec.Cmd
	port    int
	stderr  *lockedWriter
	stopped chan struct{}
}

// startBrowser launches Chromium with a fresh profile in a temp dir and
// waits for its DevTools endpoint.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	dir := t.TempDir()
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", // CI containers have a small /dev/shm
		"--user-data-dir=" + dir,
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--window-size=1440,1000",
		"about:blank",
	}
	cmd := exec.Command(chromiumPath, args...)
	stderr := &lockedWriter{w: &bytes.Buffer{}}
	cmd.Stdout = io.Discard
	cmd.Stderr = stderr
	// Chromium starts helper processes; its own process group lets the
	// cleanup stop all of them and nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", chromiumPath, err)
	}
	b := &browser{cmd: cmd, stderr: stderr, stopped: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(b.stopped) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-b.stopped:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-b.stopped
		}
	})

	// Chromium writes the port it picked to DevToolsActivePort.
	portFile := filepath.Join(dir, "DevToolsActivePort")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, err := os.ReadFile(portFile); err == nil {
			if line, _, _ := strings.Cut(string(data), "\n"); line != "" {
				if p, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && p > 0 {
					b.port = p
					return b
				}
			}
		}
		select {
		case <-b.stopped:
			t.Fatalf("chromium exited before opening its DevTools port:\n%s", tail(stderr.String(), 3000))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium opened no DevTools port within 30s:\n%s", tail(stderr.String(), 3000))
		}
	}
}

// page connects to the browser's first page target.
func (b *browser) page(t *testing.T) *cdp {
	t.Helper()
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/list", b.port))
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		for _, tg := range targets {
			if tg.Type == "page" && tg.WS != "" {
				c, err := dialCDP(tg.WS)
				if err != nil {
					t.Fatalf("connect to the page's DevTools socket: %v", err)
				}
				t.Cleanup(c.close)
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page target in /json/list (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cdp is a DevTools session with one target.
type cdp struct {
	ws *wsConn

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMessage
	events  []cdpMessage // every event received, in order
	err     error        // why the reader stopped
}

type cdpMessage struct {
	ID     int64           `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func dialCDP(wsURL string) (*cdp, error) {
	ws, err := dialWebSocket(wsURL)
	if err != nil {
		return nil, err
	}
	c := &cdp{ws: ws, pending: map[int64]chan cdpMessage{}}
	go c.read()
	return c, nil
}

func (c *cdp) read() {
	for {
		data, err := c.ws.readMessage()
		if err != nil {
			c.mu.Lock()
			c.err = err
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		var m cdpMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		c.mu.Lock()
		if m.ID != 0 {
			if ch, ok := c.pending[m.ID]; ok {
				ch <- m
				delete(c.pending, m.ID)
			}
		} else if m.Method != "" {
			c.events = append(c.events, m)
		}
		c.mu.Unlock()
	}
}

// call sends one command and waits for its result.
func (c *cdp) call(ctx context.Context, method string, params any, result any) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: devtools connection is gone: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	ch := make(chan cdpMessage, 1)
	c.pending[id] = ch
	c.mu.Unlock()

	if params == nil {
		params = struct{}{}
	}
	msg, err := json.Marshal(struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params"`
	}{id, method, params})
	if err != nil {
		return err
	}
	if err := c.ws.writeText(msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: devtools connection closed", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value
// (JSON-serialisable values only) into out.
func (c *cdp) eval(ctx context.Context, expr string, out any) error {
	var res struct {
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := c.call(ctx, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	}, &res)
	if err != nil {
		return err
	}
	if res.Exception != nil {
		return fmt.Errorf("evaluate %q: %s %s", expr, res.Exception.Text, res.Exception.Exception.Description)
	}
	if out == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// eventsNamed returns the params of every event called method so far.
func (c *cdp) eventsNamed(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, e := range c.events {
		if e.Method == method {
			out = append(out, e.Params)
		}
	}
	return out
}

func (c *cdp) close() { c.ws.close() }

// ---- WebSocket (RFC 6455), client side, just enough for CDP ----

type wsConn struct {
	conn net.Conn
	br   *bufio.Reader
	wmu  sync.Mutex
}

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func dialWebSocket(raw string) (*wsConn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "ws" {
		return nil, fmt.Errorf("websocket: only ws:// is supported, got %q", raw)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	k := base64.StdEncoding.EncodeToString(key[:])
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\n" +
		"Host: " + u.Host + "\r\n" +
		"Upgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + k + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	sum := sha1.Sum([]byte(k + wsGUID))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		conn.Close()
		return nil, errors.New("websocket handshake: wrong Sec-WebSocket-Accept")
	}
	_ = conn.SetDeadline(time.Time{})
	return &wsConn{conn: conn, br: br}, nil
}

const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// writeFrame sends one final frame; client frames must be masked.
func (w *wsConn) writeFrame(op byte, payload []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	hdr := make([]byte, 0, 14)
	hdr = append(hdr, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n <= 0xFFFF:
		hdr = append(hdr, 0x80|126)
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	hdr = append(hdr, mask[:]...)
	masked := make([]byte, len(payload))
	for i, b := range payload {
		masked[i] = b ^ mask[i%4]
	}
	_ = w.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := w.conn.Write(append(hdr, masked...))
	return err
}

func (w *wsConn) writeText(p []byte) error { return w.writeFrame(opText, p) }

// readMessage returns the next text or binary message, answering pings and
// joining fragments on the way.
func (w *wsConn) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0F
		n := uint64(h[1] & 0x7F)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		var mask [4]byte
		masked := h[1]&0x80 != 0
		if masked {
			if _, err := io.ReadFull(w.br, mask[:]); err != nil {
				return nil, err
			}
		}
		if n > 256<<20 {
			return nil, fmt.Errorf("websocket: frame of %d bytes", n)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(w.br, payload); err != nil {
			return nil, err
		}
		if masked {
			for i := range payload {
				payload[i] ^= mask[i%4]
			}
		}
		switch op {
		case opPing:
			if err := w.writeFrame(opPong, payload); err != nil {
				return nil, err
			}
			continue
		case opPong:
			continue
		case opClose:
			_ = w.writeFrame(opClose, nil)
			return nil, io.EOF
		case opText, opBinary, opContinuation:
			msg = append(msg, payload...)
			if fin {
				return msg, nil
			}
		default:
			return nil, fmt.Errorf("websocket: unknown opcode %#x", op)
		}
	}
}

func (w *wsConn) close() {
	_ = w.writeFrame(opClose, []byte{0x03, 0xE8}) // 1000: normal closure
	_ = w.conn.Close()
}

// lockedWriter serialises writes from the child's stderr copier with reads
// in failure messages.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 1<<20 { // keep the last MiB or so
		l.w.Reset()
	}
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

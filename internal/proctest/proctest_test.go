package proctest

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// A shell that prints a listening line, then waits for SIGTERM.
func TestStartWaitSignalExit(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p := StartCmd(t, "sh", exec.Command(sh, "-c", `trap 'echo bye; exit 7' TERM; echo "x listening at=now addr=127.0.0.1:4242"; while :; do sleep 0.05; done`))
	if got := p.WaitAddr(5 * time.Second); got != "127.0.0.1:4242" {
		t.Fatalf("WaitAddr = %q", got)
	}
	p.Signal(syscall.SIGSTOP)
	p.Signal(syscall.SIGCONT)
	p.Signal(syscall.SIGTERM)
	if code := p.Exit(10 * time.Second); code != 7 {
		t.Fatalf("exit code %d, want 7; output %q", code, p.Output())
	}
	if !strings.Contains(p.Output(), "bye") {
		t.Fatalf("output %q lacks the trap's line", p.Output())
	}
}

func TestKillReportsSignal(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p := StartCmd(t, "sh", exec.Command(sh, "-c", `while :; do sleep 0.05; done`))
	p.Kill()
	if code := p.Exit(time.Second); code != -1 {
		t.Fatalf("exit code after SIGKILL = %d, want -1", code)
	}
}

func TestFreeAddrIsFree(t *testing.T) {
	a := FreeAddr(t, "127.0.0.1")
	ln, err := net.Listen("tcp", a)
	if err != nil {
		t.Fatalf("FreeAddr gave %s, which cannot be listened on: %v", a, err)
	}
	ln.Close()
}

func TestEventuallyWaitsForTheCondition(t *testing.T) {
	n := 0
	Eventually(t, 5*time.Second, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times", n)
	}
}

func TestRetryWaitsForNil(t *testing.T) {
	n := 0
	Retry(t, 5*time.Second, "the third call", func() error {
		if n++; n < 3 {
			return fmt.Errorf("call %d", n)
		}
		return nil
	})
	if n != 3 {
		t.Fatalf("called %d times", n)
	}
}

func TestPollReturnsTheLastError(t *testing.T) {
	n := 0
	err := Poll(100*time.Millisecond, func() error { n++; return fmt.Errorf("call %d", n) })
	if want := fmt.Sprintf("call %d", n); err == nil || err.Error() != want || n < 2 {
		t.Fatalf("poll = %v after %d calls, want %q", err, n, want)
	}
}

func TestCutProxyForwardsAndCuts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }() // echo
		}
	}()
	p := NewCutProxy(t, ln.Addr().String())
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("through the proxy: %q %v", buf, err)
	}
	if n := p.Cut(); n != 1 {
		t.Fatalf("Cut closed %d connections, want 1", n)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(buf); err == nil {
		t.Fatal("the connection survived the cut")
	}
}

// Package zktest starts real ZooKeeper servers (Debian's zookeeper package)
// for tests, standalone or as an ensemble on loopback, each with its
// AdminServer on. A test on a machine without the package skips, saying
// so; with CI=true it fails, since CI installs the package.
//
// Every server is stopped by t.Cleanup. Each method is safe for
// concurrent use.
package zktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proc"
)

// The Debian zookeeper package's jar, and the servlet API its AdminServer
// needs on the class path (the jar's manifest does not name it).
const (
	Jar        = "/usr/share/java/zookeeper.jar"
	ServletJar = "/usr/share/java/servlet-api.jar"
	Java       = "/usr/bin/java"
)

// Server is one running ZooKeeper server.
type Server struct {
	ID         int64  // myid; 0 for a standalone server
	ClientAddr string // 127.0.0.1:port
	QuorumAddr string // 127.0.0.1:port, "" for a standalone server
	AdminURL   string // http://127.0.0.1:port, the AdminServer
	p          *proc.Proc
	argv       []string // to start it again
	log        string
}

// Available says why ZooKeeper cannot run here, or "" when it can.
func Available() string {
	for _, f := range []string{Jar, ServletJar, Java} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Sprintf("%s is missing (Debian packages zookeeper and default-jre-headless; .ci/run installs them)", f)
		}
	}
	return ""
}

// Need skips t when ZooKeeper cannot run here, or fails it under CI=true.
func Need(t testing.TB) {
	t.Helper()
	if why := Available(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ZooKeeper cannot run and CI=true: %s", why)
		}
		t.Skipf("no real ZooKeeper here: %s", why)
	}
}

// StartStandalone starts one standalone server.
func StartStandalone(t testing.TB) *Server {
	t.Helper()
	Need(t)
	s := &Server{}
	start(t, []*Server{s}, "org.apache.zookeeper.server.ZooKeeperServerMain", nil)
	return s
}

// StartEnsemble starts n servers with ids 1..n as one ensemble and waits
// until every one serves (mntr answers, so a leader has been elected).
func StartEnsemble(t testing.TB, n int) []*Server {
	t.Helper()
	Need(t)
	servers := make([]*Server, n)
	var lines []string
	for i := range servers {
		s := &Server{ID: int64(i + 1), QuorumAddr: addr(t)}
		servers[i] = s
		lines = append(lines, fmt.Sprintf("server.%d=%s:%d", s.ID, s.QuorumAddr, port(t)))
	}
	start(t, servers, "org.apache.zookeeper.server.quorum.QuorumPeerMain", lines)
	return servers
}

func addr(t testing.TB) string {
	a, err := proc.FreeAddr("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func port(t testing.TB) int {
	p, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func start(t testing.TB, servers []*Server, main string, quorum []string) {
	t.Helper()
	dir := t.TempDir()
	for _, s := range servers {
		s.ClientAddr = addr(t)
		admin := port(t)
		s.AdminURL = "http://127.0.0.1:" + strconv.Itoa(admin)
		data := filepath.Join(dir, "data"+strconv.FormatInt(s.ID, 10))
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		if s.ID > 0 {
			if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.FormatInt(s.ID, 10)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, clientPort, _ := strings.Cut(s.ClientAddr, ":")
		conf := append([]string{
			// A short tick so that elections and session timeouts take
			// seconds in a test, not tens of seconds.
			"tickTime=500", "initLimit=10", "syncLimit=5",
			"dataDir=" + data,
			"clientPort=" + clientPort, "clientPortAddress=127.0.0.1",
			"admin.enableServer=true", "admin.serverAddress=127.0.0.1",
			"admin.serverPort=" + strconv.Itoa(admin),
			"4lw.commands.whitelist=mntr,ruok,srvr",
		}, quorum...)
		cfg := filepath.Join(dir, "zoo"+strconv.FormatInt(s.ID, 10)+".cfg")
		if err := os.WriteFile(cfg, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.argv = []string{Java, "-Xmx128m", "-cp", Jar + ":" + ServletJar + ":/etc/zookeeper/conf", main, cfg}
		s.log = cfg + ".log"
		s.run(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.p.WaitReady(ctx, 90*time.Second, proc.HTTPOK(s.AdminURL+"/commands/mntr")); err != nil {
			t.Fatalf("zookeeper %d did not come up: %v\n%s", s.ID, err, s.p.Tail())
		}
	}
}

// run starts the server's process, stopped when the test ends.
func (s *Server) run(t testing.TB) {
	t.Helper()
	p, err := proc.StartLogged("zookeeper", proc.Command(s.argv), s.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.p = p
	t.Cleanup(func() { p.Stop(5 * time.Second) })
}

// Restart starts a server that was killed again, on the same ports and
// data, and waits until it serves (mntr answers: it has joined a quorum).
// It must not run beside the server's other methods.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if !s.p.Exited() {
		t.Fatalf("zookeeper %d is still running", s.ID)
	}
	s.run(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := s.p.WaitReady(ctx, 90*time.Second, proc.HTTPOK(s.AdminURL+"/commands/mntr")); err != nil {
		t.Fatalf("zookeeper %d did not come back: %v\n%s", s.ID, err, s.p.Tail())
	}
}

// PID is the server's process (the JVM).
func (s *Server) PID() int { return s.p.Pid() }

// Kill ends the server with SIGKILL, as a crash would.
func (s *Server) Kill() { s.p.Kill(); <-s.p.Done() }

// Pause stops the server with SIGSTOP, as a long GC pause would; Resume
// continues it.
func (s *Server) Pause() error  { return s.p.Signal(sigStop) }
func (s *Server) Resume() error { return s.p.Signal(sigCont) }

// Members returns the ensemble's voting members as "id=host:port,...".
func Members(servers []*Server) string {
	parts := make([]string, len(servers))
	for i, s := range servers {
		parts[i] = strconv.FormatInt(s.ID, 10) + "=" + s.QuorumAddr
	}
	return strings.Join(parts, ",")
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/heureka-project/heureka/bench/internal/procstat"
	"github.com/heureka-project/heureka/internal/proc"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Where the peers' servers come from: Debian's etcd-server and zookeeper
// packages.
const (
	etcdBin      = "/usr/bin/etcd"
	zookeeperJar = "/usr/share/java/zookeeper.jar"
	javaBin      = "java"
)

// haveEtcd and haveZooKeeper say whether the peers can be run here.
func haveEtcd() bool { _, err := os.Stat(etcdBin); return err == nil }

func haveZooKeeper() bool {
	if _, err := os.Stat(zookeeperJar); err != nil {
		return false
	}
	_, err := exec.LookPath(javaBin)
	return err == nil
}

// server is one running registry server.
type server struct {
	kind string // "heureka", "etcd", "zookeeper"
	p    *proc.Proc
	addr string // host:port clients use
	dir  string
}

func (s *server) pid() int { return s.p.Pid() }

func (s *server) usage() procstat.Usage {
	u, _ := procstat.Read(s.pid())
	return u
}

func (s *server) stop() {
	if s == nil {
		return
	}
	s.p.Stop(10 * time.Second)
}

// startHeureka runs `heureka server` on a free loopback port with the given
// self-preservation mode and waits for its "listening" line.
func startHeureka(ctx context.Context, bin, dir, name, selfPreservation string) (*server, error) {
	addrc := make(chan string, 1)
	argv := []string{bin, "server", "--listen", "127.0.0.1:0", "--self-preservation", selfPreservation}
	p, err := proc.StartLogged("heureka", proc.Command(argv), filepath.Join(dir, name+".log"), func(line string) bool {
		if !strings.Contains(line, "heureka server listening") {
			return false
		}
		for f := range strings.FieldsSeq(line) {
			if a, ok := strings.CutPrefix(f, "addr="); ok {
				addrc <- a
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	s := &server{kind: "heureka", p: p, dir: dir}
	select {
	case s.addr = <-addrc:
	case <-p.Done():
		return nil, fmt.Errorf("heureka server exited at start: %v\n%s", p.Err(), p.Tail())
	case <-time.After(30 * time.Second):
		p.Stop(time.Second)
		return nil, fmt.Errorf("heureka server did not log its address in 30s\n%s", p.Tail())
	case <-ctx.Done():
		p.Stop(time.Second)
		return nil, ctx.Err()
	}
	if err := p.WaitReady(ctx, 10*time.Second, proc.HTTPOK("http://"+s.addr+"/healthz")); err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return s, nil
}

// startEtcd runs a single-member etcd on loopback with a temp data dir.
func startEtcd(ctx context.Context, dir, name string) (*server, error) {
	cport, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	pport, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, name+"-data")
	curl := fmt.Sprintf("http://127.0.0.1:%d", cport)
	purl := fmt.Sprintf("http://127.0.0.1:%d", pport)
	argv := []string{etcdBin,
		"--name", "bench", "--data-dir", data,
		"--listen-client-urls", curl, "--advertise-client-urls", curl,
		"--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		"--initial-cluster", "bench=" + purl, "--initial-cluster-state", "new",
		"--log-level", "warn",
	}
	p, err := proc.StartLogged("etcd", proc.Command(argv), filepath.Join(dir, name+".log"), nil)
	if err != nil {
		return nil, err
	}
	s := &server{kind: "etcd", p: p, addr: fmt.Sprintf("127.0.0.1:%d", cport), dir: dir}
	err = p.WaitReady(ctx, 30*time.Second, func(ctx context.Context) error {
		cli, err := newEtcdClient(s.addr)
		if err != nil {
			return err
		}
		defer cli.Close()
		_, err = cli.Get(ctx, "/ready-check")
		return err
	})
	if err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return s, nil
}

// newEtcdClient connects to one etcd member, without logs.
func newEtcdClient(addr string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		// Thousands of watchers each hold a client; keep idle pings rare.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
	})
}

// startZooKeeper runs a standalone ZooKeeper (ZooKeeperServerMain from
// Debian's jar) on loopback with a zoo.cfg and data dir in dir. tickTime is
// 2 s, so sessions may negotiate 4–40 s, and the per-IP connection limit is
// off: every watcher here comes from 127.0.0.1.
func startZooKeeper(ctx context.Context, dir, name string) (*server, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, name+"-data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, name+".cfg")
	conf := strings.Join([]string{
		"tickTime=2000",
		"dataDir=" + data,
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=127.0.0.1",
		"maxClientCnxns=0",
		"admin.enableServer=false",
		"4lw.commands.whitelist=ruok",
		"",
	}, "\n")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	argv := []string{javaBin, "-cp", zookeeperJar + ":/etc/zookeeper/conf",
		"-Dzookeeper.admin.enableServer=false",
		"org.apache.zookeeper.server.ZooKeeperServerMain", cfg}
	p, err := proc.StartLogged("zookeeper", proc.Command(argv), filepath.Join(dir, name+".log"), nil)
	if err != nil {
		return nil, err
	}
	s := &server{kind: "zookeeper", p: p, addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir}
	err = p.WaitReady(ctx, 60*time.Second, func(ctx context.Context) error {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ruok")); err != nil {
			return err
		}
		buf := make([]byte, 4)
		if _, err := c.Read(buf); err != nil {
			return err
		}
		if string(buf) != "imok" {
			return errors.New("zookeeper answered " + string(buf))
		}
		return nil
	})
	if err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return s, nil
}

// zkConnect opens one ZooKeeper session and waits until it is established.
func zkConnect(ctx context.Context, addr string, timeout time.Duration) (*zk.Conn, error) {
	c, events, err := zk.Connect([]string{addr}, timeout, zk.WithLogInfo(false), zk.WithLogger(silentLogger{}))
	if err != nil {
		return nil, err
	}
	if err := waitSession(ctx, addr, events); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// zkSessionWait bounds the wait for a ZooKeeper session: a server that has
// answered ruok gives one in milliseconds, so one that gives none in this
// time is stuck, and the run should say so rather than wait out its whole
// budget.
const zkSessionWait = 30 * time.Second

// errNoSession is a ZooKeeper server that gave no session in zkSessionWait.
var errNoSession = errors.New("zookeeper: no session")

// waitSession waits for a session on a go-zookeeper event channel, at most
// zkSessionWait, then keeps draining the channel.
func waitSession(ctx context.Context, addr string, sev <-chan zk.Event) error {
	t := time.NewTimer(zkSessionWait)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-sev:
			if !ok {
				return fmt.Errorf("zookeeper at %s: session events closed", addr)
			}
			if ev.State == zk.StateHasSession {
				go func() {
					for range sev {
					}
				}()
				return nil
			}
		case <-t.C:
			return fmt.Errorf("%w from %s within %s", errNoSession, addr, zkSessionWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type silentLogger struct{}

func (silentLogger) Printf(string, ...any) {}

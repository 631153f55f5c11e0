package hdfs_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

// downBound is the acceptance criterion: a dead daemon is DOWN in the
// registry within 3 s.
const downBound = 3 * time.Second

const (
	dnApp = "hdfs-datanode.prod"
	nnApp = "hdfs-namenode.prod"
)

// TestDaemonStoppedDownAndBack: the daemon stops answering (its /jmx and
// data port close) → DOWN within 3 s; it comes back → UP.
func TestDaemonStoppedDownAndBack(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	dn := startSim(t, "datanode", "--hostname", "dn1.test", "--capacity", "2T", "--used", "1T", "--blocks", "5000")
	// --up-after 1s: the UP below is bounded like the DOWN.
	startAgent(t, reg, "datanode", dn, "dn1.test", "/dc1/rack-a", "--metadata-interval", "1s", "--up-after", "1s")
	c := newClient(t, reg)
	const id = "prod-dn1.test-dc1.rack-a"
	waitStatus(t, c, dnApp, id, heureka.StatusUp, 20*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	in, err := c.Instance(ctx, dnApp, id)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{hdfs.MetaRack: "/dc1/rack-a", hdfs.MetaDiskTotal: "2199023255552", hdfs.MetaDiskUsed: "1099511627776",
		hdfs.MetaBlockCount: "5000", hdfs.MetaVersion: "3.3.6", hdfs.MetaStatus: "NORMAL", hdfs.MetaDataPort: dn.portNumber()}
	for k, v := range want {
		if in.Metadata.Get(k) != v {
			t.Errorf("metadata %s = %q, want %q", k, in.Metadata.Get(k), v)
		}
	}

	dn.do(t, "/sim/stop")
	stopped := time.Now()
	seen := waitStatus(t, c, dnApp, id, heureka.StatusDown, 15*time.Second)
	if took := seen.Sub(stopped); took > downBound {
		t.Errorf("DOWN seen %v after the daemon stopped; want ≤ %v", took, downBound)
	} else {
		t.Logf("daemon stopped → DOWN in %v", took.Round(time.Millisecond))
	}

	dn.do(t, "/sim/start")
	restarted := time.Now()
	seen = waitStatus(t, c, dnApp, id, heureka.StatusUp, 15*time.Second)
	if took := seen.Sub(restarted); took > downBound {
		t.Errorf("UP seen %v after the daemon came back", took)
	} else {
		t.Logf("daemon back → UP in %v", took.Round(time.Millisecond))
	}

	// Figures changed materially reach the registry too.
	dn.do(t, "/sim/set?used=1200G&version=3.4.1")
	proctest.Eventually(t, 20*time.Second, "the new figures in the registry", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		in, err = c.Instance(ctx, dnApp, id)
		return err == nil && in.Metadata.Get(hdfs.MetaVersion) == "3.4.1" && in.Metadata.Get(hdfs.MetaDiskUsed) == "1288490188800"
	})
}

// TestDaemonKilled: the simulator's process is SIGKILLed → DOWN within
// 3 s; a new process on the same ports → UP.
func TestDaemonKilled(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	dn := startSim(t, "datanode", "--hostname", "dn2.test")
	startAgent(t, reg, "datanode", dn, "dn2.test", "/dc1/rack-b")
	c := newClient(t, reg)
	const id = "prod-dn2.test-dc1.rack-b"
	waitStatus(t, c, dnApp, id, heureka.StatusUp, 20*time.Second)

	dn.Signal(syscall.SIGKILL)
	killed := time.Now()
	if code := dn.Exit(5 * time.Second); code != -1 {
		t.Logf("killed sim exit code %d", code)
	}
	seen := waitStatus(t, c, dnApp, id, heureka.StatusDown, 15*time.Second)
	if took := seen.Sub(killed); took > downBound {
		t.Errorf("DOWN seen %v after SIGKILL; want ≤ %v", took, downBound)
	} else {
		t.Logf("daemon SIGKILLed → DOWN in %v", took.Round(time.Millisecond))
	}

	// The daemon restarts on the same addresses.
	startSim(t, "datanode", "--hostname", "dn2.test", "--listen", dn.http, "--port", dn.port)
	waitStatus(t, c, dnApp, id, heureka.StatusUp, 15*time.Second)
}

// TestAgentSIGTERM: SIGTERM → OUT_OF_SERVICE, then the instance is gone,
// and the agent exits 0.
func TestAgentSIGTERM(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	dn := startSim(t, "datanode", "--hostname", "dn3.test")
	agent := startAgent(t, reg, "datanode", dn, "dn3.test", "/dc1/rack-c", "--drain", "1500ms")
	c := newClient(t, reg)
	const id = "prod-dn3.test-dc1.rack-c"
	waitStatus(t, c, dnApp, id, heureka.StatusUp, 20*time.Second)

	agent.Signal(syscall.SIGTERM)
	sent := time.Now()
	oos := waitStatus(t, c, dnApp, id, heureka.StatusOutOfService, 5*time.Second)
	gone := waitStatus(t, c, dnApp, id, "", 10*time.Second)
	if code := agent.Exit(10 * time.Second); code != 0 {
		t.Errorf("agent exit code %d", code)
	}
	t.Logf("SIGTERM → OUT_OF_SERVICE in %v, gone after %v", oos.Sub(sent).Round(time.Millisecond), gone.Sub(sent).Round(time.Millisecond))
	if d := gone.Sub(oos); d < time.Second {
		t.Errorf("deregistered %v after OUT_OF_SERVICE; the drain is 1.5 s", d)
	}
	for _, want := range []string{"draining: OUT_OF_SERVICE", "deregistered", "agent stopped"} {
		if !strings.Contains(agent.Output(), want) {
			t.Errorf("agent log lacks %q", want)
		}
	}
}

// resolveActive reads the NameNodes from the registry and resolves them.
func resolveActive(t *testing.T, c *client.Client) (hdfs.Resolution, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	apps, err := c.Apps(ctx)
	if err != nil {
		t.Fatalf("reading the registry: %v", err)
	}
	var nns []*heureka.Instance
	for _, a := range apps.Apps {
		if strings.EqualFold(a.Name, nnApp) {
			nns = a.Instances
		}
	}
	return hdfs.ResolveNameNodes(nns)
}

func waitActive(t *testing.T, c *client.Client, host string, bound time.Duration) (time.Time, hdfs.Resolution) {
	t.Helper()
	var seen time.Time
	var res hdfs.Resolution
	proctest.Eventually(t, bound, "the active NameNode to be "+host, func() bool {
		var err error
		seen = time.Now()
		res, err = resolveActive(t, c)
		return err == nil && res.Active != nil && res.Active.HostName == host
	})
	return seen, res
}

// TestNameNodeFailover: two NameNodes with their agents; the active one
// steps down and the standby takes over; the registry resolves the new
// active within a second or so, with the address list active first.
func TestNameNodeFailover(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	nnA := startSim(t, "namenode", "--hostname", "nn-a.test", "--ha-state", "active")
	nnB := startSim(t, "namenode", "--hostname", "nn-b.test", "--ha-state", "standby")
	startAgent(t, reg, "namenode", nnA, "nn-a.test", "/dc1/rack-a")
	startAgent(t, reg, "namenode", nnB, "nn-b.test", "/dc1/rack-b")
	c := newClient(t, reg)

	// Both agents register on their own schedule: wait for the standby too.
	waitStatus(t, c, nnApp, "prod-nn-b.test-dc1.rack-b", heureka.StatusUp, 20*time.Second)
	_, res := waitActive(t, c, "nn-a.test", 20*time.Second)
	if len(res.Addresses) != 2 || res.Addresses[0] != "nn-a.test:"+nnA.portNumber() || res.Addresses[1] != "nn-b.test:"+nnB.portNumber() {
		t.Fatalf("addresses %v", res.Addresses)
	}

	// A failover as ZKFC does it: the active steps down, then the standby
	// is promoted.
	nnA.do(t, "/sim/ha?state=standby")
	nnB.do(t, "/sim/ha?state=active")
	switched := time.Now()
	seen, res := waitActive(t, c, "nn-b.test", 10*time.Second)
	t.Logf("failover → new active resolved in %v", seen.Sub(switched).Round(time.Millisecond))
	if took := seen.Sub(switched); took > downBound {
		t.Errorf("new active resolved after %v", took)
	}
	// Once both agents have reported, the whole resolution is settled.
	proctest.Eventually(t, 10*time.Second, "both agents to report the failover", func() bool {
		var err error
		res, err = resolveActive(t, c)
		return err == nil && res.Conflict == "" && res.Active != nil && res.Active.HostName == "nn-b.test" &&
			len(res.Addresses) > 0 && res.Addresses[0] == "nn-b.test:"+nnB.portNumber() &&
			res.Active.Metadata.Get(hdfs.MetaHATransitionTime) != ""
	})

	// The new active dies: it is DOWN, and no NameNode claims active.
	nnB.Signal(syscall.SIGKILL)
	waitStatus(t, c, nnApp, "prod-nn-b.test-dc1.rack-b", heureka.StatusDown, 10*time.Second)
	if res, err := resolveActive(t, c); heureka.ErrorCode(err) != heureka.ENOTFOUND || res.Active != nil || len(res.NameNodes) != 1 {
		t.Errorf("with the active dead: %+v %v", res, err)
	}
}

// TestTopologyScript runs `heureka topology` as Hadoop would, against
// DataNodes registered by an agent and by hand: one rack per argument in
// order, the default rack for unknown hosts, 100 arguments; then the
// registry is killed and the cache file gives the same answers.
func TestTopologyScript(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	dn := startSim(t, "datanode", "--hostname", "dn-agent.test")
	startAgent(t, reg, "datanode", dn, "dn-agent.test", "/dc2/rack-z")
	c := newClient(t, reg)
	waitStatus(t, c, dnApp, "prod-dn-agent.test-dc2.rack-z", heureka.StatusUp, 20*time.Second)
	for i := range 30 {
		host, rack := fmt.Sprintf("dn%02d.test", i), fmt.Sprintf("/dc1/rack-%d", i%3)
		info := hdfs.NodeInfo{Rack: rack}
		in := &heureka.Instance{ID: hdfs.InstanceID("prod", host, rack), App: dnApp, HostName: host,
			IPAddr: fmt.Sprintf("10.1.0.%d", i), Metadata: info.WriteMetadata(heureka.Metadata{})}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := c.Register(ctx, in); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	want := func(arg string) string {
		var i int
		if n, _ := fmt.Sscanf(arg, "dn%02d.test", &i); n == 1 && i < 30 {
			return fmt.Sprintf("/dc1/rack-%d", i%3)
		}
		if n, _ := fmt.Sscanf(arg, "10.1.0.%d", &i); n == 1 && i < 30 {
			return fmt.Sprintf("/dc1/rack-%d", i%3)
		}
		if arg == "dn-agent.test" {
			return "/dc2/rack-z"
		}
		return hdfs.DefaultRack
	}
	var args []string
	for i := range 100 {
		switch i % 4 {
		case 0:
			args = append(args, fmt.Sprintf("10.1.0.%d", i%40))
		case 1:
			args = append(args, fmt.Sprintf("dn%02d.test", (i*7)%35))
		case 2:
			args = append(args, "dn-agent.test")
		default:
			args = append(args, fmt.Sprintf("unknown-%d.test", i))
		}
	}
	cache := filepath.Join(t.TempDir(), "topology.json")
	topology := func(registryURL string) (string, string) {
		t.Helper()
		cmd := exec.Command(proctest.Bin(t), append([]string{"topology", "--cache", cache, "--timeout", "2s"}, args...)...)
		cmd.Env = append(cmd.Environ(), "HEUREKA_REGISTRY="+registryURL)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("heureka topology: %v (must exit 0)\n%s", err, errb.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("heureka topology hung")
		}
		return out.String(), errb.String()
	}
	check := func(what, out string) {
		t.Helper()
		racks := strings.Fields(out)
		if len(racks) != len(args) || strings.Count(out, "\n") != len(args) {
			t.Fatalf("%s: %d racks for %d arguments", what, len(racks), len(args))
		}
		for i, a := range args {
			if racks[i] != want(a) {
				t.Errorf("%s: %q → %q, want %q", what, a, racks[i], want(a))
			}
		}
	}
	up, _ := topology(reg.URL())
	check("registry up", up)

	reg.Signal(syscall.SIGKILL)
	reg.Exit(5 * time.Second)
	down, stderr := topology(reg.URL())
	check("registry down", down)
	if down != up || !strings.Contains(stderr, "cache file") {
		t.Errorf("registry down: answers differ or no cache notice:\n%s", stderr)
	}
}

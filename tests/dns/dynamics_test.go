package dns_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/proctest"
)

// bound is how long a change may take to show in DNS in these tests: the
// agent's own detection (a process watch for a kill, a probe a second for
// an HA state) plus a loaded machine's slack. The figures are logged;
// the benchmark measures the DNS part alone.
const bound = 3 * time.Second

var simRE = regexp.MustCompile(`heureka sim listening.* http=(\S+) port=(\S+) control=(\S+)`)

// sim is a running `heureka sim` daemon.
type sim struct {
	*proctest.Proc
	http, port, control string
}

func startSim(t *testing.T, role string, args ...string) *sim {
	t.Helper()
	p := proctest.Start(t, "sim "+role, append([]string{"sim", role}, args...)...)
	m := p.WaitFor(simRE, 20*time.Second)
	return &sim{Proc: p, http: m[1], port: m[2], control: m[3]}
}

func (s *sim) portNumber() string { return s.port[strings.LastIndexByte(s.port, ':')+1:] }

// startAgent runs `heureka agent` for d, registering it at ip.
func startAgent(t *testing.T, s *server, role string, d *sim, host, ip, rack string, extra ...string) {
	t.Helper()
	portFlag := "--data-port"
	if role == "namenode" {
		portFlag = "--rpc-port"
	}
	args := []string{"agent", "--role", role, "--cluster", "prod", "--registry", s.URL(), "--jmx", "http://" + d.http,
		portFlag, d.portNumber(), "--host", host, "--ip", ip, "--rack", rack}
	proctest.Start(t, "agent "+host, append(args, extra...)...)
}

// TestDynamics runs a small simulated cluster (`heureka sim` daemons, each
// with its `heureka agent`) and follows it through Go's resolver: a
// DataNode killed is gone from the answer within the agent's process
// watch, a drain (OUT_OF_SERVICE) is gone from the very next answer, and a
// NameNode failover reorders the NameNode name.
func TestDynamics(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s.URL())
	r := goResolver(s.dns)
	lookup := func(name string) []string {
		got, _ := r.LookupHost(ctx(t), name)
		return got
	}
	const dnName, nnName = "hdfs-datanode.prod.service.heureka.", "hdfs-namenode.prod.service.heureka."

	dir := t.TempDir()
	var dns []*sim
	for i := 1; i <= 3; i++ {
		pid := filepath.Join(dir, fmt.Sprintf("dn%d.pid", i))
		host := fmt.Sprintf("dn%d.test", i)
		d := startSim(t, "datanode", "--hostname", host, "--pid-file", pid)
		startAgent(t, s, "datanode", d, host, fmt.Sprintf("127.0.1.%d", i), "/dc1/rack-a", "--pid-file", pid, "--up-after", "300ms")
		dns = append(dns, d)
	}
	nnA := startSim(t, "namenode", "--hostname", "nn-a.test", "--ha-state", "active")
	nnB := startSim(t, "namenode", "--hostname", "nn-b.test", "--ha-state", "standby")
	startAgent(t, s, "namenode", nnA, "nn-a.test", "127.0.2.1", "/dc1/rack-a", "--up-after", "300ms")
	startAgent(t, s, "namenode", nnB, "nn-b.test", "127.0.2.2", "/dc1/rack-b", "--up-after", "300ms")

	began := time.Now()
	proctest.Eventually(t, 30*time.Second, "all three DataNodes and both NameNodes in DNS", func() bool {
		return len(lookup(dnName)) == 3 && slices.Equal(lookup(nnName), []string{"127.0.2.1", "127.0.2.2"})
	})
	t.Logf("cluster up in DNS after %v", time.Since(began).Round(time.Millisecond))
	if got := lookup("dc1.rack-a.rack.hdfs-datanode.prod.service.heureka."); len(got) != 3 {
		t.Errorf("rack /dc1/rack-a: %v; want the three DataNodes", got)
	}

	// A DataNode killed.
	dns[0].Signal(syscall.SIGKILL)
	killed := time.Now()
	var gone time.Duration
	proctest.Eventually(t, 15*time.Second, "the killed DataNode to leave the answer", func() bool {
		gone = time.Since(killed)
		return !slices.Contains(lookup(dnName), "127.0.1.1")
	})
	t.Logf("DataNode SIGKILLed → gone from DNS in %v", gone.Round(time.Millisecond))
	if gone > bound {
		t.Errorf("the killed DataNode left the answer after %v; want ≤ %v", gone, bound)
	}

	// A drain: gone from the very next answer.
	id := "prod-dn2.test-dc1.rack-a"
	if err := c.SetStatus(ctx(t), "HDFS-DATANODE.PROD", id, heureka.StatusOutOfService); err != nil {
		t.Fatal(err)
	}
	if got := lookup(dnName); !slices.Equal(got, []string{"127.0.1.3"}) {
		t.Errorf("the answer right after the drain of dn2: %v; want [127.0.1.3]", got)
	}

	// A failover as ZKFC does it: the active steps down, the standby is
	// promoted; each agent reports at its next probe.
	switched := time.Now()
	for sim, st := range map[*sim]string{nnA: "standby", nnB: "active"} {
		run(t, "curl", "-sSf", "-X", "POST", "http://"+sim.control+"/sim/ha?state="+st)
	}
	var took time.Duration
	// Both agents report on their own probe: done once the plain name lists
	// the new active first and the active name holds it alone.
	proctest.Eventually(t, 15*time.Second, "the new active first, and alone active", func() bool {
		took = time.Since(switched)
		return slices.Equal(lookup(nnName), []string{"127.0.2.2", "127.0.2.1"}) &&
			slices.Equal(lookup("active.hdfs-namenode.prod.service.heureka."), []string{"127.0.2.2"})
	})
	t.Logf("NameNode failover → new order in DNS in %v", took.Round(time.Millisecond))
	if took > bound {
		t.Errorf("the failover reordered the answer after %v; want ≤ %v", took, bound)
	}
	if got := lookup("standby.hdfs-namenode.prod.service.heureka."); !slices.Equal(got, []string{"127.0.2.1"}) {
		t.Errorf("standby.: %v; want [127.0.2.1]", got)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka/ctl"
	"github.com/heureka-project/heureka/internal/proctest"
)

// TestDemo runs `heureka demo` on free ports: three peers serve the
// dashboard, the simulated nodes register through their agents, a killed
// DataNode shows DOWN, a NameNode failover shows, and Ctrl-C (the context)
// stops everything.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole demo cluster")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut proctest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--base-port", "0", "--datanodes", "3", "--cluster", "try"}, &out, &errOut)
	}()
	proctest.Eventually(t, 60*time.Second, "the demo's introduction", func() bool { return strings.Contains(out.String(), "Ctrl-C stops everything") })
	intro := out.String()
	dash := regexp.MustCompile(`Dashboard:\s+(http://127\.0\.0\.1:\d+)/`).FindStringSubmatch(intro)
	reg := regexp.MustCompile(`export HEUREKA_REGISTRY=(\S+)`).FindStringSubmatch(intro)
	kill := regexp.MustCompile(`curl -X POST (http://\S+)/stop`).FindStringSubmatch(intro)
	failover := regexp.MustCompile(`curl -X POST '(http://\S+/ha\?state=active)'`).FindStringSubmatch(intro)
	if dash == nil || reg == nil || kill == nil || failover == nil {
		t.Fatalf("the introduction lacks the dashboard, registry or commands:\n%s", intro)
	}
	for _, want := range []string{"SIMULATED", "heureka status set try-dn1.try-dc1.rack-a OUT_OF_SERVICE", "nn1", "dn3"} {
		if !strings.Contains(intro, want) {
			t.Errorf("the introduction lacks %q:\n%s", want, intro)
		}
	}
	resp, err := http.Get(dash[1] + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("dashboard: %v %v", err, resp)
	}
	resp.Body.Close()

	t.Setenv("HEUREKA_REGISTRY", reg[1])
	if code, stdout, _ := runCLI(t, "apps"); code != 0 || !regexp.MustCompile(`HDFS-DATANODE.TRY\s+3\s+3\s`).MatchString(stdout) ||
		!regexp.MustCompile(`HDFS-NAMENODE.TRY\s+2\s+2\s`).MatchString(stdout) {
		t.Errorf("apps: %d\n%s", code, stdout)
	}
	// Every peer has everything, once replication (asynchronous, retried
	// while a peer is still starting) has run.
	for _, base := range strings.Split(reg[1], ",") {
		proctest.Eventually(t, 15*time.Second, "every DataNode UP on "+base, func() bool {
			code, stdout, _ := runCLI(t, "instances", "hdfs-datanode.try", "--registry", base)
			return code == 0 && strings.Count(stdout, " UP ") == 3
		})
	}

	// Kill dn2: DOWN. Fail over: nn2 active.
	if resp, err := http.Post(kill[1]+"/stop", "", nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("stop dn2: %v %v", err, resp)
	}
	proctest.Eventually(t, 10*time.Second, "dn2 to show DOWN", func() bool {
		_, stdout, _ := runCLI(t, "instances", "hdfs-datanode.try", "--status", "DOWN")
		return strings.Contains(stdout, "try-dn2.try-dc1.rack-b  DOWN")
	})
	if resp, err := http.Post(failover[1], "", nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("failover: %v %v", err, resp)
	}
	proctest.Eventually(t, 10*time.Second, "nn2 to show active", func() bool {
		_, stdout, _ := runCLI(t, "show", "try-nn2.try-dc1.rack-b")
		return regexp.MustCompile(`role state\s+active \(leads its cluster\)`).MatchString(stdout)
	})

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("demo exited %d:\n%s", code, errOut.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the demo did not stop")
	}
	if !strings.Contains(out.String(), "nothing is left running") {
		t.Errorf("no goodbye:\n%s", out.String())
	}
	if _, err := http.Get(dash[1] + "/healthz"); err == nil {
		t.Error("a registry server still answers after the demo stopped")
	}
	if _, err := http.Post(kill[1]+"/start", "", nil); err == nil {
		t.Error("a simulator still answers after the demo stopped")
	}
}

// TestDemoRoles runs `heureka demo --roles` as a process: every member of
// the simulated YARN, HBase, Elasticsearch, ZooKeeper and Kafka clusters
// the introduction lists registers, through its agent, with the role
// state the simulator reports; the ResourceManager failover the
// introduction prints shows on the registry and in DNS
// (active.yarn-resourcemanager.CLUSTER.service.heureka, asked with Go's
// own resolver); SIGINT stops it all with exit code 0.
func TestDemoRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole demo cluster and five others")
	}
	p := proctest.Start(t, "heureka demo --roles", "demo", "--base-port", "0", "--datanodes", "1", "--cluster", "try", "--roles")
	p.WaitFor(regexp.MustCompile(`Ctrl-C stops everything`), 90*time.Second)
	intro := p.Output()
	reg := regexp.MustCompile(`export HEUREKA_REGISTRY=(\S+)`).FindStringSubmatch(intro)
	dns := regexp.MustCompile(`DNS:\s+dig @127\.0\.0\.1 -p (\d+) `).FindStringSubmatch(intro)
	failover := regexp.MustCompile(`curl -X POST '(http://\S+/sim/role\?member=rm2&state=active)'`).FindStringSubmatch(intro)
	members := regexp.MustCompile(`(?m)^  (yarn|hbase|elasticsearch|zookeeper|kafka) +(\S+) +(\S+) +(\S+) +(\S+) +127\.0\.0\.1:\d+$`).FindAllStringSubmatch(intro, -1)
	if reg == nil || dns == nil || failover == nil || len(members) != 16 || !strings.Contains(intro, "SIMULATED") {
		t.Fatalf("the introduction lacks the registry, DNS, the RM failover or the 16 members:\n%s", intro)
	}
	t.Setenv("HEUREKA_REGISTRY", reg[1])
	state := func(app, host string) string {
		_, stdout, _ := runCLI(t, "instances", app, "-o", "json")
		var views []ctl.View
		_ = json.Unmarshal([]byte(stdout), &views)
		for _, v := range views {
			if v.HostName == host {
				return string(v.Status) + " " + v.RoleState
			}
		}
		return "not registered"
	}
	for _, m := range members {
		app, host, want := m[3]+".try", m[2]+".try", "UP "+m[5]
		if got := state(app, host); got != want {
			t.Errorf("%s in %s: %s, want %s (as the simulator reports)", host, app, got, want)
		}
	}

	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, "127.0.0.1:"+dns[1])
	}}
	activeRM := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, srvs, err := resolver.LookupSRV(ctx, "", "", "active.yarn-resourcemanager.try.service.heureka")
		if err != nil || len(srvs) != 1 {
			return fmt.Sprintf("%v %v", srvs, err)
		}
		return srvs[0].Target
	}
	if got := activeRM(); got != "rm1.try." {
		t.Errorf("DNS's active ResourceManager before the failover: %s, want rm1.try.", got)
	}
	if resp, err := http.Post(failover[1], "", nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("failover: %v %v", err, resp)
	}
	proctest.Eventually(t, 10*time.Second, "rm2 active, rm1 standby in the registry", func() bool {
		return state("yarn-resourcemanager.try", "rm2.try") == "UP active" && state("yarn-resourcemanager.try", "rm1.try") == "UP standby"
	})
	proctest.Eventually(t, 10*time.Second, "DNS's active ResourceManager to be rm2", func() bool { return activeRM() == "rm2.try." })

	p.Signal(syscall.SIGINT)
	if code := p.Exit(40 * time.Second); code != 0 || !strings.Contains(p.Output(), "nothing is left running") {
		t.Errorf("demo --roles exited %d after SIGINT, output:\n%s", code, p.Output())
	}
}

func TestDemoCommandLine(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"demo", "--datanodes", "0"}, "--datanodes"},
		{[]string{"demo", "--cluster", "a.b"}, "--cluster"},
		{[]string{"demo", "--base-port", "70000"}, "--base-port"},
		{[]string{"demo", "now"}, "unexpected argument"},
	} {
		if code, _, stderr := runCLI(t, c.args...); code != 2 || !strings.Contains(stderr, c.stderr) {
			t.Errorf("heureka %q: exit %d, stderr %q", c.args, code, stderr)
		}
	}
}

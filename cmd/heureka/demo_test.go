package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

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
		return regexp.MustCompile(`ha state\s+active`).MatchString(stdout)
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

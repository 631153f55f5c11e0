package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the benchmark's agent process too
// (startAgent re-executes it with helperEnv set).
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		args := os.Args[1:]
		if i := slices.Index(args, "--"); i >= 0 {
			args = args[i+1:]
		}
		os.Exit(helperMain(args))
	}
	os.Exit(m.Run())
}

// runTiny runs the driver in tiny mode with the given changes to the plan
// and returns its results and the report it wrote.
func runTiny(t *testing.T, only string, edit func(*plan)) (*results, string) {
	t.Helper()
	p, err := DefaultPlan("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	r := &runner{plan: p, repo: "..", log: &log, only: only, command: "go test"}
	res, err := r.run(ctx)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	t.Log("\n" + log.String())
	out := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := writeReport(out, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestTiny runs every workload against heureka alone, small: N = 200,
// W = 20, no slow scenario. It checks that each produced real numbers
// and that the report and its charts were written.
func TestTiny(t *testing.T) {
	res, report := runTiny(t, "", nil)
	if len(res.Storm) != 1 || res.Storm[0].Skipped != "" || res.Storm[0].Done != 200 || res.Storm[0].Errors != 0 {
		t.Errorf("storm: %+v", res.Storm)
	}
	for _, s := range res.Steady {
		if s.Skipped != "" || s.Sent == 0 || s.Failed != 0 || s.RSS == 0 {
			t.Errorf("steady %s: %+v", s.System, s)
		}
	}
	for _, p := range res.Prop {
		if p.Skipped != "" || p.Lat.Missed != 0 || p.Lat.N != 20*res.Plan.Rounds {
			t.Errorf("propagation %s: %+v", p.System, p)
		}
	}
	ran := 0
	for _, f := range res.Failures {
		switch {
		case f.Scenario == "silent":
			if f.Skipped == "" {
				t.Errorf("silent host loss ran in tiny mode")
			}
		case f.Skipped != "" || f.Lat.Missed != 0 || f.Lat.N == 0:
			t.Errorf("failure %s/%s: %+v", f.System, f.Scenario, f)
		default:
			ran++
			// The agent reports a dead daemon within about 1.25 s; a
			// watching client hears it at once.
			if f.Lat.Max > 10*time.Second {
				t.Errorf("failure %s/%s took %v", f.System, f.Scenario, f.Lat.Max)
			}
		}
	}
	if ran != 3 {
		t.Errorf("%d fast failure scenarios ran, want 3", ran)
	}
	for _, want := range []string{"## Targets from the issues", "## 1. Registration storm", "## 2. Steady state",
		"## 3. Propagation", "## 4. Failure scenarios", "benchmarks/storm.png"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestTinyPeers runs the storm and propagation workloads against etcd and
// ZooKeeper too. Without their packages it skips, unless CI=true, where
// they must be installed (apt-get install etcd-server zookeeper).
func TestTinyPeers(t *testing.T) {
	if !haveEtcd() || !haveZooKeeper() {
		msg := "etcd-server and zookeeper are not installed (apt-get install etcd-server zookeeper)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	res, _ := runTiny(t, "storm,propagation", func(p *plan) { p.Peers = true })
	if len(res.Missing) > 0 {
		t.Fatalf("peers missing: %v", res.Missing)
	}
	for _, s := range res.Storm {
		if s.Skipped != "" || s.Done != 200 {
			t.Errorf("storm %s: %+v", s.System, s)
		}
	}
	if len(res.Storm) != 3 {
		t.Errorf("storm ran %d systems, want 3", len(res.Storm))
	}
	for _, p := range res.Prop {
		if p.Skipped != "" || p.Lat.Missed != 0 {
			t.Errorf("propagation %s: %+v", p.System, p)
		}
	}
}

func TestSummarize(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := summarize(d, 2)
	if s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond || s.N != 100 || s.Missed != 2 {
		t.Errorf("summarize = %+v", s)
	}
}

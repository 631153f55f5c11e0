package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/ctl"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server/servertest"
)

func TestOperatorCommands(t *testing.T) {
	s := servertest.Open(t, nil)
	reg := servertest.URL(s)
	dn1 := testDataNode("dn1.example.com", "/dc1/rack-a", 41, 120_034, 300)
	dn2 := testDataNode("dn2.example.com", "/dc1/rack-b", 93, 220_710, 300)
	orders := &heureka.Instance{ID: "orders-1", App: "ORDERS", HostName: "o1", IPAddr: "10.2.0.1", Status: heureka.StatusOutOfService}
	for _, in := range []*heureka.Instance{dn1, dn2, orders} {
		servertest.Register(t, s, in)
	}
	t.Setenv("HEUREKA_REGISTRY", reg)

	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr []string
	}{
		{[]string{"apps"}, 0, []string{"APP", "HDFS-DATANODE.PROD  2 ", "ORDERS"}, nil},
		{[]string{"instances", "hdfs-datanode.prod"}, 0,
			[]string{"ID", "LAST RENEWAL", dn1.ID + "  UP      /dc1/rack-a  41.0%  120034  3.3.6", "93.0%"}, nil},
		{[]string{"instances", "hdfs-datanode.prod", "--status", "UP", "-o", "json"}, 0, []string{`"diskPercent": 93`}, nil},
		{[]string{"instances", "nope"}, 3, nil, []string{`application "NOPE" has no instances`, "heureka apps"}},
		{[]string{"instances"}, 2, nil, []string{"exactly one application"}},
		{[]string{"instances", "a", "b"}, 2, nil, []string{"exactly one application"}},
		{[]string{"instances", "x", "-o", "yaml"}, 2, nil, []string{"table or json"}},
		{[]string{"instances", "x", "--status", "SLEEPY"}, 2, nil, []string{"unknown status"}},
		{[]string{"show", dn2.ID}, 0, []string{"rack", "/dc1/rack-b", "93.0%", "metadata.block_count", "220710"}, nil},
		{[]string{"show", "no-such-node"}, 3, nil, []string{`instance "no-such-node" is not registered`}},
		{[]string{"status", "set", dn1.ID, "out_of_service"}, 0, []string{"status OUT_OF_SERVICE (was UP)", "heureka status clear"}, nil},
		{[]string{"show", dn1.ID}, 0, []string{"OUT_OF_SERVICE (override set by an operator"}, nil},
		{[]string{"status", "clear", dn1.ID, "--value", "UP"}, 0, []string{"override cleared; status UP"}, nil},
		{[]string{"status", "clear", dn1.ID}, 0, []string{"has no status override; status stays UP"}, nil},
		{[]string{"status", "set", dn1.ID, "SLEEPY"}, 2, nil, []string{"unknown status"}},
		{[]string{"status", "set", "ghost", "UP"}, 3, nil, []string{"not registered"}},
		{[]string{"status", "pause", dn1.ID}, 2, nil, []string{"want set or clear"}},
		{[]string{"status"}, 2, nil, []string{"status set ID STATUS"}},
		{[]string{"deregister", "orders-1"}, 0, []string{"ORDERS/orders-1: deregistered"}, nil},
		{[]string{"deregister", "orders-1"}, 3, nil, []string{"not registered"}},
		{[]string{"apps", "--registry", "http://127.0.0.1:1/eureka"}, 1, nil,
			[]string{"cannot reach the registry at http://127.0.0.1:1/eureka", "is `heureka server` running? set --registry or HEUREKA_REGISTRY"}},
		{[]string{"show", "x", "--registry", "http://127.0.0.1:1/eureka"}, 1, nil, []string{"cannot reach the registry"}},
		{[]string{"apps", "--registry", "127.0.0.1:8761"}, 2, nil, []string{"not a URL like"}},
		{[]string{"apps", "extra"}, 2, nil, []string{`unexpected argument "extra"`}},
		{[]string{"help", "instances"}, 0, []string{"Exit codes: 0 ok, 1 failure", "3 not found", "-registry"}, nil},
		{[]string{"deregister", "-h"}, 0, nil, []string{"OUT_OF_SERVICE", "Exit codes"}},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		ok := code == c.code
		for _, w := range c.stdout {
			ok = ok && strings.Contains(stdout, w)
		}
		for _, w := range c.stderr {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("heureka %q: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, stdout with %q, stderr with %q",
				c.args, code, stdout, stderr, c.code, c.stdout, c.stderr)
		}
	}

	// -o json is machine-readable on every listing.
	var apps []ctl.AppSummary
	if code, out, _ := runCLI(t, "apps", "-o", "json"); code != 0 || json.Unmarshal([]byte(out), &apps) != nil || len(apps) != 1 ||
		apps[0].App != "HDFS-DATANODE.PROD" || apps[0].Statuses[heureka.StatusUp] != 2 {
		t.Errorf("apps -o json: %d %s", code, out)
	}
	var ins []ctl.View
	if code, out, _ := runCLI(t, "instances", "HDFS-DATANODE.PROD", "--output=json"); code != 0 || json.Unmarshal([]byte(out), &ins) != nil ||
		len(ins) != 2 || ins[0].ID != dn1.ID || ins[0].Rack != "/dc1/rack-a" || ins[0].Blocks != 120_034 || *ins[0].DiskPercent != 41 ||
		ins[0].Version != "3.3.6" || ins[0].LastRenewal == nil {
		t.Errorf("instances -o json: %d %s", code, out)
	}
	var one ctl.View
	if code, out, _ := runCLI(t, "show", "-o", "json", dn2.ID); code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.ID != dn2.ID ||
		one.Metadata.Get("block_count") != "220710" {
		t.Errorf("show -o json: %d %s", code, out)
	}
}

func TestStreamsNeedHeureka(t *testing.T) {
	code, _, stderr := runCLI(t, "watch", "--registry", "http://127.0.0.1:1/eureka")
	if code != 1 || !strings.Contains(stderr, "cannot reach the registry") {
		t.Errorf("watch without a registry: %d %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "events", "--since", "-5")
	if code != 2 || !strings.Contains(stderr, "--since") {
		t.Errorf("events --since -5: %d %s", code, stderr)
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		code, out, stderr := runCLI(t, "completion", shell)
		if code != 0 {
			t.Fatalf("completion %s: %d %s", shell, code, stderr)
		}
		for _, want := range []string{"apps", "instances", "deregister", "--registry", "--alertmanager", "completion --list ids", "OUT_OF_SERVICE"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s completion lacks %q", shell, want)
			}
		}
		path, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		file := filepath.Join(t.TempDir(), "c."+shell)
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(path, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, msg)
		}
	}
	if code, _, _ := runCLI(t, "completion", "fish"); code != 2 {
		t.Errorf("completion fish: exit %d, want 2", code)
	}

	// Dynamic lists come from the registry.
	s := servertest.Open(t, nil)
	dn := testDataNode("dn1.example.com", "/r1", 1, 1, 300)
	servertest.Register(t, s, dn)
	t.Setenv("HEUREKA_REGISTRY", servertest.URL(s))
	if code, out, _ := runCLI(t, "completion", "--list", "ids"); code != 0 || strings.TrimSpace(out) != dn.ID {
		t.Errorf("completion --list ids: %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "completion", "--list", "apps"); code != 0 || strings.TrimSpace(out) != "hdfs-datanode.prod" {
		t.Errorf("completion --list apps: %d %q", code, out)
	}

	// Bash completes an instance ID after `status set`.
	bash, err := exec.LookPath("bash")
	if err != nil {
		return
	}
	bin := proctest.Bin(t)
	script := `source <("$BIN" completion bash)
heureka() { "$BIN" "$@"; }
COMP_WORDS=(heureka status set "")
COMP_CWORD=3
_heureka
printf '%s\n' "${COMPREPLY[@]}"
COMP_WORDS=(heureka ins)
COMP_CWORD=1
_heureka
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), "BIN="+bin, "HEUREKA_REGISTRY="+servertest.URL(s))
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != dn.ID+"\ninstances\n" {
		t.Errorf("bash completion: %v %q", err, out)
	}
}

// TestExitCodesOfTheBinary checks that the process itself exits 3 and 1.
func TestExitCodesOfTheBinary(t *testing.T) {
	bin := proctest.Bin(t)
	s := servertest.Open(t, nil)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"show", "ghost", "--registry", servertest.URL(s)}, 3},
		{[]string{"apps", "--registry", "http://127.0.0.1:1/eureka"}, 1},
		{[]string{"apps", "--bogus"}, 2},
		{[]string{"apps", "--registry", servertest.URL(s)}, 0},
	} {
		err := exec.Command(bin, c.args...).Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("heureka %q: exit %d, want %d", c.args, code, c.code)
		}
	}
}

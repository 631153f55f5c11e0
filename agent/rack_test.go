package agent

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

func TestTableRack(t *testing.T) {
	const table = `# host rack
10.0.0.1   /dc1/rack-a
dn2.example.net /dc1/rack-b

three columns here   ignored
10.0.0.1 /first-wins-not
dn3 rack-c/
10.0.0.9 /default-rack
`
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"10.0.0.1", "dn1.example.net"}, "/dc1/rack-a"},
		{[]string{"10.0.0.2", "dn2.example.net"}, "/dc1/rack-b"},
		{[]string{"10.0.0.3", "DN2.example.net"}, heureka.DefaultRack}, // exact strings, as Hadoop
		{[]string{"dn3"}, "/rack-c"},
		{[]string{"10.0.0.9", "dn2.example.net"}, "/dc1/rack-b"}, // a default rack does not win
		{nil, heureka.DefaultRack},
	} {
		got, err := TableRack(strings.NewReader(table), c.names...)
		if err != nil || got != c.want {
			t.Errorf("TableRack(%q) = %q, %v; want %q", c.names, got, err, c.want)
		}
	}
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "topology.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScriptRack(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A script in Hadoop's documented style: one rack per argument.
	byIP := writeScript(t, `for a in "$@"; do case "$a" in 10.1.*) echo /dc1/rack-1;; *) echo /default-rack;; esac; done`)
	byName := writeScript(t, `for a in "$@"; do case "$a" in dn*) printf '/dc2/%s ' "$a";; *) printf '/default-rack ';; esac; done`)
	for _, c := range []struct {
		script string
		names  []string
		want   string
	}{
		{byIP, []string{"10.1.2.3", "dn1"}, "/dc1/rack-1"},
		{byIP, []string{"10.2.2.3", "dn1"}, heureka.DefaultRack},
		{byName, []string{"10.2.2.3", "dn1"}, "/dc2/dn1"},
		{byName, []string{"", ""}, heureka.DefaultRack},
	} {
		got, err := ScriptRack(ctx, c.script, c.names...)
		if err != nil || got != c.want {
			t.Errorf("%s %q = %q, %v; want %q", filepath.Base(c.script), c.names, got, err, c.want)
		}
	}
	for name, body := range map[string]string{
		"wrong count": `echo /a /b /c`,
		"exit 1":      `echo /a; echo broken >&2; exit 1`,
	} {
		if _, err := ScriptRack(ctx, writeScript(t, body), "10.0.0.1"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ScriptRack(ctx, "/nonexistent/script", "x"); err == nil {
		t.Error("missing script: no error")
	}
}

func TestFindRack(t *testing.T) {
	table := filepath.Join(t.TempDir(), "topology.table")
	if err := os.WriteFile(table, []byte("10.0.0.1 /dc1/rack-a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rack, table, script, want string
	}{
		{"/given", "", "", "/given"},
		{"", table, "", "/dc1/rack-a"},
		{"", "", "", ""},
	} {
		got, err := FindRack(context.Background(), c.rack, c.table, c.script, "10.0.0.1", "dn1")
		if err != nil || got != c.want {
			t.Errorf("FindRack(%q, %q, %q) = %q, %v; want %q", c.rack, c.table, c.script, got, err, c.want)
		}
	}
	if _, err := FindRack(context.Background(), "", table+".missing", "", "10.0.0.1"); err == nil || !strings.Contains(err.Error(), "topology table") {
		t.Errorf("a missing table: %v", err)
	}
}

func TestHostIP(t *testing.T) {
	if ip, err := HostIP(context.Background(), "10.0.0.7"); err != nil || ip != "10.0.0.7" {
		t.Errorf("HostIP of an address = %q, %v", ip, err)
	}
	// localhost resolves from /etc/hosts, without a network.
	if ip, err := HostIP(context.Background(), "localhost"); err != nil || !net.ParseIP(ip).IsLoopback() {
		t.Errorf("HostIP(localhost) = %q, %v", ip, err)
	}
	if _, err := HostIP(context.Background(), "no-such-host.invalid"); err == nil {
		t.Error("an unresolvable host gave no error")
	}
}

// TestIdentify: what is given stays, the rest is found (this machine's
// host name, the name's address, the rack from the topology table by
// address), and a rack given twice is refused.
func TestIdentify(t *testing.T) {
	table := filepath.Join(t.TempDir(), "topology.table")
	if err := os.WriteFile(table, []byte("127.0.0.1 /dc1/rack-lo\n10.0.0.9 /dc1/rack-b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := Config{Host: "localhost"}
	if err := Identify(ctx, &cfg, table, ""); err != nil || cfg.IPAddr != "127.0.0.1" || cfg.Rack != "/dc1/rack-lo" {
		t.Errorf("Identify(localhost, table) = %+v, %v; want 127.0.0.1 in /dc1/rack-lo", cfg, err)
	}
	cfg = Config{Host: "dn9", IPAddr: "10.0.0.9"}
	if err := Identify(ctx, &cfg, table, ""); err != nil || cfg.Host != "dn9" || cfg.Rack != "/dc1/rack-b" {
		t.Errorf("Identify(dn9 10.0.0.9, table) = %+v, %v; want the given host in /dc1/rack-b", cfg, err)
	}
	host, _ := os.Hostname()
	cfg = Config{IPAddr: "10.0.0.1", Rack: "/given"}
	if err := Identify(ctx, &cfg, "", ""); err != nil || cfg.Host != host || cfg.Rack != "/given" {
		t.Errorf("Identify(no host, a rack) = %+v, %v; want host %q in /given", cfg, err, host)
	}
	cfg = Config{Host: "dn1", IPAddr: "10.0.0.1", Rack: "/given"}
	if err := Identify(ctx, &cfg, table, ""); err == nil || !strings.Contains(err.Error(), "give at most one") {
		t.Errorf("a rack and a table: %v, want refused", err)
	}
}

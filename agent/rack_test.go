package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/hdfs"
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
		{[]string{"10.0.0.3", "DN2.example.net"}, hdfs.DefaultRack}, // exact strings, as Hadoop
		{[]string{"dn3"}, "/rack-c"},
		{[]string{"10.0.0.9", "dn2.example.net"}, "/dc1/rack-b"}, // a default rack does not win
		{nil, hdfs.DefaultRack},
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
		{byIP, []string{"10.2.2.3", "dn1"}, hdfs.DefaultRack},
		{byName, []string{"10.2.2.3", "dn1"}, "/dc2/dn1"},
		{byName, []string{"", ""}, hdfs.DefaultRack},
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

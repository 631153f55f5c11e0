package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedDocsAreCurrent regenerates the man pages from the commands'
// own flags and compares them with the committed copies under packaging/, so
// that they cannot drift from the binary. (The completions are not
// committed: the package build writes them from the binary.)
func TestGeneratedDocsAreCurrent(t *testing.T) {
	t.Setenv("HEUREKA_REGISTRY", "") // defaults shown in help read it
	root := filepath.Join("..", "..", "packaging")
	want := map[string]string{}
	for name, page := range manPages(context.Background()) {
		want[filepath.Join("man", name)] = page
	}

	committed, _ := filepath.Glob(filepath.Join(root, "man", "*.1"))
	for _, p := range committed {
		if rel, _ := filepath.Rel(root, p); want[rel] == "" {
			t.Errorf("packaging/%s is no longer generated (no such command); run scripts/gen-docs", rel)
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(want)) {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Errorf("packaging/%s: %v; run scripts/gen-docs", rel, err)
			continue
		}
		if string(got) != want[rel] {
			t.Errorf("packaging/%s differs from what the binary generates; run scripts/gen-docs\n%s", rel, lineDiff(t, string(got), want[rel]))
		}
	}
}

// lineDiff shows how committed differs from generated: diff -u when the
// machine has diff, else the first line that differs.
func lineDiff(t *testing.T, committed, generated string) string {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "committed"), filepath.Join(dir, "generated")
	if os.WriteFile(a, []byte(committed), 0o644) == nil && os.WriteFile(b, []byte(generated), 0o644) == nil {
		if out, err := exec.Command("diff", "-u", a, b).CombinedOutput(); len(out) > 0 && err != nil {
			return string(out)
		}
	}
	cl, gl := strings.Split(committed, "\n"), strings.Split(generated, "\n")
	for i := range max(len(cl), len(gl)) {
		var c, g string
		if i < len(cl) {
			c = cl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if c != g {
			return fmt.Sprintf("line %d:\n-%s\n+%s", i+1, c, g)
		}
	}
	return ""
}

// TestManPageShape: a command's page has every section, each of its flags
// with its help, and the subcommands' own flags (auth hash's --cost).
func TestManPageShape(t *testing.T) {
	pages := manPages(context.Background())
	server := pages["heureka-server.1"]
	for _, want := range []string{".TH HEUREKA-SERVER 1", ".SH NAME\nheureka\\-server \\- run the Eureka\\-compatible registry server",
		".SH SYNOPSIS\nheureka server [flags]", ".SH DESCRIPTION", ".SH OPTIONS", `.BI "\-\-listen" " address"`,
		"TCP address to serve the Eureka API on", ".SH EXIT STATUS", ".SH SEE ALSO\n.BR heureka (1)"} {
		if !strings.Contains(server, want) {
			t.Errorf("heureka-server.1 lacks %q:\n%s", want, server)
		}
	}
	if auth := pages["heureka-auth.1"]; !strings.Contains(auth, ".SS heureka auth hash\n") || !strings.Contains(auth, `"\-\-cost"`) {
		t.Errorf("heureka-auth.1 lacks auth hash's --cost:\n%s", auth)
	}
	index := pages["heureka.1"]
	for name := range commands {
		if _, ok := pages["heureka-"+name+".1"]; !ok {
			t.Errorf("no page for command %s", name)
		}
		if !strings.Contains(index, ".BR heureka\\-"+strings.ReplaceAll(name, "-", `\-`)+" (1)") {
			t.Errorf("heureka.1 does not list %s", name)
		}
	}
	if groff, err := exec.LookPath("groff"); err == nil {
		dir := t.TempDir()
		for name, page := range pages {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", p).CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Errorf("groff -man -ww on %s: %v\n%s", name, err, out)
			}
		}
	} else {
		t.Log("groff is not installed: pages not rendered")
	}
}

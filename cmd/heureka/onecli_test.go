package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/heureka-project/heureka/ctl"
)

// helpOf is what `heureka ARGS... -h` prints, and its exit code.
func helpOf(t *testing.T, args ...string) (string, int) {
	t.Helper()
	code, out, errs := runCLI(t, append(args, "-h")...)
	return out + errs, code
}

// everyHelp is the help of every command and subcommand, by command line.
func everyHelp(t *testing.T) map[string]string {
	t.Helper()
	pages := map[string]string{}
	for name := range commands {
		pages[name], _ = helpOf(t, name)
	}
	for _, sub := range [][]string{{"hadoop", "hdfs-site"}, {"hadoop", "hosts"}, {"auth", "hash"}, {"auth", "token"}, {"auth", "check"}} {
		pages[strings.Join(sub, " ")], _ = helpOf(t, sub...)
	}
	return pages
}

// TestOneCLI: every command that reads the registry takes the same
// connection flags, with the same help, and the registry's default said
// once; every help page spells flags as its usage lines do (--name, -n)
// and ends with exit codes that apply to it.
func TestOneCLI(t *testing.T) {
	t.Setenv(registryEnv, "")
	pages := everyHelp(t)
	var registryHelp string
	for _, name := range []string{"apps", "instances", "show", "status", "deregister", "watch", "events", "pick",
		"hadoop hdfs-site", "hadoop hosts", "topology", "alert", "gateway"} {
		page := pages[name]
		for _, f := range []string{"--registry URLs", "--timeout duration", "--ca-file file", "--cert-file file", "--key-file file"} {
			if !strings.Contains(page, "\n  "+f+"\n") {
				t.Errorf("heureka %s -h lacks %s:\n%s", name, f, page)
			}
		}
		_, after, _ := strings.Cut(page, "\n  --registry URLs\n")
		line, _, _ := strings.Cut(after, "\n")
		if registryHelp == "" {
			registryHelp = line
		}
		if line != registryHelp || strings.Count(line, ctl.DefaultURL) != 1 {
			t.Errorf("heureka %s: --registry's help %q; want %q, the default said once", name, line, registryHelp)
		}
	}

	longOneDash := regexp.MustCompile(`(?m)^  -[A-Za-z0-9][A-Za-z0-9-]+\b|[\[ ]-[a-z][a-z-]+\b`)
	for name, page := range pages {
		if m := longOneDash.FindString(strings.ReplaceAll(page, "dfsadmin -refreshNodes", "")); m != "" { // Hadoop's own flag
			t.Errorf("heureka %s -h writes a long flag with one dash, %q:\n%s", name, m, page)
		}
		if !strings.Contains(page, "Exit codes: 0 ") {
			t.Errorf("heureka %s -h gives no exit codes:\n%s", name, page)
		}
	}
	for _, name := range []string{"demo", "gateway", "server", "agent", "sim", "alert"} {
		if page := pages[name]; !strings.HasSuffix(page, exitsProgram+"\n") || strings.Contains(page, "not found") {
			t.Errorf("heureka %s -h: want the exit codes of a program that runs until a signal:\n%s", name, page)
		}
	}
	if c := (&connFlags{}).config(); !slices.Equal(c.URLs, []string{ctl.DefaultURL}) {
		t.Errorf("with neither --registry nor $%s the registry is %v, want %s", registryEnv, c.URLs, ctl.DefaultURL)
	}
}

// TestCLIHelpAndVersion: --version, version --help and auth check -h do
// what they say; a mistyped flag is said once, without the whole help.
func TestCLIHelpAndVersion(t *testing.T) {
	_, version, _ := runCLI(t, "version")
	if code, out, errs := runCLI(t, "--version"); code != 0 || out != version || !strings.HasPrefix(out, "heureka ") {
		t.Errorf("--version: exit %d %q %q; want %q", code, out, errs, version)
	}
	for _, args := range [][]string{{"version", "--help"}, {"version", "-h"}, {"auth", "check", "-h"}, {"auth", "token", "--help"}} {
		if code, out, errs := runCLI(t, args...); code != 0 || !strings.Contains(out+errs, "Usage: heureka "+args[0]) {
			t.Errorf("%q: exit %d %q %q; want its help", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, "version", "extra"); code != 2 || !strings.Contains(errs, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d %q", code, errs)
	}
	code, out, errs := runCLI(t, "instances", "x", "--ouput", "json")
	if code != 2 || out != "" || strings.Count(errs, "ouput") != 1 || strings.Contains(errs, "Usage:") ||
		!strings.Contains(errs, "see 'heureka instances -h'") {
		t.Errorf("a mistyped flag: exit %d, stderr:\n%s\nwant its error once, pointing at -h, without the help", code, errs)
	}
}

package manpage

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const help = "Usage: heureka status set ID STATUS [flags]\n" +
		"       heureka status clear ID [flags]\n\n" +
		"Sets an override.\n\n\nSecond paragraph.\n\n" +
		"Flags:\n  -registry URLs\n    \tregistry base URLs\n  -timeout duration\n    \thow long\n    \tone call may take\n\n" +
		"Exit codes: 0 ok, 1 failure,\n3 not found.\n"
	d := Parse(help)
	if strings.Join(d.Usage, "|") != "heureka status set ID STATUS [flags]|heureka status clear ID [flags]" {
		t.Errorf("usage %q", d.Usage)
	}
	if strings.Join(d.Description, "|") != "Sets an override.||Second paragraph." {
		t.Errorf("description %q", d.Description)
	}
	if len(d.Flags) != 2 || d.Flags[0] != (Flag{"registry", "URLs", "registry base URLs"}) ||
		d.Flags[1] != (Flag{"timeout", "duration", "how long one call may take"}) {
		t.Errorf("flags %+v", d.Flags)
	}
	if d.Exit != "0 ok, 1 failure, 3 not found." {
		t.Errorf("exit %q", d.Exit)
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"--flag":     `\-\-flag`,
		`a\b`:        `a\eb`,
		"café":       `caf\[u00E9]`,
		".starts":    `\&.starts`,
		"'quoted'":   `\&'quoted'`,
		"plain text": "plain text",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

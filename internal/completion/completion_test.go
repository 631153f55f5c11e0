package completion

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScripts: both scripts name every command and its flags, quote a
// summary with a quote in it, and parse in their shell where it is
// installed.
func TestScripts(t *testing.T) {
	specs := []Spec{
		{Name: "instances", Summary: "list an application's instances", Flags: []string{"--registry", "-o"}},
		{Name: "status", Summary: "set or clear the operator's override", Flags: []string{"--value"}},
	}
	for shell, script := range map[string]string{"bash": Bash(specs), "zsh": Zsh(specs)} {
		for _, want := range []string{"instances", "status", "--registry", "-o", "--value", "completion --list", "OUT_OF_SERVICE"} {
			if !strings.Contains(script, want) {
				t.Errorf("%s script lacks %q", shell, want)
			}
		}
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("%s is not installed: its script is not parsed", shell)
			continue
		}
		file := filepath.Join(t.TempDir(), "c."+shell)
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(path, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, msg)
		}
	}
}

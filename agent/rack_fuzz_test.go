package agent

import (
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

// FuzzTableRack feeds arbitrary topology table files: it must never panic,
// always answer a rack in Hadoop's form (a leading slash), and find a
// name that a line maps to a rack.
func FuzzTableRack(f *testing.F) {
	f.Add("10.0.0.1 /dc1/rack1\n# comment\n\nhost-a /rack2\n", "10.0.0.1")
	f.Add("10.0.0.1\t/r1 extra\nbad\n10.0.0.1 /r2\n", "10.0.0.1")
	f.Add("h1 rack-without-slash\r\nh2 //double//slashes//\n", "h1")
	f.Add(strings.Repeat("x", 70000)+" /r\n", "x")
	f.Fuzz(func(t *testing.T, table, name string) {
		rack, err := TableRack(strings.NewReader(table), name)
		if err != nil {
			if !strings.Contains(err.Error(), "topology table") {
				t.Fatalf("error %v does not say what it was reading", err)
			}
			return
		}
		if !strings.HasPrefix(rack, "/") {
			t.Fatalf("rack %q for %q is not in Hadoop's /rack form", rack, name)
		}
		if rack != heureka.NormalizeRack(rack) {
			t.Fatalf("rack %q is not normalised", rack)
		}
	})
}

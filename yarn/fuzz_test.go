package yarn

import (
	"path/filepath"
	"testing"
)

func FuzzParseClusterInfo(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		f.Add(readFile(f, file[len("testdata/"):]))
	}
	for _, s := range []string{"", "null", `{"clusterInfo":null}`, `{"clusterInfo":{"state":"STARTED","startedOn":1e999}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rm, err := ParseClusterInfo(b)
		if err != nil {
			return
		}
		if _, ok := ParseHAState(string(rm.HAState)); rm.HAState != "" && !ok {
			t.Fatalf("HA state %q", rm.HAState)
		}
		if ok, cause := rm.Health(); !ok && cause == "" {
			t.Fatal("unhealthy without a cause")
		}
	})
}

func FuzzParseConfProperty(f *testing.F) {
	f.Add(readFile(f, "own/conf-cluster-id.json"))
	f.Add([]byte(`{"property":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseConfProperty(b, ClusterIDKey)
	})
}

package elasticsearch

import (
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		f.Add(readFile(f, file[len("testdata/"):]))
	}
	f.Add([]byte(`{"nodes":{"a":{"version":"1","http":{"publish_address":"/:"}}}}`))
}

func FuzzParseNodesLocal(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseNodesLocal(b)
		if err == nil && (n.ID == "" || n.HTTPAddr == "") {
			t.Fatalf("%+v", n)
		}
	})
}

func FuzzParseHealth(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var n Node
		if ParseHealth(b, &n) == nil && n.Status != Green && n.Status != Yellow && n.Status != Red {
			t.Fatalf("status %q", n.Status)
		}
	})
}

func FuzzParseMasterNode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		n := Node{ID: "x", Roles: []string{"data"}}
		if ParseMasterNode(b, &n) == nil {
			if ok, cause := n.Health(); !ok && cause == "" {
				t.Fatal("unhealthy without a cause")
			}
		}
	})
}

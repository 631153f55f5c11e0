package hdfs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/heureka-project/heureka"
)

// addJMXSeeds seeds a fuzz target with every payload in testdata (and the
// shared recordings when present) plus a few hand-made edge cases.
func addJMXSeeds(f *testing.F) {
	f.Helper()
	for _, pattern := range []string{"testdata/*/*.json", sharedFixtures + "/*.json"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) <= 64<<10 {
				f.Add(b)
			}
		}
	}
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `{"beans":null}`, `{"beans":[null]}`,
		`{"beans":[{"name":"Hadoop:service=DataNode,name=DataNodeInfo","VolumeInfo":"{\"/a\":{\"numBlocks\":9223372036854775807},\"/b\":{\"numBlocks\":1}}"}]}`,
		`{"beans":[{"name":"Hadoop:service=DataNode,name=DataNodeInfo","VolumeInfo":"[NaN]","BPServiceActorInfo":"[null,{}]","NamenodeAddresses":"{\"a\":1}"}]}`,
		`{"beans":[{"name":"Hadoop:service=NameNode,name=NameNodeInfo","LiveNodes":"{\"a\":null}","DeadNodes":"[]","NameDirStatuses":"{\"active\":[]}","Total":1e400}]}`,
		`{"name":"Hadoop:service=NameNode,name=NameNodeStatus","State":-Infinity,"HostAndPort":"[::1]:8020"}`,
		`{"result":"ERROR"}`, `"NaN`, `{"a":"\`, `-Infinity`, `{"beans":[{"name":"Hadoop:service=DataNode,name=FSDatasetState-","Capacity":-1}]}`,
	} {
		f.Add([]byte(s))
	}
}

func FuzzParseDataNodeJMX(f *testing.F) {
	addJMXSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDataNodeJMX(bytes.NewReader(b))
		if err != nil {
			return
		}
		if d.BlockCountKnown && d.BlockCount < 0 {
			t.Errorf("negative block count %d", d.BlockCount)
		}
		if d.DataPort < 0 || d.DataPort > 65535 || d.RPCPort < 0 || d.RPCPort > 65535 {
			t.Errorf("ports %d %d", d.DataPort, d.RPCPort)
		}
		_ = d.NodeInfo().WriteMetadata(heureka.Metadata{})
	})
}

func FuzzParseNameNodeJMX(f *testing.F) {
	addJMXSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseNameNodeJMX(bytes.NewReader(b))
		if err != nil {
			return
		}
		if n.RPCPort < 0 || n.RPCPort > 65535 {
			t.Errorf("port %d", n.RPCPort)
		}
		ni := n.NodeInfo()
		if _, ok := ParseHAState(string(ni.HAState)); ni.HAState != "" && !ok {
			t.Errorf("NodeInfo carries unknown HA state %q", ni.HAState)
		}
		_ = ni.WriteMetadata(heureka.Metadata{})
	})
}

// FuzzSanitizeJSON checks that the sanitiser leaves JSON it need not touch
// alone, and that its output is valid whenever the input was valid apart
// from the tokens it replaces.
func FuzzSanitizeJSON(f *testing.F) {
	addJMXSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		out := sanitizeJSON(b)
		if json.Valid(b) && !bytes.Equal(out, b) {
			t.Fatalf("valid JSON changed: %q → %q", b, out)
		}
		if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) && !bytes.Equal(out, b) {
			t.Fatalf("input without tokens changed: %q → %q", b, out)
		}
	})
}

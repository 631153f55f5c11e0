package hbase

import (
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		f.Add(readFile(f, file[len("testdata/"):]))
	}
	f.Add([]byte(`{"beans":[{"name":null}]}`))
}

func FuzzParseMaster(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMaster(b)
		if err == nil && (m.ServerName == "" || m.NumRegionServers < 0) {
			t.Fatalf("%+v", m)
		}
	})
}

func FuzzParseRegionServer(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseRegionServer(b)
		if err == nil && (rs.ServerName == "" || rs.RegionCount < 0) {
			t.Fatalf("%+v", rs)
		}
	})
}

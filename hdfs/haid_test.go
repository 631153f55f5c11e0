package hdfs

import (
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

// confJSON is a /conf?format=json answer in the shape
// Configuration.dumpConfiguration writes, for an HA pair nn1, nn2 of
// nameservice "prod" and a second nameservice "backup".
const confJSON = `{"properties":[
{"key":"dfs.nameservices","value":"prod, backup","isFinal":false,"resource":"hdfs-site.xml"},
{"key":"dfs.ha.namenodes.prod","value":"nn1,nn2","isFinal":false,"resource":"hdfs-site.xml"},
{"key":"dfs.namenode.rpc-address.prod.nn1","value":"nn-a.example.com:8020","isFinal":false,"resource":"hdfs-site.xml"},
{"key":"dfs.namenode.rpc-address.prod.nn2","value":"NN-B.example.com:8020","isFinal":false,"resource":"hdfs-site.xml"},
{"key":"dfs.ha.namenodes.backup","value":"bk1","isFinal":false,"resource":"hdfs-site.xml"},
{"key":"dfs.namenode.rpc-address.backup.bk1","value":"nn-c.example.com","isFinal":false,"resource":"hdfs-site.xml"},
{"key":"hadoop.security.authentication","value":"simple","isFinal":false,"resource":"core-default.xml"}
]}`

func TestNameNodeIdentity(t *testing.T) {
	conf, err := ParseConfJSON(strings.NewReader(confJSON))
	if err != nil {
		t.Fatal(err)
	}
	if conf["dfs.ha.namenodes.prod"] != "nn1,nn2" || len(conf) != 7 {
		t.Fatalf("conf = %v", conf)
	}
	for self, want := range map[string]string{
		"nn-a.example.com:8020": "prod nn1",
		"nn-b.example.com:8020": "prod nn2", // host names compare in any case
		"nn-c.example.com:8020": "backup bk1",
	} {
		ns, id, err := NameNodeIdentity(conf, self)
		if err != nil || ns+" "+id != want {
			t.Errorf("%s: %q %q %v, want %s", self, ns, id, err, want)
		}
	}
	_, _, err = NameNodeIdentity(conf, "nn-a.example.com:9000") // the port counts
	wantCode(t, err, heureka.ENOTFOUND)
	_, _, err = NameNodeIdentity(conf, "nn-a.example.com")
	wantCode(t, err, heureka.EINVALID)

	// Set explicitly, as Hadoop allows.
	explicit := map[string]string{"dfs.nameservices": "prod", "dfs.ha.namenode.id": "nn9"}
	if ns, id, err := NameNodeIdentity(explicit, "anything:1"); err != nil || ns != "prod" || id != "nn9" {
		t.Errorf("explicit: %q %q %v", ns, id, err)
	}
	// Two IDs with one address: Hadoop refuses to start.
	twice := map[string]string{"dfs.nameservices": "p", "dfs.ha.namenodes.p": "a,b",
		"dfs.namenode.rpc-address.p.a": "h:1", "dfs.namenode.rpc-address.p.b": "h:1"}
	_, _, err = NameNodeIdentity(twice, "h:1")
	wantCode(t, err, heureka.EINVALID)
	// An ID heureka could not write back is refused.
	dotted := map[string]string{"dfs.nameservices": "p", "dfs.ha.namenodes.p": "n.1", "dfs.namenode.rpc-address.p.n.1": "h:1"}
	_, _, err = NameNodeIdentity(dotted, "h:1")
	wantCode(t, err, heureka.EINVALID)
	// Not HA: no ID.
	_, _, err = NameNodeIdentity(map[string]string{"fs.defaultFS": "hdfs://h:8020"}, "h:8020")
	wantCode(t, err, heureka.ENOTFOUND)
}

func TestParseConfJSONErrors(t *testing.T) {
	for _, body := range []string{``, `{}`, `[]`, `{"properties":{}}`, `<configuration/>`, `{"properties":[`} {
		_, err := ParseConfJSON(strings.NewReader(body))
		wantCode(t, err, heureka.EINVALID)
	}
	conf, err := ParseConfJSON(strings.NewReader(`{"properties":[{"key":"a"},{"value":"b"},{"key":"c","value":"d"}]}`))
	if err != nil || len(conf) != 1 || conf["c"] != "d" {
		t.Errorf("partial properties: %v %v", conf, err)
	}
	_, err = ParseConfJSON(strings.NewReader(`{"properties":[` + strings.Repeat(" ", MaxConfBytes) + `]}`))
	wantCode(t, err, heureka.ETOOLARGE)
}

func TestNameNodeIdentityMetadata(t *testing.T) {
	md := NodeInfo{Nameservice: "prod", NameNodeID: "nn1"}.WriteMetadata(heureka.Metadata{})
	if md.Get(MetaNameservice) != "prod" || md.Get(MetaNameNodeID) != "nn1" {
		t.Fatalf("metadata %v", md)
	}
	back, err := ReadNodeInfo(md)
	if err != nil || back.Nameservice != "prod" || back.NameNodeID != "nn1" {
		t.Errorf("read back %+v %v", back, err)
	}
	bad, err := ReadNodeInfo(md.With(MetaNameNodeID, "nn 1"))
	wantCode(t, err, heureka.EINVALID)
	if bad.NameNodeID != "" || bad.Nameservice != "prod" {
		t.Errorf("a bad ID is dropped, the rest kept: %+v", bad)
	}
	// A fresh NodeInfo without them removes them.
	if md := (NodeInfo{}).WriteMetadata(md); md.Get(MetaNameNodeID) != "" {
		t.Errorf("stale namenode_id kept: %v", md)
	}
}

func FuzzParseConfJSON(f *testing.F) {
	for _, s := range []string{confJSON, ``, `{}`, `{"properties":null}`, `{"properties":[null,{"key":1}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		conf, err := ParseConfJSON(strings.NewReader(string(b)))
		if err != nil {
			if heureka.ErrorCode(err) == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, self := range []string{"h:1", "nn-a.example.com:8020"} {
			ns, id, err := NameNodeIdentity(conf, self)
			if err == nil && (!ValidHAID(ns) || !ValidHAID(id)) {
				t.Fatalf("identity %q %q is not valid", ns, id)
			}
		}
	})
}

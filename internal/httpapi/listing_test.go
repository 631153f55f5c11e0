package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// membersOf counts the members of gzip stream b and returns its content.
// gzip.Reader reads a bytes.Reader (an io.ByteReader) no further than the
// member it decodes, so Reset continues at the next one.
func membersOf(t *testing.T, b []byte) (int, []byte) {
	t.Helper()
	rd := bytes.NewReader(b)
	zr, err := gzip.NewReader(rd)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n := 0
	for {
		zr.Multistream(false)
		if _, err := io.Copy(&out, zr); err != nil {
			t.Fatalf("member %d: %v", n, err)
		}
		n++
		err := zr.Reset(rd)
		if err == io.EOF {
			return n, out.Bytes()
		}
		if err != nil {
			t.Fatalf("after member %d: %v", n, err)
		}
	}
}

// TestListingsAreTheEncodersBytes: every listing the server assembles from
// blocks (full, delta, one application; JSON and XML; gzip or not) is
// byte for byte what the eureka encoders write for the same snapshot, with
// an exact Content-Length, gzip only when asked for, and, for a registry
// larger than a block, several gzip members.
func TestListingsAreTheEncodersBytes(t *testing.T) {
	ts := newTestServer(t)
	for i := range 3*registry.BlockSize + 17 {
		in := &heureka.Instance{
			ID: fmt.Sprintf("dn-%04d", i), App: "HDFS-DATANODE", HostName: fmt.Sprintf("dn%d.example", i), IPAddr: "10.0.0.1",
			Status: heureka.StatusUp, Port: heureka.Port{Number: 9866, Enabled: true},
			Metadata: heureka.MetadataOf(map[string]string{"rack": "/r" + strconv.Itoa(i%5), "odd": "<&\"'>\u2028", "a_b$c": "x"}),
		}
		in.Normalize()
		if err := ts.reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"nn1", "nn2"} {
		in := &heureka.Instance{ID: id, App: "HDFS-NAMENODE", HostName: id, IPAddr: "10.0.0.2", Status: heureka.StatusStarting}
		in.Normalize()
		if err := ts.reg.Register(in, false); err != nil {
			t.Fatal(err)
		}
	}
	// Changes after the first reads: a block is re-encoded, the delta moves.
	check := func(round int) {
		snap := ts.reg.Snapshot()
		app, _ := snap.App("HDFS-DATANODE")
		cases := []struct {
			path string
			want func(eureka.Format) []byte
		}{
			{"/eureka/apps/", func(f eureka.Format) []byte { return eureka.EncodeApplications(f, snap.Apps()) }},
			{"/eureka/apps/delta", func(f eureka.Format) []byte { return eureka.EncodeApplications(f, snap.Delta()) }},
			{"/eureka/apps/HDFS-DATANODE", func(f eureka.Format) []byte { return eureka.EncodeApplication(f, app) }},
		}
		for _, c := range cases {
			for _, f := range []eureka.Format{eureka.JSON, eureka.XML} {
				want := c.want(f)
				for _, gz := range []bool{true, false} {
					hdr := []string{"Accept", f.ContentType()}
					if gz {
						hdr = append(hdr, "Accept-Encoding", "gzip")
					}
					r := ts.expect(200, "GET", c.path, nil, hdr...)
					name := fmt.Sprintf("round %d: %s %s gzip=%v", round, c.path, f, gz)
					if r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
						t.Errorf("%s: Content-Length %s for %d bytes", name, r.header.Get("Content-Length"), len(r.body))
					}
					if got := r.header.Get("Content-Encoding") == "gzip"; got != gz {
						t.Errorf("%s: Content-Encoding %q", name, r.header.Get("Content-Encoding"))
					}
					body := r.body
					if gz {
						n, plain := membersOf(t, r.body)
						if n < 4 {
							t.Errorf("%s: %d gzip members, want one per block and more", name, n)
						}
						body = plain
					}
					if !bytes.Equal(body, want) {
						t.Errorf("%s: %d bytes differ from the encoder's %d", name, len(body), len(want))
					}
				}
			}
		}
		if s := ts.reg.Snapshot(); s.Version != snap.Version {
			t.Fatalf("the registry changed during the reads")
		}
	}
	check(0)
	if err := ts.reg.UpdateMetadata("HDFS-DATANODE", "dn-0200", map[string]string{"rack": "/moved"}); err != nil {
		t.Fatal(err)
	}
	if err := ts.reg.Cancel(registry.CancelRequest{App: "HDFS-DATANODE", ID: "dn-0003"}); err != nil {
		t.Fatal(err)
	}
	check(1)
}

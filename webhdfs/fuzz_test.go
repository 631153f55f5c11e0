package webhdfs_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/webhdfs"
)

// FuzzRequest: whatever the request line, the gateway answers; what it
// refuses is a RemoteException; and no path with a "." or ".." component
// ever reaches the NameNode.
func FuzzRequest(f *testing.F) {
	for _, seed := range [][3]string{
		{"GET", "/webhdfs/v1/a/b", "op=GETFILESTATUS"},
		{"PUT", "/webhdfs/v1/a", "op=create&overwrite=true"},
		{"GET", "/webhdfs/v1/a/../b", "op=OPEN"},
		{"PUT", "/webhdfs/v1/a", "op=RENAME"},
		{"POST", "/webhdfs/v1/", "op=APPEND&excludedatanodes=1.2.3.4:9866"},
		{"DELETE", "/webhdfs/v1/x", "op=DELETE&recursive=true"},
		{"GET", "/other", "op=OPEN"},
		{"GET", "/webhdfs/v1/a", "op=%zz"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	var leaked atomic.Value
	leaked.Store("")
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for part := range strings.SplitSeq(r.URL.Path, "/") {
			if part == "." || part == ".." {
				leaked.Store(r.URL.Path)
			}
		}
		w.Write([]byte(`{"boolean":true}`))
	}))
	defer nn.Close()
	cfg := webhdfs.DefaultConfig()
	cfg.Cluster = "prod"
	cfg.ProbeTimeout = 0
	_, p, _ := net.SplitHostPort(nn.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	cfg.NameNodes = func() []*heureka.Instance {
		return []*heureka.Instance{node("nn1", heureka.StatusUp, hdfs.NodeInfo{HAState: hdfs.HAActive, HTTPPort: port})}
	}
	cfg.DataNodes = func() []*heureka.Instance { return nil }
	g, err := webhdfs.New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method, path, query string) {
		switch method {
		case "GET", "PUT", "POST", "DELETE", "HEAD", "OPTIONS":
		default:
			method = "GET"
		}
		req := &http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: query}, Header: http.Header{},
			Body: http.NoBody, RemoteAddr: "127.0.0.1:1234"}
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if p := leaked.Load().(string); p != "" {
			t.Fatalf("path %q reached the NameNode", p)
		}
		if rec.Code >= 400 && rec.Code != 404 || rec.Code == 404 && !strings.HasPrefix(path, webhdfs.Prefix) {
			var e struct {
				RemoteException struct{ Exception, Message string }
			}
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.RemoteException.Exception == "" || e.RemoteException.Message == "" {
				t.Fatalf("%s %q ?%q: %d without a RemoteException: %s", method, path, query, rec.Code, rec.Body)
			}
		}
	})
}

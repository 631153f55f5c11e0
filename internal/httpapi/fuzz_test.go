package httpapi_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
)

// FuzzRequest sends arbitrary requests straight to the handler and checks
// the two promises every malformed request relies on: the answer is never
// a 5xx, and a refused request (4xx) changes nothing.
func FuzzRequest(f *testing.F) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	cfg := httpapi.DefaultConfig()
	cfg.WriteRate = 0
	api := newAPI(f, cfg, reg, slog.New(slog.DiscardHandler))
	api.CloseStreams() // watch requests answer and end at once

	good := newInst("ORDERS", "o1")
	for _, s := range []struct {
		method, path, ctype, enc, extra string
		body                            []byte
	}{
		{"POST", "/eureka/apps/ORDERS", "application/json", "", "", good.json()},
		{"POST", "/eureka/v2/apps/orders", "application/xml", "", "", good.xml()},
		{"POST", "/eureka/apps/ORDERS", "application/json", "gzip", "", gz(good.json())},
		{"PUT", "/eureka/apps/ORDERS/o1?status=UP&lastDirtyTimestamp=1717171717000", "", "", "", nil},
		{"PUT", "/eureka/apps/ORDERS/o1", "", "", "true", nil},
		{"PUT", "/eureka/apps/ORDERS/o1/status?value=OUT_OF_SERVICE&lastDirtyTimestamp=1", "", "", "", nil},
		{"DELETE", "/eureka/apps/ORDERS/o1/status?value=UP", "", "", "", nil},
		{"PUT", "/eureka/apps/ORDERS/o1/metadata?rack=%2Fr1&k=%FF", "", "", "", nil},
		{"DELETE", "/eureka/apps/ORDERS/o1", "", "", "", nil},
		{"POST", "/eureka/peerreplication/batch", "application/json", "", "",
			[]byte(`{"replicationList":[{"appName":"ORDERS","id":"o1","action":"StatusUpdate","status":"DOWN","lastDirtyTimestamp":2}]}`)},
		{"GET", "/v1/watch?since=0&app=ORDERS", "", "", "", nil},
		{"GET", "/eureka/apps/delta", "", "", "", nil},
		{"POST", "/eureka/apps/ORDERS", "application/json", "", "", []byte(`{"instance":{"app":"ORDERS","hostName":"\xff"}}`)},
	} {
		f.Add(s.method, s.path, s.ctype, s.enc, s.extra, s.body)
	}
	f.Fuzz(func(t *testing.T, method, path, ctype, enc, replication string, body []byte) {
		req, err := http.NewRequest(method, "http://heureka"+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Accept", "application/json")
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		if replication != "" {
			req.Header.Set("x-netflix-discovery-replication", replication)
		}
		before := reg.Snapshot().Version
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", method, path, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && reg.Snapshot().Version != before {
			t.Fatalf("%s %q was refused (%d %s) but changed the registry", method, path, rec.Code, rec.Body)
		}
	})
}

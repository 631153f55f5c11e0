package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/heureka-project/heureka/server"
)

// countingProxy stands in front of a real server, counting the requests
// that pass by "METHOD path". With noLookup it answers GET /v1/instances
// with 404, as a server without the lookup (plain Eureka) does.
type countingProxy struct {
	*httptest.Server
	mu       sync.Mutex
	seen     map[string]int
	noLookup bool
}

func newCountingProxy(t *testing.T, s *server.Server, noLookup bool) *countingProxy {
	target, err := url.Parse("http://" + s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &countingProxy{seen: map[string]int{}, noLookup: noLookup}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen[r.Method+" "+r.URL.Path]++
		p.mu.Unlock()
		if p.noLookup && r.URL.Path == "/v1/instances" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *countingProxy) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[key]
}

// TestInstancesByHost: --host is answered by the server's host lookup,
// without reading the application, and the same from a server without
// the lookup by filtering the application here.
func TestInstancesByHost(t *testing.T) {
	s := openServerWith(t, nil)
	const n = 200
	var ids []string
	for i := range n {
		dn := testDataNode(fmt.Sprintf("dn%03d.example.com", i), "/dc1/rack-a", 50, 1000, 300)
		dn.IPAddr = fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		mustRegister(t, s, dn)
		ids = append(ids, dn.ID)
	}
	const app = "HDFS-DATANODE.PROD"
	// dn007 by its name in another case, dn042 by its address.
	hosts := "DN007.example.com, 10.1.0.43"
	want := ids[7] + "," + ids[42]

	for _, noLookup := range []bool{false, true} {
		p := newCountingProxy(t, s, noLookup)
		reg := p.URL + "/eureka"
		code, out, errOut := runCLI(t, "instances", "hdfs-datanode.prod", "--host", hosts, "-o", "json", "--registry", reg)
		var views []instanceView
		if code != 0 || json.Unmarshal([]byte(out), &views) != nil {
			t.Fatalf("noLookup=%v: exit %d\n%s\n%s", noLookup, code, out, errOut)
		}
		var got []string
		for _, v := range views {
			got = append(got, v.ID)
			if v.LastRenewal == nil || v.Rack != "/dc1/rack-a" {
				t.Errorf("noLookup=%v: %s without its renewal or rack: %+v", noLookup, v.ID, v)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("noLookup=%v: instances %v, want %s", noLookup, got, want)
		}
		lookups, appReads := p.count("GET /v1/instances"), p.count("GET /eureka/apps/"+app)
		if noLookup {
			if lookups != 1 || appReads != 1 {
				t.Errorf("without the lookup: %d lookups, %d application reads; want one of each (the fallback)", lookups, appReads)
			}
			continue
		}
		if lookups != 1 || appReads != 0 || p.count("GET /v1/replication/apps/"+app) != 0 {
			t.Errorf("with the lookup: requests %v; want one lookup and no read of the whole application", p.seen)
		}
		if live := p.count("GET /eureka/apps/"+app+"/"+ids[7]) + p.count("GET /eureka/apps/"+app+"/"+ids[42]); live != 2 {
			t.Errorf("with the lookup: %d single-instance reads for live renewals, want 2; requests %v", live, p.seen)
		}

		code, _, errOut = runCLI(t, "instances", app, "--host", "nowhere.example.com", "--registry", reg)
		if code != exitNotFound || !strings.Contains(errOut, "no instances on nowhere.example.com") {
			t.Errorf("an unknown host: exit %d, stderr %q; want %d naming the host", code, errOut, exitNotFound)
		}
	}

	for _, bad := range []string{",", " , "} {
		if code, _, errOut := runCLI(t, "instances", app, "--host", bad); code != 2 || !strings.Contains(errOut, "--host") {
			t.Errorf("--host %q: exit %d, stderr %q; want 2", bad, code, errOut)
		}
	}
}

package ctl

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/server/servertest"
)

// openConn connects to registry URLs as the CLI does.
func openConn(t *testing.T, urls ...string) *Conn {
	t.Helper()
	cfg := DefaultConfig()
	cfg.URLs = urls
	c, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// node is an HDFS daemon as its agent registers it, in cluster prod.
type node struct {
	role       hdfs.Role
	host, ip   string
	rack       string
	status     heureka.Status // UP when empty
	ha         hdfs.HAState
	haTime     int64
	adminState hdfs.AdminState
	usedPct    int64 // of 1 TiB; 0: no disk figures
	dataPort   int
}

func (n node) instance() *heureka.Instance {
	const total = 1 << 40
	info := hdfs.NodeInfo{Rack: n.rack, HAState: n.ha, HATransitionTime: n.haTime, Status: string(n.adminState),
		DataPort: n.dataPort, Version: "3.3.6"}
	if n.role == hdfs.RoleNameNode {
		info.RPCPort = 8020
	}
	if n.usedPct > 0 {
		info.DiskUsed, info.DiskTotal, info.BlockCount = total*n.usedPct/100, total, 1000
	}
	st := n.status
	if st == "" {
		st = heureka.StatusUp
	}
	return &heureka.Instance{
		ID: hdfs.InstanceID("prod", n.host, n.rack), App: strings.ToUpper(hdfs.AppName(n.role, "prod")),
		HostName: n.host, IPAddr: n.ip, Status: st,
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 1, DurationSecs: 300},
		Metadata: info.WriteMetadata(heureka.Metadata{}),
	}
}

// cluster runs a registry with nodes registered, and returns it and a
// connection to it.
func cluster(t *testing.T, nodes ...node) (*server.Server, *Conn) {
	t.Helper()
	s := servertest.Open(t, nil)
	for _, n := range nodes {
		servertest.Register(t, s, n.instance())
	}
	return s, openConn(t, servertest.URL(s))
}

// output collects what a command writes.
type output struct{ w, notes bytes.Buffer }

func (o *output) out(asJSON bool) Output { return Output{W: &o.w, Notes: &o.notes, JSON: asJSON} }

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

// member is a daemon of another role as its agent registers it in
// cluster prod: UP on port 2181 unless status says otherwise, in role
// state state (none when ""), with more metadata in kv.
func member(role, host, rack, state string, status heureka.Status, kv ...string) *heureka.Instance {
	if status == "" {
		status = heureka.StatusUp
	}
	md := heureka.NewMetadata(append([]string{heureka.MetaRack, rack, heureka.MetaVersion, "3.8.4"}, kv...)...)
	if state != "" {
		md = md.With(heureka.MetaRoleState, state)
	}
	return &heureka.Instance{
		ID: heureka.InstanceID("prod", host, rack), App: strings.ToUpper(heureka.RoleApp(role, "prod")),
		HostName: host, IPAddr: "10.2.0." + host[len(host)-1:], Status: status,
		Port:     heureka.Port{Number: 2181, Enabled: true},
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 1, DurationSecs: 300},
		Metadata: md,
	}
}

package replicationtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/heureka-project/heureka/replication"
)

// MemNetwork connects servers in memory, for tests: each server is an
// http.Handler under a host name, and a transport from one host calls the
// handler of the host a request names, with no sockets. Hosts can be cut
// off (Partition) in both directions at once. It is the in-memory
// counterpart of replication.NewHTTPTransport.
//
// A MemNetwork is safe for concurrent use.
type MemNetwork struct {
	mu    sync.Mutex
	hosts map[string]http.Handler
	cut   map[string]bool
}

// NewMemNetwork returns an empty network.
func NewMemNetwork() *MemNetwork {
	return &MemNetwork{hosts: map[string]http.Handler{}, cut: map[string]bool{}}
}

// Serve puts h on the network as host (host:port, as URLs name it),
// replacing what served there before; a nil h takes the host off, as if
// its process had stopped.
func (n *MemNetwork) Serve(host string, h http.Handler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h == nil {
		delete(n.hosts, host)
		return
	}
	n.hosts[host] = h
}

// Partition cuts host off (on) or reconnects it: while cut off, nothing
// it sends arrives and nothing sent to it does.
func (n *MemNetwork) Partition(host string, on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[host] = on
}

// Transport returns the transport of the server at host.
func (n *MemNetwork) Transport(host string) replication.Transport {
	return memTransport{n: n, from: host}
}

type memTransport struct {
	n    *MemNetwork
	from string
}

// Do serves req with the handler of req.URL.Host, as that server would
// over HTTP, and returns its recorded answer.
func (t memTransport) Do(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	to := req.URL.Host
	t.n.mu.Lock()
	h, ok := t.n.hosts[to]
	cut := t.n.cut[to] || t.n.cut[t.from]
	t.n.mu.Unlock()
	switch {
	case cut:
		return nil, fmt.Errorf("%s %s: %s and %s are partitioned", req.Method, req.URL, t.from, to)
	case !ok:
		return nil, fmt.Errorf("%s %s: connection refused: nothing serves %s", req.Method, req.URL, to)
	}
	in := req.Clone(req.Context())
	in.RemoteAddr = t.from
	in.RequestURI = req.URL.RequestURI()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, in)
	return rec.Result(), nil
}

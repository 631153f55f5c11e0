package replication

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// Transport carries one request from this server to a peer and brings
// back the peer's answer: a batch (POST /peerreplication/batch), the
// registry (GET /apps/), a digest (GET /v1/replication/digest) or one
// application (GET /v1/replication/apps/{APP}). The replicator builds each
// request (URL, credentials, NodeHeader) and reads each answer; the
// transport only moves them. *http.Client is one; NewHTTPTransport builds
// the one servers use, and replicationtest.MemNetwork connects
// replicators in memory for tests.
//
// Do must honour the request's context and be safe for concurrent use.
type Transport interface {
	Do(req *http.Request) (*http.Response, error)
}

// NewHTTPTransport returns the HTTP client replication uses between
// servers: connectTimeout bounds dialling and the TLS handshake,
// requestTimeout a whole call; tlsConfig (nil for the system's roots and no
// client certificate) configures https peers.
func NewHTTPTransport(connectTimeout, requestTimeout time.Duration, tlsConfig *tls.Config) *http.Client {
	return &http.Client{
		Timeout: requestTimeout,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: connectTimeout}).DialContext,
			TLSClientConfig:     tlsConfig,
			TLSHandshakeTimeout: connectTimeout,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

package replication_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

// TestPeerCredentials: every call carries the configured Authorization;
// a peer that refuses it keeps the writes queued, is reported with the
// reason, and gets them once the credentials are right.
func TestPeerCredentials(t *testing.T) {
	var want atomic.Value
	want.Store("Bearer wrong")
	var batches atomic.Int32
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error":"that needs the peer role"}`))
			return
		}
		if strings.HasSuffix(r.URL.Path, "/peerreplication/batch") {
			batches.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"responseList":[{"statusCode":200}]}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer peer.Close()

	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := replication.DefaultConfig()
	cfg.Peers = []string{peer.URL + "/eureka"}
	cfg.NodeID = "me"
	cfg.SyncTimeout = 200 * time.Millisecond
	cfg.AntiEntropyInterval = time.Hour
	cfg.Authorization = func() string { return want.Load().(string) }
	rep, err := replication.New(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetForwarder(rep.Forward)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rep.Run(ctx) }()
	defer func() { cancel(); <-done }()

	if err := reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, 10*time.Second, "the refusal in the peer's status", func() bool {
		st := rep.Status()[0]
		return !st.Reachable && strings.Contains(st.LastError, "refused our credentials") && strings.Contains(st.LastError, "403") && st.Queued == 1
	})
	want.Store("Bearer right")
	proctest.Eventually(t, 10*time.Second, "the queued write delivered", func() bool { return batches.Load() == 1 && rep.Status()[0].Reachable })
}

func TestPeerURLsCarryNoCredentials(t *testing.T) {
	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := replication.DefaultConfig()
	cfg.Peers = []string{"http://peer:s3cret@10.0.0.2:8761/eureka"}
	cfg.NodeID = "me"
	_, err = replication.New(cfg, reg)
	if err == nil || !strings.Contains(err.Error(), "carries credentials") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("peer URL with a password: %v", err)
	}
}

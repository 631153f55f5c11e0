package replication_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/httpapi"
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

// TestSlowAndGarbagePeers: over real HTTP on loopback, a peer that never
// answers and one that answers garbage are each reported, with the reason,
// and neither holds up the writes to a healthy peer.
func TestSlowAndGarbagePeers(t *testing.T) {
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers nothing until the caller gives up
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer slow.Close()
	defer close(stop)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"responseList":[{"statusCode":"two hundred"}`))
	}))
	defer garbage.Close()

	goodReg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	hcfg := httpapi.DefaultConfig()
	hcfg.NodeID = "good"
	api, err := httpapi.New(hcfg, goodReg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer api.CloseStreams()
	good := httptest.NewServer(api.Handler())
	defer good.Close()

	reg, err := registry.New(registry.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := replication.DefaultConfig()
	cfg.Peers = []string{slow.URL + "/eureka", garbage.URL + "/eureka", good.URL + "/eureka"}
	cfg.NodeID = "me"
	cfg.SyncTimeout = 0
	cfg.RequestTimeout = 300 * time.Millisecond
	cfg.AntiEntropyInterval = time.Hour
	cfg.Logger = slog.New(slog.DiscardHandler)
	rep, err := replication.New(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetForwarder(rep.Forward)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rep.Run(ctx) }()
	defer func() { cancel(); <-done }()
	proctest.Eventually(t, 10*time.Second, "ready", rep.Ready)

	has := func(id string) func() bool {
		return func() bool { _, ok := goodReg.Snapshot().Instance("HDFS-DATANODE.PROD", id); return ok }
	}
	if err := reg.Register(dn("a"), false); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, 10*time.Second, "a on the healthy peer", has("a"))
	byURL := func(u string) replication.PeerStatus {
		for _, st := range rep.Status() {
			if st.URL == u+"/eureka" {
				return st
			}
		}
		t.Fatalf("no status for %s", u)
		return replication.PeerStatus{}
	}
	proctest.Eventually(t, 10*time.Second, "the silent peer reported", func() bool {
		st := byURL(slow.URL)
		return !st.Reachable && strings.Contains(st.LastError, "Timeout") && st.Queued == 1
	})
	proctest.Eventually(t, 10*time.Second, "the garbage reported", func() bool {
		st := byURL(garbage.URL)
		return st.Refused >= 1 && st.Resync && strings.Contains(st.LastError, "unusable answer")
	})
	// Both stay stuck; the healthy peer goes on getting every write.
	if err := reg.Register(dn("b"), false); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, 10*time.Second, "b on the healthy peer", has("b"))
	if st := byURL(good.URL); !st.Reachable || st.LastError != "" || st.Refused != 0 {
		t.Fatalf("the healthy peer: %+v", st)
	}
}

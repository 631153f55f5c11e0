package ui

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/httpapi"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/replication"
)

// testServer is the real server wiring (registry, replication, HTTP API),
// as cmd/heureka's Server builds it, on a free loopback port.
type testServer struct {
	URL      string // http://127.0.0.1:PORT
	Registry *registry.Registry
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	rcfg := registry.DefaultConfig()
	rcfg.Logger = logger
	reg, err := registry.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	pcfg := replication.DefaultConfig()
	pcfg.NodeID = "ui-test"
	pcfg.SelfURL = base + "/eureka"
	pcfg.Logger = logger
	rep, err := replication.New(pcfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetForwarder(rep.Forward)
	hcfg := httpapi.DefaultConfig()
	hcfg.NodeID = pcfg.NodeID
	hcfg.Ready = rep.Ready
	hcfg.Status = func() map[string]any {
		return map[string]any{"peers": rep.Status(), "startupSync": rep.SyncResult()}
	}
	api, err := httpapi.New(hcfg, reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 3)
	go func() { _ = reg.Run(ctx); done <- struct{}{} }()
	go func() { _ = rep.Run(ctx); done <- struct{}{} }()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		done <- struct{}{}
	}()
	t.Cleanup(func() {
		api.CloseStreams()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		cancel()
		for range 3 {
			<-done
		}
	})
	return &testServer{URL: base, Registry: reg}
}

// newClient returns a Eureka client for ts.
func (ts *testServer) newClient(t *testing.T) *client.Client {
	t.Helper()
	cfg := client.DefaultConfig()
	cfg.URLs, cfg.Rounds, cfg.Logger = []string{ts.URL + "/eureka"}, 1, slog.New(slog.DiscardHandler)
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// dataNode returns a DataNode's registration with HDFS metadata.
func dataNode(cluster, host, rack string, usedPct int64, blocks int64) *heureka.Instance {
	const total = 4 << 40 // 4 TiB
	md := hdfs.NodeInfo{Rack: rack, DiskUsed: total * usedPct / 100, DiskTotal: total, BlockCount: blocks,
		Version: "3.3.6", Status: string(hdfs.AdminNormal), DataPort: 9866}.WriteMetadata(nil)
	return &heureka.Instance{
		ID:         hdfs.InstanceID(cluster, host, rack),
		App:        hdfs.AppName(hdfs.RoleDataNode, cluster),
		HostName:   host,
		IPAddr:     "10.0.0.1",
		Status:     heureka.StatusUp,
		Port:       heureka.Port{Number: 9866, Enabled: true},
		VIPAddress: hdfs.AppName(hdfs.RoleDataNode, cluster),
		Lease:      heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 600},
		Metadata:   md,
	}
}

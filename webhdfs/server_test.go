package webhdfs_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/configtest"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/webhdfs"
)

// openRegistry runs a real registry server on a free loopback port and
// returns a client of it.
func openRegistry(t *testing.T) (string, *client.Client) {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	srv := server.New(cfg, slog.New(slog.DiscardHandler))
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	url := "http://" + srv.Addr().String() + "/eureka"
	ccfg := client.DefaultConfig()
	ccfg.URLs = []string{url}
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return url, c
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServerLifecycle runs the gateway program against a real registry:
// Open listens at once and logs its line; /readyz says not ready until the
// registry names an active NameNode, then ready; a WebHDFS request reaches
// that NameNode; /healthz and /metrics answer; Close stops every actor, is
// idempotent, and leaves nothing listening.
func TestServerLifecycle(t *testing.T) {
	url, reg := openRegistry(t)
	var nnCalls atomic.Int32
	nn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nnCalls.Add(1)
		w.Write([]byte(`{"FileStatus":{"type":"DIRECTORY"}}`))
	}))
	defer nn.Close()

	cfg := webhdfs.DefaultServerConfig()
	cfg.Gateway.Cluster, cfg.Listen = "prod", "127.0.0.1:0"
	cfg.Registry.URLs = []string{url}
	var logs proctest.Buffer
	srv := webhdfs.NewServer(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if srv.Done() != nil || srv.Addr() != nil {
		t.Fatal("a new Server is already running")
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatalf("Close before Open: %v", err)
	}
	srv = webhdfs.NewServer(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(); err == nil {
		t.Error("a second Open succeeded")
	}
	base := "http://" + srv.Addr().String()
	if !strings.Contains(logs.String(), "heureka gateway listening") || !strings.Contains(logs.String(), srv.Addr().String()) {
		t.Errorf("no listening line: %s", logs.String())
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with no NameNode: %d %s", code, body)
	}

	ctx := context.Background()
	in := &heureka.Instance{ID: "prod-nn1-default-rack", App: hdfs.AppName(hdfs.RoleNameNode, "prod"), HostName: "nn1",
		IPAddr: "127.0.0.1", Status: heureka.StatusUp, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Metadata: hdfs.NodeInfo{HAState: hdfs.HAActive, HTTPPort: portOf(t, nn)}.WriteMetadata(heureka.Metadata{})}
	if err := reg.Register(ctx, in); err != nil {
		t.Fatal(err)
	}
	proctest.Retry(t, 20*time.Second, "the gateway ready", func() error {
		if err := srv.Ready(); err != nil {
			return err
		}
		if code, body := get(t, base+"/readyz"); code != http.StatusOK {
			return errors.New(body)
		}
		return nil
	})
	if code, body := get(t, base+"/webhdfs/v1/tmp?op=GETFILESTATUS"); code != http.StatusOK || !strings.Contains(body, "DIRECTORY") || nnCalls.Load() != 1 {
		t.Errorf("GETFILESTATUS: %d %s, %d calls at the NameNode", code, body, nnCalls.Load())
	}
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	if code, body := get(t, base+"/metrics"); code != http.StatusOK || !strings.Contains(body, "heureka_gateway_requests_total") {
		t.Errorf("/metrics: %d\n%s", code, body)
	}

	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-srv.Done():
	default:
		t.Error("Done is not closed after Close")
	}
	if err := srv.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still answering after Close")
	}
}

// TestServerConfig: every setting that cannot work is named, and a busy
// address is Open's error, with nothing left running.
func TestServerConfig(t *testing.T) {
	good := webhdfs.DefaultServerConfig()
	good.Gateway.Cluster = "prod"
	good.Registry.URLs = []string{"http://127.0.0.1:1/eureka"}
	type sc = webhdfs.ServerConfig
	configtest.Refuses(t, good, configtest.Cases[sc]{
		"Listen":                    func(c *sc) { c.Listen = "" },
		"Registry.URLs":             func(c *sc) { c.Registry.URLs = nil },
		"Registry.ReadTimeout":      func(c *sc) { c.Registry.ReadTimeout = 0 },
		"ShutdownTimeout":           func(c *sc) { c.ShutdownTimeout = 0 },
		"AuthPoll":                  func(c *sc) { c.AuthPoll = -time.Second },
		"ReadHeaderTimeout":         func(c *sc) { c.ReadHeaderTimeout = 0 },
		"TransferSlack":             func(c *sc) { c.TransferSlack = 0 },
		"IdleTimeout":               func(c *sc) { c.IdleTimeout = 0 },
		"Gateway.Cluster":           func(c *sc) { c.Gateway.Cluster = "" },
		"Gateway.NameNodeScheme":    func(c *sc) { c.Gateway.NameNodeScheme = "ftp" },
		"Gateway.FailoverWait":      func(c *sc) { c.Gateway.FailoverWait = time.Hour },
		"Gateway.RequestTimeout":    func(c *sc) { c.Gateway.RequestTimeout = 0 },
		"Gateway.ProbeTimeout":      func(c *sc) { c.Gateway.ProbeTimeout = -time.Second },
		"Gateway.MaxRechoose":       func(c *sc) { c.Gateway.MaxRechoose = 17 },
		"Gateway.MaxExcluded":       func(c *sc) { c.Gateway.MaxExcluded = 0 },
		"Gateway.MaxBody":           func(c *sc) { c.Gateway.MaxBody = -1 },
		"Gateway.FullnessThreshold": func(c *sc) { c.Gateway.FullnessThreshold = 1.5 },
		"Gateway.DefaultHTTPPort":   func(c *sc) { c.Gateway.DefaultHTTPPort = 0 },
		"Gateway.DataNodeHTTPPort":  func(c *sc) { c.Gateway.DataNodeHTTPPort = 70000 },
	})

	busy := httptest.NewServer(http.NotFoundHandler())
	defer busy.Close()
	cfg := good
	cfg.Listen = busy.Listener.Addr().String()
	srv := webhdfs.NewServer(cfg, slog.New(slog.DiscardHandler))
	if err := srv.Open(); err == nil {
		t.Fatal("Open on a busy address succeeded")
	}
	if srv.Done() != nil {
		t.Error("a failed Open left actors running")
	}
}

// TestServerWithoutNameNodes: a cluster the registry has no NameNode of (a
// mistyped cluster name) is warned of once the registry is read, and each
// request is answered 503 at once, saying so, not after FailoverWait.
func TestServerWithoutNameNodes(t *testing.T) {
	url, _ := openRegistry(t)
	cfg := webhdfs.DefaultServerConfig()
	cfg.Gateway.Cluster, cfg.Listen = "prdo", "127.0.0.1:0"
	// Far longer than the client below waits: a request that waited for a
	// failover would time out instead of being answered.
	cfg.Gateway.RequestTimeout, cfg.Gateway.FailoverWait = time.Minute, 50*time.Second
	cfg.Registry.URLs = []string{url}
	var logs proctest.Buffer
	srv := webhdfs.NewServer(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	proctest.Eventually(t, 20*time.Second, "the warning", func() bool {
		return strings.Contains(logs.String(), `level=WARN msg="no NameNode of cluster \"prdo\" is registered (application hdfs-namenode.prdo)`)
	})
	hc := &http.Client{Timeout: 20 * time.Second}
	resp, err := hc.Get("http://" + srv.Addr().String() + "/webhdfs/v1/tmp?op=GETFILESTATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"RemoteException"`) ||
		!strings.Contains(string(b), `no NameNode of cluster \"prdo\" is registered`) || !strings.Contains(string(b), "cluster name") {
		t.Errorf("a request for a cluster without NameNodes: %d %s", resp.StatusCode, b)
	}
}

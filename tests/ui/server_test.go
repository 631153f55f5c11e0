package ui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }

// server is one heureka process listening on a loopback port.
type server struct {
	URL string // http://127.0.0.1:PORT
}

// startServer runs the heureka binary (HEUREKA_BIN, or built once from
// the repository) on 127.0.0.1:0 and returns once it has logged its
// listening address; extra flags are added. It is stopped when the test ends; its output is shown
// if the test failed.
func startServer(t *testing.T, extra ...string) *server {
	t.Helper()
	p := proctest.Start(t, "heureka server", append([]string{"server", "--listen", "127.0.0.1:0"}, extra...)...)
	return &server{URL: "http://" + p.WaitAddr(15*time.Second)}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// httpClient talks to the server under test; enough idle connections for
// the bounded registration loop.
var httpClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: registerWorkers, IdleConnTimeout: 30 * time.Second},
}

// do sends one Eureka request and wants a 2xx answer.
func (s *server) do(ctx context.Context, method, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg)
	}
	return nil
}

// size returns the length of the JSON body at path, uncompressed.
func (s *server) size(ctx context.Context, path string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return io.Copy(io.Discard, resp.Body)
}

func appPath(app string) string { return "/eureka/apps/" + strings.ToUpper(app) }

// register registers (or re-registers) in.
func (s *server) register(ctx context.Context, in *heureka.Instance) error {
	return s.do(ctx, http.MethodPost, appPath(in.App), eureka.EncodeInstance(eureka.JSON, in))
}

// setStatus sets an operator's status override, as `heureka` CLI does.
func (s *server) setStatus(ctx context.Context, app, id string, st heureka.Status) error {
	return s.do(ctx, http.MethodPut, appPath(app)+"/"+url.PathEscape(id)+"/status?value="+string(st), nil)
}

func (s *server) cancel(ctx context.Context, app, id string) error {
	return s.do(ctx, http.MethodDelete, appPath(app)+"/"+url.PathEscape(id), nil)
}

// registerWorkers bounds the registrations in flight at once.
const registerWorkers = 16

// registerAll registers every instance over real HTTP, registerWorkers at
// a time, and stops at the first error or when ctx ends.
func (s *server) registerAll(ctx context.Context, ins []*heureka.Instance) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan *heureka.Instance)
	var wg sync.WaitGroup
	for range registerWorkers {
		wg.Go(func() {
			for in := range work {
				if err := s.register(ctx, in); err != nil {
					cancel(fmt.Errorf("registering %s: %w", in.ID, err))
					return
				}
			}
		})
	}
feed:
	for _, in := range ins {
		select {
		case work <- in:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return err
	}
	return ctx.Err()
}

// dataNode returns a DataNode's registration with HDFS metadata, written
// by package hdfs.
func dataNode(cluster, host, rack string, usedPct int64, blocks int64) *heureka.Instance {
	const total = 4 << 40 // 4 TiB
	md := hdfs.NodeInfo{Rack: rack, DiskUsed: total * usedPct / 100, DiskTotal: total, BlockCount: blocks,
		Version: "3.3.6", Status: string(hdfs.AdminNormal), DataPort: 9866}.WriteMetadata(heureka.Metadata{})
	return instance(hdfs.RoleDataNode, cluster, host, rack, 9866, md)
}

// nameNode returns a NameNode's registration in HA state ha.
func nameNode(cluster, host string, ha hdfs.HAState) *heureka.Instance {
	md := hdfs.NodeInfo{HAState: ha, Status: "Operational", RPCPort: 8020, Version: "3.3.6"}.WriteMetadata(heureka.Metadata{})
	return instance(hdfs.RoleNameNode, cluster, host, "", 8020, md)
}

// instance returns a registration of host; with role "", the caller names
// the application and ID.
func instance(role hdfs.Role, cluster, host, rack string, port int, md heureka.Metadata) *heureka.Instance {
	in := &heureka.Instance{
		ID:         hdfs.InstanceID(cluster, host, rack),
		App:        strings.ToUpper(hdfs.AppName(role, cluster)),
		HostName:   host,
		IPAddr:     "10.0.0.1",
		Status:     heureka.StatusUp,
		Port:       heureka.Port{Number: port, Enabled: true},
		VIPAddress: hdfs.AppName(role, cluster),
		Lease:      heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 3600},
		Metadata:   md,
	}
	in.Normalize()
	return in
}

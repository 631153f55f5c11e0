package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/server"
)

// Helpers for the operator commands' tests.

// exitMu serialises tests that replace exitProcess.
var exitMu sync.Mutex

// runCLI runs one command line as main would and returns its exit code,
// including the codes withExitCodes ends the process with.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	exitMu.Lock()
	defer exitMu.Unlock()
	exited := -1
	exitProcess = func(c int) { exited = c }
	defer func() { exitProcess = osExit }()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	if exited >= 0 {
		code = exited
	}
	return code, out.String(), errb.String()
}

// osExit is the real exitProcess, restored after each runCLI.
var osExit = exitProcess

// openServerWith runs the real wiring on a free loopback port with cfg
// changed by edit.
func openServerWith(t *testing.T, edit func(*server.Config)) *server.Server {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	if edit != nil {
		edit(&cfg)
	}
	s := server.New(cfg, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func eurekaURL(s *server.Server) string { return "http://" + s.Addr().String() + "/eureka" }

// testDataNode is a DataNode registration with HDFS metadata.
func testDataNode(host, rack string, usedPct, blocks int64, lease int) *heureka.Instance {
	const total = 1 << 40
	return &heureka.Instance{
		ID:       hdfs.InstanceID("prod", host, rack),
		App:      strings.ToUpper(hdfs.AppName(hdfs.RoleDataNode, "prod")),
		HostName: host,
		IPAddr:   "10.1.0.1",
		Status:   heureka.StatusUp,
		Lease:    heureka.LeaseInfo{RenewalIntervalSecs: 1, DurationSecs: lease},
		Metadata: hdfs.NodeInfo{Rack: rack, DiskUsed: total * usedPct / 100, DiskTotal: total,
			BlockCount: blocks, Version: "3.3.6"}.WriteMetadata(heureka.Metadata{}),
	}
}

// mustRegister registers in directly in s's registry, as a client would.
func mustRegister(t *testing.T, s *server.Server, in *heureka.Instance) {
	t.Helper()
	body := eureka.EncodeInstance(eureka.JSON, in)
	code, msg, _ := request(t, "POST", eurekaURL(s)+"/apps/"+in.App, string(body), "Content-Type", "application/json")
	if code != 204 {
		t.Fatalf("register %s: %d %s", in, code, msg)
	}
}

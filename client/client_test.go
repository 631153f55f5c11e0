package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/internal/configtest"
)

func TestInstanceRoundTrips(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.URL)
	ctx := context.Background()

	in := testInstance("hdfs-datanode.prod", "prod-dn1-r1", "")
	in.Status = "" // registers as UP, Eureka's default
	if err := c.Register(ctx, in); err != nil {
		t.Fatalf("register: %v", err)
	}
	if in.Status != "" {
		t.Errorf("Register modified its argument: status %q", in.Status)
	}
	got, ok := srv.registry().Snapshot().Instance("HDFS-DATANODE.PROD", "prod-dn1-r1")
	if !ok || got.Status != heureka.StatusUp || got.Metadata.Get("rack") != "/r1" {
		t.Fatalf("registry holds %+v, %v; want the instance UP with its metadata", got, ok)
	}

	if err := c.Renew(ctx, "hdfs-datanode.prod", "prod-dn1-r1"); err != nil {
		t.Fatalf("renew: %v", err)
	}

	if err := c.SetStatus(ctx, "HDFS-DATANODE.PROD", "prod-dn1-r1", heureka.StatusOutOfService); err != nil {
		t.Fatalf("set status: %v", err)
	}
	got, _ = srv.registry().Snapshot().Instance("HDFS-DATANODE.PROD", "prod-dn1-r1")
	if got.Status != heureka.StatusOutOfService {
		t.Errorf("after SetStatus the status is %s", got.Status)
	}
	// The override survives a heartbeat.
	if err := c.Renew(ctx, "HDFS-DATANODE.PROD", "prod-dn1-r1"); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if err := c.ClearStatus(ctx, "HDFS-DATANODE.PROD", "prod-dn1-r1", heureka.StatusUp); err != nil {
		t.Fatalf("clear status: %v", err)
	}
	got, _ = srv.registry().Snapshot().Instance("HDFS-DATANODE.PROD", "prod-dn1-r1")
	if got.Status != heureka.StatusUp || got.OverriddenStatus != heureka.StatusUnknown {
		t.Errorf("after ClearStatus(UP): status %s, override %s", got.Status, got.OverriddenStatus)
	}

	if err := c.UpdateMetadata(ctx, "HDFS-DATANODE.PROD", "prod-dn1-r1", map[string]string{"rack": "/r2", "dfs.used": "42"}); err != nil {
		t.Fatalf("update metadata: %v", err)
	}
	read, err := c.Instance(ctx, "hdfs-datanode.prod", "prod-dn1-r1")
	if err != nil {
		t.Fatalf("instance: %v", err)
	}
	if read.Metadata.Get("rack") != "/r2" || read.Metadata.Get("dfs.used") != "42" || read.Metadata.Get("version") != "3.3.6" {
		t.Errorf("metadata after update: %v", read.Metadata)
	}

	apps, err := c.Apps(ctx)
	if err != nil {
		t.Fatalf("apps: %v", err)
	}
	if len(apps.Apps) != 1 || apps.Apps[0].Name != "HDFS-DATANODE.PROD" || apps.HashCode != "UP_1_" {
		t.Errorf("apps: %d apps, hash %q", len(apps.Apps), apps.HashCode)
	}

	if err := c.Cancel(ctx, "HDFS-DATANODE.PROD", "prod-dn1-r1"); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if _, ok := srv.registry().Snapshot().Instance("HDFS-DATANODE.PROD", "prod-dn1-r1"); ok {
		t.Error("instance still registered after Cancel")
	}
}

func TestNotRegistered(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.URL)
	ctx := context.Background()
	calls := map[string]func() error{
		"renew":    func() error { return c.Renew(ctx, "NOPE", "i-1") },
		"cancel":   func() error { return c.Cancel(ctx, "NOPE", "i-1") },
		"status":   func() error { return c.SetStatus(ctx, "NOPE", "i-1", heureka.StatusDown) },
		"clear":    func() error { return c.ClearStatus(ctx, "NOPE", "i-1", "") },
		"metadata": func() error { return c.UpdateMetadata(ctx, "NOPE", "i-1", map[string]string{"a": "b"}) },
		"instance": func() error { _, err := c.Instance(ctx, "NOPE", "i-1"); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, client.ErrNotRegistered) {
				t.Fatalf("err = %v; want ErrNotRegistered", err)
			}
			if heureka.ErrorCode(err) != heureka.ENOTFOUND {
				t.Errorf("ErrorCode = %q", heureka.ErrorCode(err))
			}
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != http.StatusNotFound || !strings.Contains(ce.URL, "/eureka/apps/NOPE/i-1") {
				t.Errorf("error %#v does not carry the status and URL", ce)
			}
			// The server's own message reaches the caller.
			if !strings.Contains(err.Error(), "not registered") || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("message %q lacks the server's words or the URL", err)
			}
		})
	}
}

func TestRejectedIsNotRetried(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.URL)
	bad := testInstance("ORDERS", "i-1", heureka.StatusUp)
	bad.IPAddr = "" // Eureka: 400 Missing ip address
	err := c.Register(context.Background(), bad)
	if !errors.Is(err, client.ErrRejected) {
		t.Fatalf("err = %v; want ErrRejected", err)
	}
	if !strings.Contains(err.Error(), "Missing ip address") || !strings.Contains(err.Error(), "register POST") {
		t.Errorf("message %q", err)
	}
	if n := srv.writes.Load(); n != 1 {
		t.Errorf("a 400 was retried: %d writes reached the server", n)
	}
	if err := c.SetStatus(context.Background(), "ORDERS", "i-1", "SLEEPY"); !errors.Is(err, client.ErrRejected) {
		t.Errorf("bad status: %v", err)
	}
}

func TestFailoverToSecondURL(t *testing.T) {
	srv := startServer(t)
	dead := deadURL(t)
	c := newClient(t, dead, srv.URL)
	ctx := context.Background()
	if err := c.Register(ctx, testInstance("ORDERS", "i-1", heureka.StatusUp)); err != nil {
		t.Fatalf("register with the first URL dead: %v", err)
	}
	if err := c.Renew(ctx, "ORDERS", "i-1"); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if n := srv.writes.Load(); n != 2 {
		t.Errorf("%d writes reached the live server, want 2", n)
	}
}

func TestFailoverOn5xxButNotOn4xx(t *testing.T) {
	var first atomic.Int64
	status := atomic.Int32{}
	status.Store(http.StatusServiceUnavailable)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"error":"flaky says no"}`))
	}))
	t.Cleanup(flaky.Close)
	srv := startServer(t)
	srv.register(t, "ORDERS", "i-1", heureka.StatusUp)
	c := newClient(t, flaky.URL+"/eureka", srv.URL)
	ctx := context.Background()

	if err := c.Renew(ctx, "ORDERS", "i-1"); err != nil {
		t.Fatalf("renew with the first server answering 503: %v", err)
	}
	// The client now prefers the server that answered.
	before := first.Load()
	if err := c.Renew(ctx, "ORDERS", "i-1"); err != nil {
		t.Fatal(err)
	}
	if first.Load() != before {
		t.Error("the client went back to the failing server first")
	}

	// A 4xx from the server in use is final.
	c2 := newClient(t, flaky.URL+"/eureka", srv.URL)
	status.Store(http.StatusBadRequest)
	writes := srv.writes.Load()
	err := c2.Renew(ctx, "ORDERS", "i-1")
	if !errors.Is(err, client.ErrRejected) || !strings.Contains(err.Error(), "flaky says no") {
		t.Fatalf("err = %v; want ErrRejected with the server's message", err)
	}
	if srv.writes.Load() != writes {
		t.Error("a 400 failed over to the next server")
	}
}

func TestAllDown(t *testing.T) {
	c := newClient(t, deadURL(t), deadURL(t))
	start := time.Now()
	err := c.Renew(context.Background(), "ORDERS", "i-1")
	if !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("err = %v; want ErrUnavailable", err)
	}
	if heureka.ErrorCode(err) != heureka.EUNAVAILABLE {
		t.Errorf("ErrorCode = %q", heureka.ErrorCode(err))
	}
	if !strings.Contains(err.Error(), "renew PUT") || !strings.Contains(err.Error(), "no registry answered after 4 attempt(s) at 2 URL(s); last: ") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Errorf("message %q", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestContextBoundsCalls(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	c := newClient(t, hang.URL+"/eureka")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Renew(ctx, "ORDERS", "i-1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestPasswordsStayOutOfErrors(t *testing.T) {
	u := strings.Replace(deadURL(t), "http://", "http://admin:s3cret@", 1)
	c := newClient(t, u)
	err := c.Renew(context.Background(), "ORDERS", "i-1")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v", err)
	}
}

// TestConfigValidate: every setting of Config, CacheConfig and
// FollowConfig that cannot work is refused with a *heureka.ConfigError
// naming its field.
func TestConfigValidate(t *testing.T) {
	ok := client.DefaultConfig()
	ok.URLs = []string{"http://127.0.0.1:8761/eureka"}
	configtest.Refuses(t, ok, configtest.Cases[client.Config]{
		"URLs":                   func(c *client.Config) { c.URLs = nil },
		"URLs[0]":                func(c *client.Config) { c.URLs = []string{"127.0.0.1:8761"} },
		"URLs[1]":                func(c *client.Config) { c.URLs = []string{ok.URLs[0], "http://h/eureka?x=1"} },
		`Clusters["HDFS-("]`:     func(c *client.Config) { c.Clusters = map[string][]string{"HDFS-(": {"http://h"}} },
		`Clusters["HDFS-.*"]`:    func(c *client.Config) { c.Clusters = map[string][]string{"HDFS-.*": nil} },
		`Clusters["HDFS-.*"][0]`: func(c *client.Config) { c.Clusters = map[string][]string{"HDFS-.*": {"ftp://h"}} },
		"ConnectTimeout":         func(c *client.Config) { c.ConnectTimeout = 0 },
		"ReadTimeout":            func(c *client.Config) { c.ReadTimeout = -time.Second },
		"Backoff":                func(c *client.Config) { c.Backoff = 0 },
		"Rounds":                 func(c *client.Config) { c.Rounds = 0 },
		"MaxBackoff":             func(c *client.Config) { c.MaxBackoff = time.Millisecond },
		"MaxResponseBytes":       func(c *client.Config) { c.MaxResponseBytes = -1 },
		"CertFile":               func(c *client.Config) { c.KeyFile = "k.pem" },
		"KeyFile":                func(c *client.Config) { c.CertFile = "c.pem" },
		"Transport":              func(c *client.Config) { c.Transport, c.CAFile = http.DefaultTransport, "ca.pem" },
		"BearerToken":            func(c *client.Config) { c.BearerToken = "a\nb" },
	})

	configtest.Refuses(t, client.DefaultCacheConfig(), configtest.Cases[client.CacheConfig]{
		"Apps[0]":            func(c *client.CacheConfig) { c.Apps = []string{" "} },
		"PollInterval":       func(c *client.CacheConfig) { c.PollInterval = 0 },
		"WatchRetryInterval": func(c *client.CacheConfig) { c.WatchRetryInterval = 0 },
		"RetryMax":           func(c *client.CacheConfig) { c.RetryMax = time.Millisecond },
		"WatchIdleTimeout":   func(c *client.CacheConfig) { c.WatchIdleTimeout = -1 },
		"CacheFileInterval":  func(c *client.CacheConfig) { c.CacheFileInterval = 0 },
		"MaxPendingChanges":  func(c *client.CacheConfig) { c.MaxPendingChanges = 0 },
	})

	follow := client.DefaultFollowConfig()
	follow.Stream, follow.Handle = client.WatchStream, func(client.Event) error { return nil }
	configtest.Refuses(t, follow, configtest.Cases[client.FollowConfig]{
		"Stream":       func(c *client.FollowConfig) { c.Stream = "/v1/other" },
		"Handle":       func(c *client.FollowConfig) { c.Handle = nil },
		"IdleTimeout":  func(c *client.FollowConfig) { c.IdleTimeout = 0 },
		"FirstBackoff": func(c *client.FollowConfig) { c.FirstBackoff = 0 },
		"MaxBackoff":   func(c *client.FollowConfig) { c.MaxBackoff = c.FirstBackoff / 2 },
	})

	// Zero is a value, not "the default": a Config with only URLs set
	// is refused, naming the first field that cannot be zero.
	_, err := client.New(client.Config{URLs: ok.URLs})
	if ce, isCE := errors.AsType[*heureka.ConfigError](err); !isCE || ce.Field != "ConnectTimeout" {
		t.Errorf("New with only URLs: %v, want an error naming ConnectTimeout", err)
	}
}

func TestClustersRouteByApp(t *testing.T) {
	general := startServer(t)
	datanodes := startServer(t)
	c := newClientConfig(t, func(c *client.Config) {
		c.URLs = []string{general.URL}
		c.Clusters = map[string][]string{"hdfs-datanode\\..*": {datanodes.URL}}
	})
	ctx := context.Background()
	if err := c.Register(ctx, testInstance("HDFS-DATANODE.PROD", "dn1", heureka.StatusUp)); err != nil {
		t.Fatal(err)
	}
	if err := c.Register(ctx, testInstance("ORDERS", "o1", heureka.StatusUp)); err != nil {
		t.Fatal(err)
	}
	if _, ok := datanodes.registry().Snapshot().Instance("HDFS-DATANODE.PROD", "dn1"); !ok {
		t.Error("the DataNode did not go to the DataNode registry")
	}
	if _, ok := general.registry().Snapshot().Instance("ORDERS", "o1"); !ok {
		t.Error("ORDERS did not go to the default registry")
	}
	if general.registry().Snapshot().Len() != 1 || datanodes.registry().Snapshot().Len() != 1 {
		t.Error("an instance went to both registries")
	}

	// A stray app in the wrong registry is not read from there.
	general.register(t, "HDFS-DATANODE.PROD", "stray", heureka.StatusUp)
	apps, err := c.Apps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(apps.Apps) != 2 || apps.HashCode != "UP_2_" {
		t.Errorf("Apps merged %d apps, hash %s", len(apps.Apps), apps.HashCode)
	}

	cache := startCache(t, c, fastCache())
	waitSynced(t, cache)
	if got := ids(cache, "HDFS-DATANODE.PROD"); got != "dn1" {
		t.Errorf("cache DataNodes = %q", got)
	}
	if got := ids(cache, "ORDERS"); got != "o1" {
		t.Errorf("cache ORDERS = %q", got)
	}
	if st := cache.Status(); len(st) != 2 {
		t.Errorf("status has %d clusters", len(st))
	}
}

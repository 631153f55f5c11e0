package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/hdfs"
)

// fakeRegistry is an in-memory registry that records every call. Status
// rules follow Eureka's where the agent depends on them: a registration
// with DOWN is stored as DOWN; an override (SetStatus) wins over UP.
type fakeRegistry struct {
	mu        sync.Mutex
	ins       map[string]*heureka.Instance // by ID
	overrides map[string]heureka.Status
	calls     []call
	fail      error // returned by every call while set
}

type call struct {
	op     string
	at     time.Time
	status heureka.Status
	err    error
}

func newFakeRegistry() *fakeRegistry {
	return &fakeRegistry{ins: map[string]*heureka.Instance{}, overrides: map[string]heureka.Status{}}
}

func (f *fakeRegistry) record(op string, st heureka.Status) error {
	err := f.fail
	f.calls = append(f.calls, call{op: op, at: time.Now(), status: st, err: err})
	return err
}

func (f *fakeRegistry) Register(_ context.Context, in *heureka.Instance) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("register", in.Status); err != nil {
		return err
	}
	c := in.Clone()
	if ov, ok := f.overrides[c.ID]; ok && c.Status == heureka.StatusUp {
		c.Status = ov
	}
	if old, ok := f.ins[c.ID]; ok && old.LastDirtyTimestamp > c.LastDirtyTimestamp {
		panic("lastDirtyTimestamp went backwards")
	}
	f.ins[c.ID] = c
	return nil
}

func (f *fakeRegistry) Renew(_ context.Context, app, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("renew", ""); err != nil {
		return err
	}
	if _, ok := f.ins[id]; !ok {
		return heureka.Errorf(heureka.ENOTFOUND, "%s/%s is not registered", app, id)
	}
	return nil
}

func (f *fakeRegistry) SetStatus(_ context.Context, app, id string, st heureka.Status) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("status", st); err != nil {
		return err
	}
	in, ok := f.ins[id]
	if !ok {
		return heureka.Errorf(heureka.ENOTFOUND, "%s/%s is not registered", app, id)
	}
	f.overrides[id] = st
	in.Status = st
	return nil
}

func (f *fakeRegistry) Cancel(_ context.Context, app, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("cancel", ""); err != nil {
		return err
	}
	if _, ok := f.ins[id]; !ok {
		return heureka.Errorf(heureka.ENOTFOUND, "%s/%s is not registered", app, id)
	}
	delete(f.ins, id)
	delete(f.overrides, id)
	return nil
}

// forget drops an instance, as a restarted registry would.
func (f *fakeRegistry) forget(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ins, id)
}

func (f *fakeRegistry) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeRegistry) get(id string) (*heureka.Instance, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.ins[id]
	if !ok {
		return nil, false
	}
	return in.Clone(), true
}

func (f *fakeRegistry) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.op == op {
			n++
		}
	}
	return n
}

func (f *fakeRegistry) log() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// fakeDaemon is an HDFS daemon whose answers the test sets, read through
// the real HDFS role.
type fakeDaemon struct {
	mu       sync.Mutex
	alive    bool
	paused   bool // accepts connections, never answers
	health   hdfsrole.Health
	info     hdfs.NodeInfo
	probes   int
	collects int
}

func (d *fakeDaemon) Probe(ctx context.Context) (hdfsrole.Health, error) {
	d.mu.Lock()
	d.probes++
	alive, paused, h := d.alive, d.paused, d.health
	d.mu.Unlock()
	switch {
	case !alive:
		return hdfsrole.Health{}, fmt.Errorf("port 127.0.0.1:9866: %w", agent.ErrRefused)
	case paused:
		<-ctx.Done()
		return hdfsrole.Health{}, fmt.Errorf("%w: %w", agent.ErrNoAnswer, ctx.Err())
	}
	return h, nil
}

func (d *fakeDaemon) Collect(ctx context.Context) (hdfs.NodeInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.collects++
	if d.paused {
		d.mu.Unlock()
		<-ctx.Done()
		d.mu.Lock()
		return hdfs.NodeInfo{}, ctx.Err()
	}
	if !d.alive {
		return hdfs.NodeInfo{}, heureka.Errorf(heureka.EUNAVAILABLE, "connection refused")
	}
	return d.info, nil
}

func (d *fakeDaemon) set(f func(d *fakeDaemon)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

// testConfig is the configuration of an agent with the HDFS role: the
// agent's own, and the role's as HDFS.
type testConfig struct {
	agent.Config
	HDFS hdfsrole.Config
}

func newTestConfig(t *testing.T, role hdfs.Role) testConfig {
	cfg := testConfig{Config: agent.DefaultConfig(), HDFS: hdfsrole.DefaultConfig()}
	cfg.HDFS.Role = role
	cfg.Role, cfg.Cluster, cfg.Host, cfg.IPAddr, cfg.Rack = hdfs.RoleName(role), "prod", "dn1.example.net", "10.0.0.1", "/dc1/rack-a"
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	return cfg
}

// newAgent is an agent with the HDFS role over d.
func newAgent(cfg testConfig, reg agent.Registry, d *fakeDaemon) (*agent.Agent, error) {
	role, err := hdfsrole.New(cfg.HDFS, d)
	if err != nil {
		return nil, err
	}
	return agent.New(cfg.Config, reg, role)
}

func dataNodeInfo() hdfs.NodeInfo {
	return hdfs.NodeInfo{DiskUsed: 400 << 30, DiskTotal: 1000 << 30, BlockCount: 10000, Version: "3.3.6", DataPort: 9866, RPCPort: 9867}
}

// running is an agent started in the current synctest bubble.
type running struct {
	a      *agent.Agent
	id     string // its instance ID
	reg    *fakeRegistry
	d      *fakeDaemon
	cancel context.CancelFunc
	done   chan error
}

// start runs an agent with the HDFS role over d.
func start(t *testing.T, cfg testConfig, d *fakeDaemon) *running {
	t.Helper()
	role, err := hdfsrole.New(cfg.HDFS, d)
	if err != nil {
		t.Fatal(err)
	}
	r := startRole(t, cfg.Config, role)
	r.d = d
	return r
}

// startRole runs an agent with role.
func startRole(t *testing.T, cfg agent.Config, role agent.Role) *running {
	t.Helper()
	reg := newFakeRegistry()
	a, err := agent.New(cfg, reg, role)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{a: a, id: cfg.InstanceID(), reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func (r *running) instance(t *testing.T) *heureka.Instance {
	t.Helper()
	in, ok := r.reg.get(r.id)
	if !ok {
		t.Fatalf("%s is not registered; calls: %+v", r.id, r.reg.log())
	}
	return in
}

func metadata(in *heureka.Instance) map[string]string { return in.Metadata.Map() }

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/hdfs"
)

// quorumServer is a role that is not HDFS: a server of a replicated
// quorum (ZooKeeper, say) whose answers the test sets. Its role state is
// leader or follower, it reports its version and outstanding requests,
// and a follower that lost its leader answers but is unhealthy.
type quorumServer struct {
	mu          sync.Mutex
	alive       bool
	state       string
	unhealthy   string
	version     string
	outstanding int
}

func (q *quorumServer) Probe(context.Context) (agent.Health, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.alive {
		return agent.Health{}, fmt.Errorf("port 127.0.0.1:2181: %w", agent.ErrRefused)
	}
	return agent.Health{State: q.state, Unhealthy: q.unhealthy}, nil
}

func (q *quorumServer) Collect(context.Context) (agent.Figures, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.alive {
		return agent.Figures{}, fmt.Errorf("port 127.0.0.1:2181: %w", agent.ErrRefused)
	}
	return agent.Figures{Port: 2181, Metadata: heureka.NewMetadata(
		heureka.MetaVersion, q.version, "outstanding_requests", fmt.Sprint(q.outstanding))}, nil
}

func (q *quorumServer) Static() agent.Figures { return agent.Figures{Port: 2181} }

// Material: only a new version is; the outstanding requests wait.
func (q *quorumServer) Material(old, new agent.Figures) bool {
	return old.Metadata.Get(heureka.MetaVersion) != new.Metadata.Get(heureka.MetaVersion)
}

func (q *quorumServer) set(f func(q *quorumServer)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f(q)
}

// TestAnyRole: the agent knows nothing of HDFS. With another role it
// registers <role>.<cluster> under the same kind of instance ID, with rack,
// version and role state; pushes a role-state change the moment a probe
// sees it; reports a daemon that answers but is unhealthy DOWN with the
// role's cause, and UP once it is well for UpAfter; and drains.
func TestAnyRole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := agent.DefaultConfig()
		cfg.Role, cfg.Cluster, cfg.Host, cfg.IPAddr, cfg.Rack = "zookeeper", "prod", "zk1.example.net", "10.0.0.7", "dc1/rack-b"
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
		q := &quorumServer{alive: true, state: "follower", version: "3.9.3"}
		r := startRole(t, cfg, q)
		synctest.Wait()

		in := r.instance(t)
		if in.App != "ZOOKEEPER.PROD" || in.VIPAddress != "zookeeper.prod" || in.ID != "prod-zk1.example.net-dc1.rack-b" ||
			in.Status != heureka.StatusUp || in.Port != (heureka.Port{Number: 2181, Enabled: true}) || in.IPAddr != "10.0.0.7" {
			t.Fatalf("registered %+v", in)
		}
		want := map[string]string{heureka.MetaRack: "/dc1/rack-b", heureka.MetaVersion: "3.9.3",
			heureka.MetaRoleState: "follower", "outstanding_requests": "0"}
		if md := metadata(in); fmt.Sprint(md) != fmt.Sprint(want) {
			t.Fatalf("metadata %v, want %v", md, want)
		}
		if _, ok := in.Metadata.Lookup(hdfs.MetaHAState); ok {
			t.Errorf("a role without HA registered ha_state: %v", in.Metadata)
		}

		// An election: the new state is pushed by the next probe.
		time.Sleep(2300 * time.Millisecond)
		elected := time.Now()
		q.set(func(q *quorumServer) { q.state = "leader" })
		for r.instance(t).Metadata.Get(heureka.MetaRoleState) != "leader" {
			if time.Since(elected) > 3*time.Second {
				t.Fatalf("role state not pushed: %+v", r.reg.log())
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		if took := time.Since(elected); took > cfg.ProbeInterval+20*time.Millisecond {
			t.Errorf("the role state took %v", took)
		}
		if st := r.a.Status(); st.State != "leader" || st.Health != heureka.StatusUp {
			t.Errorf("status %+v", st)
		}

		// A figure the role does not call material waits.
		regs := r.reg.count("register")
		q.set(func(q *quorumServer) { q.outstanding = 7 })
		time.Sleep(cfg.MetadataInterval + time.Second)
		synctest.Wait()
		if n := r.reg.count("register"); n != regs {
			t.Errorf("an immaterial figure made %d registrations", n-regs)
		}

		// It answers, but it lost its leader: DOWN with its cause within
		// a probe and a recheck, as a dead daemon is.
		lost := time.Now()
		q.set(func(q *quorumServer) { q.state, q.unhealthy = "looking", "lost its leader" })
		for r.instance(t).Status != heureka.StatusDown {
			if time.Since(lost) > 5*time.Second {
				t.Fatalf("unhealthy daemon never DOWN: %+v", r.reg.log())
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		if took := time.Since(lost); took > cfg.ProbeInterval+cfg.RecheckInterval+20*time.Millisecond {
			t.Errorf("DOWN took %v", took)
		}
		in = r.instance(t)
		if c := in.Metadata.Get(heureka.MetaDownCause); c != "lost its leader" || in.Metadata.Get(heureka.MetaRoleState) != "looking" {
			t.Errorf("DOWN with metadata %v; want down_cause %q and role_state looking", in.Metadata, "lost its leader")
		}
		if st := r.a.Status(); st.Cause != "lost its leader" {
			t.Errorf("status %+v", st)
		}

		// Well again: UP once it has been well for UpAfter, without the cause.
		healed := time.Now()
		q.set(func(q *quorumServer) { q.state, q.unhealthy = "follower", "" })
		upAt := waitUp(t, r, 10*time.Second)
		if took := upAt.Sub(healed); took < cfg.UpAfter || took > cfg.UpAfter+cfg.ProbeInterval+100*time.Millisecond {
			t.Errorf("UP %v after it was well; want UpAfter %v and a probe", took, cfg.UpAfter)
		}
		in = r.instance(t)
		if _, ok := in.Metadata.Lookup(heureka.MetaDownCause); ok || in.Metadata.Get(heureka.MetaRoleState) != "follower" ||
			in.Metadata.Get("outstanding_requests") != "7" {
			t.Errorf("UP again with metadata %v", in.Metadata)
		}

		// SIGTERM: OUT_OF_SERVICE at once, deregistered after the drain.
		stopped := time.Now()
		r.cancel()
		synctest.Wait()
		if in := r.instance(t); in.Status != heureka.StatusOutOfService {
			t.Fatalf("not OUT_OF_SERVICE at once: %s", in.Status)
		}
		err := <-r.done
		r.done <- err // for the cleanup
		if took := time.Since(stopped); err != nil || took != cfg.DrainPeriod {
			t.Errorf("Run: %v after %v; want nil after %v", err, took, cfg.DrainPeriod)
		}
		if _, ok := r.reg.get(r.id); ok {
			t.Error("still registered after the drain")
		}
	})
}

// TestRoleConfig: the agent takes any role name that can be a DNS label,
// and no other.
func TestRoleConfig(t *testing.T) {
	cfg := agent.DefaultConfig()
	cfg.Cluster, cfg.Host, cfg.IPAddr = "prod", "h1", "10.0.0.1"
	for role, ok := range map[string]bool{
		"zookeeper": true, "kafka-broker": true, "hdfs-namenode": true, "yarn-resourcemanager": true,
		"": false, "Kafka": false, "kafka.broker": false, "-zk": false, "zk_1": false,
	} {
		cfg.Role = role
		if err := cfg.Validate(); (err == nil) != ok {
			t.Errorf("Role %q: %v", role, err)
		}
	}
	cfg.Role = "zookeeper"
	if _, err := agent.New(cfg, newFakeRegistry(), nil); heureka.ErrorCode(err) != heureka.EINVALID {
		t.Errorf("New with a nil role: %v", err)
	}
}

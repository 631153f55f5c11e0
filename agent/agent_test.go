package agent_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/hdfs"
)

func TestRegistersAndRenews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()

		in := r.instance(t)
		if in.ID != "prod-dn1.example.net-dc1.rack-a" || in.App != "HDFS-DATANODE.PROD" || in.Status != heureka.StatusUp ||
			in.HostName != "dn1.example.net" || in.IPAddr != "10.0.0.1" || in.Port != (heureka.Port{Number: 9866, Enabled: true}) ||
			in.Lease.RenewalIntervalSecs != 10 || in.Lease.DurationSecs != 30 || in.VIPAddress != "hdfs-datanode.prod" {
			t.Fatalf("registered %+v", in)
		}
		md := metadata(in)
		for k, v := range map[string]string{
			hdfs.MetaRack: "/dc1/rack-a", hdfs.MetaDiskUsed: "429496729600", hdfs.MetaDiskTotal: "1073741824000",
			hdfs.MetaBlockCount: "10000", hdfs.MetaVersion: "3.3.6", hdfs.MetaStatus: "NORMAL",
			hdfs.MetaDataPort: "9866", hdfs.MetaRPCPort: "9867",
		} {
			if md[k] != v {
				t.Errorf("metadata %s = %q, want %q (all: %v)", k, md[k], v, md)
			}
		}
		if _, ok := md[hdfs.MetaHAState]; ok {
			t.Errorf("a DataNode registered ha_state: %v", md)
		}

		time.Sleep(35 * time.Second)
		synctest.Wait()
		if n := r.reg.count("renew"); n != 3 {
			t.Errorf("renewals in 35 s = %d, want 3", n)
		}
		if n := r.reg.count("register"); n != 1 {
			t.Errorf("registrations = %d, want 1: %+v", n, r.reg.log())
		}
		if st := r.a.Status(); st.Phase != agent.PhaseRegistered || st.Reported != heureka.StatusUp || st.Pending {
			t.Errorf("status %+v", st)
		}
	})
}

// TestDownWithinAFewProbes: a dead daemon is reported DOWN after two
// consecutive failed probes, within ProbeInterval + RecheckInterval, and UP
// again at its first answer.
func TestDownWithinAFewProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()
		time.Sleep(3300 * time.Millisecond) // mid-interval
		synctest.Wait()

		killed := time.Now()
		d.set(func(d *fakeDaemon) { d.alive = false })
		var downAt time.Time
		for time.Since(killed) < 5*time.Second {
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
			if r.instance(t).Status == heureka.StatusDown {
				downAt = time.Now()
				break
			}
		}
		if downAt.IsZero() {
			t.Fatalf("never DOWN: %+v", r.reg.log())
		}
		cfg := agent.DefaultConfig()
		if took := downAt.Sub(killed); took > cfg.ProbeInterval+cfg.RecheckInterval+20*time.Millisecond {
			t.Errorf("DOWN took %v", took)
		}
		if st := r.a.Status(); st.Health != heureka.StatusDown || st.Failures != 2 || st.Cause != agent.CausePortRefused {
			t.Errorf("status %+v", st)
		}
		if c := r.instance(t).Metadata.Get(hdfs.MetaDownCause); c != agent.CausePortRefused {
			t.Errorf("down_cause %q, want %q", c, agent.CausePortRefused)
		}

		// Still dead: probes go on every second, nothing more is pushed,
		// renewals continue.
		regs, renews := r.reg.count("register"), r.reg.count("renew")
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if r.reg.count("register") != regs || r.reg.count("renew") < renews+2 {
			t.Errorf("while down: %d registrations (was %d), %d renewals (was %d)", r.reg.count("register"), regs, r.reg.count("renew"), renews)
		}

		revived := time.Now()
		d.set(func(d *fakeDaemon) {
			d.alive = true
			d.info.Version = "3.4.0" // it came back upgraded
		})
		// UP only once it has answered for UpAfter (3 s): the first
		// answer within a probe interval, UP three seconds later.
		time.Sleep(cfg.ProbeInterval + cfg.UpAfter - 20*time.Millisecond)
		synctest.Wait()
		if in := r.instance(t); in.Status != heureka.StatusDown {
			t.Errorf("%v after revival: %s; want DOWN until it answered for %v", time.Since(revived), in.Status, cfg.UpAfter)
		}
		time.Sleep(cfg.ProbeInterval)
		synctest.Wait()
		in := r.instance(t)
		if in.Status != heureka.StatusUp || in.Metadata.Get(hdfs.MetaVersion) != "3.4.0" || in.Metadata.Get(hdfs.MetaDownCause) != "" {
			t.Errorf("%v after revival: status %s, metadata %v", time.Since(revived), in.Status, in.Metadata)
		}
	})
}

func TestOneFailedProbeIsNotDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()
		time.Sleep(1500 * time.Millisecond)
		d.set(func(d *fakeDaemon) { d.alive = false })
		time.Sleep(600 * time.Millisecond) // one failure at 2 s
		d.set(func(d *fakeDaemon) { d.alive = true })
		time.Sleep(5 * time.Second)
		synctest.Wait()
		for _, c := range r.reg.log() {
			if c.status == heureka.StatusDown {
				t.Fatalf("a single failure reported DOWN: %+v", r.reg.log())
			}
		}
		if st := r.a.Status(); st.Failures != 0 || st.Health != heureka.StatusUp {
			t.Errorf("status %+v", st)
		}
	})
}

func TestStartsBeforeItsDaemon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()
		if in := r.instance(t); in.Status != heureka.StatusStarting {
			t.Fatalf("first registration %s, want STARTING", in.Status)
		}
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		if in := r.instance(t); in.Status != heureka.StatusDown {
			t.Fatalf("after two failures %s, want DOWN", in.Status)
		}
		d.set(func(d *fakeDaemon) { d.alive = true })
		time.Sleep(time.Second + agent.DefaultConfig().UpAfter)
		synctest.Wait()
		in := r.instance(t)
		if in.Status != heureka.StatusUp || in.Metadata.Get(hdfs.MetaBlockCount) != "10000" {
			t.Fatalf("after the daemon came: %s %v", in.Status, in.Metadata)
		}
	})
}

func TestHAChangePushedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := newTestConfig(t, hdfs.RoleNameNode)
		cfg.Host, cfg.HDFS.Port = "nn1.example.net", 8020
		d := &fakeDaemon{alive: true,
			health: hdfsrole.Health{HAState: hdfs.HAStandby, HATransitionTime: 1000},
			info:   hdfs.NodeInfo{Version: "3.3.6", Status: "Operational", HAState: hdfs.HAActive, RPCPort: 9000}}
		r := start(t, cfg, d)
		synctest.Wait()
		in := r.instance(t)
		md := in.Metadata
		// The prober's HA state wins over the full read's; the configured
		// port over the daemon's.
		if md.Get(hdfs.MetaHAState) != "standby" || md.Get(hdfs.MetaHATransitionTime) != "1000" || md.Get(hdfs.MetaRPCPort) != "8020" ||
			md.Get(hdfs.MetaStatus) != "Operational" || in.Port.Number != 8020 || md.Get(hdfs.MetaDataPort) != "" {
			t.Fatalf("registered %v port %v", md, in.Port)
		}
		time.Sleep(4200 * time.Millisecond)
		synctest.Wait()

		switched := time.Now()
		d.set(func(d *fakeDaemon) { d.health = hdfsrole.Health{HAState: hdfs.HAActive, HATransitionTime: 2000} })
		for r.instance(t).Metadata.Get(hdfs.MetaHAState) != "active" {
			if time.Since(switched) > 3*time.Second {
				t.Fatalf("HA change not pushed: %+v", r.reg.log())
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		if took := time.Since(switched); took > time.Second+20*time.Millisecond {
			t.Errorf("HA change took %v", took)
		}
		if got := r.instance(t).Metadata.Get(hdfs.MetaHATransitionTime); got != "2000" {
			t.Errorf("ha_transition_time %s", got)
		}
		// A later full read does not bring the old state back.
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if got := r.instance(t).Metadata.Get(hdfs.MetaHAState); got != "active" {
			t.Errorf("after a collect: %s", got)
		}
	})
}

func TestMetadataRefreshedWhenMaterial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()

		// 0.5% of capacity: not material.
		d.set(func(d *fakeDaemon) { d.info.DiskUsed += 5 << 30 })
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if got := r.instance(t).Metadata.Get(hdfs.MetaDiskUsed); got != "429496729600" || r.reg.count("register") != 1 {
			t.Fatalf("small change pushed: disk_used %s, %d registrations", got, r.reg.count("register"))
		}
		// Another 1%: now 1.5% from what the registry holds.
		d.set(func(d *fakeDaemon) { d.info.DiskUsed += 10 << 30 })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := r.instance(t).Metadata.Get(hdfs.MetaDiskUsed); got != "445602856960" {
			t.Fatalf("material change not pushed: disk_used %s", got)
		}
		// Blocks +2%: material.
		d.set(func(d *fakeDaemon) { d.info.BlockCount = 10200 })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := r.instance(t).Metadata.Get(hdfs.MetaBlockCount); got != "10200" {
			t.Fatalf("block change not pushed: %s", got)
		}
		// A small drift reaches the registry after MetadataMaxAge.
		d.set(func(d *fakeDaemon) { d.info.BlockCount = 10201 })
		time.Sleep(agent.DefaultConfig().MetadataMaxAge + 10*time.Second)
		synctest.Wait()
		if got := r.instance(t).Metadata.Get(hdfs.MetaBlockCount); got != "10201" {
			t.Fatalf("drift not pushed after MetadataMaxAge: %s", got)
		}
	})
}

func TestRenew404Reregisters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()
		r.reg.forget(r.id) // the registry restarted
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		in := r.instance(t)
		if in.Status != heureka.StatusUp || in.Metadata.Get(hdfs.MetaBlockCount) != "10000" || r.reg.count("register") != 2 {
			t.Fatalf("after 404: %s %v, %+v", in.Status, in.Metadata, r.reg.log())
		}
	})
}

// TestRegistryOutage: an unreachable registry is retried with growing,
// jittered pauses; the agent never stops; what happened meanwhile is
// pushed when the registry returns.
func TestRegistryOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		cfg := newTestConfig(t, hdfs.RoleDataNode)
		reg := newFakeRegistry()
		reg.setFail(heureka.Errorf(heureka.EUNAVAILABLE, "no registry answered"))
		a, err := newAgent(cfg, reg, d)
		if err != nil {
			t.Fatal(err)
		}
		r := &running{a: a, id: cfg.InstanceID(), reg: reg, d: d, done: make(chan error, 1)}
		ctx, cancel := contextWithCancel()
		r.cancel = cancel
		go func() { r.done <- a.Run(ctx) }()

		time.Sleep(3 * time.Minute)
		synctest.Wait()
		calls := reg.log()
		if len(calls) < 6 || len(calls) > 20 {
			t.Fatalf("%d attempts in 3 minutes", len(calls))
		}
		for i := 1; i < len(calls); i++ {
			gap := calls[i].at.Sub(calls[i-1].at)
			if gap < cfg.BackoffMin/2 || gap > cfg.BackoffMax {
				t.Errorf("pause %d = %v, want within [%v, %v]", i, gap, cfg.BackoffMin/2, cfg.BackoffMax)
			}
		}
		if gap := calls[len(calls)-1].at.Sub(calls[len(calls)-2].at); gap < cfg.BackoffMax/2 {
			t.Errorf("pauses did not grow: last %v", gap)
		}
		if st := a.Status(); st.Phase != agent.PhaseRegistering || !strings.Contains(st.LastError, "no registry answered") {
			t.Errorf("status %+v", st)
		}

		d.set(func(d *fakeDaemon) { d.alive = false }) // dies during the outage
		time.Sleep(5 * time.Second)
		reg.setFail(nil)
		time.Sleep(cfg.BackoffMax + time.Second)
		synctest.Wait()
		in := r.instance(t)
		if in.Status != heureka.StatusDown {
			t.Errorf("after the outage: %s", in.Status)
		}

		// Renewals failing later back off too, but at most RenewInterval.
		reg.setFail(errors.New("connection reset"))
		before := len(reg.log())
		time.Sleep(time.Minute)
		synctest.Wait()
		n := len(reg.log()) - before
		if n < 6 || n > 60 {
			t.Errorf("%d renew attempts in a minute of failures", n)
		}
		reg.setFail(nil)
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func TestDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()
		time.Sleep(4 * time.Second)
		synctest.Wait()

		stopped := time.Now()
		r.cancel()
		synctest.Wait()
		if in := r.instance(t); in.Status != heureka.StatusOutOfService || time.Since(stopped) != 0 {
			t.Fatalf("not OUT_OF_SERVICE at once: %s after %v", in.Status, time.Since(stopped))
		}
		if st := r.a.Status(); st.Phase != agent.PhaseDraining || st.Reported != heureka.StatusOutOfService {
			t.Errorf("status %+v", st)
		}
		select {
		case err := <-r.done:
			t.Fatalf("Run returned before the drain period: %v", err)
		default:
		}
		err := <-r.done
		r.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if took := time.Since(stopped); took != agent.DefaultConfig().DrainPeriod {
			t.Errorf("drain took %v", took)
		}
		if _, ok := r.reg.get(r.id); ok {
			t.Error("still registered after Run returned")
		}
		calls := r.reg.log()
		last := calls[len(calls)-2:]
		if last[0].op != "status" || last[1].op != "cancel" {
			t.Errorf("last calls %+v", last)
		}
		if st := r.a.Status(); st.Phase != agent.PhaseStopped {
			t.Errorf("phase %s", st.Phase)
		}
	})
}

func TestDrainWithRegistryDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()
		r.reg.setFail(heureka.Errorf(heureka.EUNAVAILABLE, "no registry answered"))
		stopped := time.Now()
		r.cancel()
		err := <-r.done
		r.done <- err
		if err != nil || time.Since(stopped) != 0 {
			t.Errorf("Run: %v after %v; want nil at once (nothing to wait for)", err, time.Since(stopped))
		}
		if n := r.reg.count("cancel"); n != 1 {
			t.Errorf("%d cancel attempts", n)
		}
	})
}

func TestDrainWhenForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDaemon{alive: true, info: dataNodeInfo()}
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), d)
		synctest.Wait()
		r.reg.forget(r.id)
		r.cancel()
		err := <-r.done
		r.done <- err
		if err != nil || r.reg.count("cancel") != 0 {
			t.Errorf("Run: %v, %d cancels", err, r.reg.count("cancel"))
		}
	})
}

func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, newTestConfig(t, hdfs.RoleDataNode), &fakeDaemon{alive: true})
		synctest.Wait()
		if err := r.a.Run(t.Context()); err == nil {
			t.Error("second Run succeeded")
		}
	})
}

func TestConfigValidate(t *testing.T) {
	good := newTestConfig(t, hdfs.RoleDataNode)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := good.HDFS.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		f     func(*testConfig)
	}{
		{"Role", func(c *testConfig) { c.Role = "hdfs_datanode" }},
		{"Role", func(c *testConfig) { c.HDFS.Role = "journalnode" }},
		{"Cluster", func(c *testConfig) { c.Cluster = "" }},
		{"Cluster", func(c *testConfig) { c.Cluster = "a/b" }},
		{"Host", func(c *testConfig) { c.Host = "" }},
		{"Host", func(c *testConfig) { c.Host = "a\tb" }},
		{"IPAddr", func(c *testConfig) { c.IPAddr = "dn1" }},
		{"Port", func(c *testConfig) { c.HDFS.Port = 70000 }},
		{"AdminState", func(c *testConfig) { c.HDFS.AdminState = "retired" }},
		{"RenewInterval", func(c *testConfig) { c.RenewInterval = 0 }},
		{"RenewInterval", func(c *testConfig) { c.RenewInterval = 500 * time.Millisecond }},
		{"LeaseDuration", func(c *testConfig) { c.LeaseDuration = c.RenewInterval }},
		{"ProbeTimeout", func(c *testConfig) { c.ProbeTimeout = 2 * c.ProbeInterval }},
		{"FailureThreshold", func(c *testConfig) { c.FailureThreshold = 0 }},
		{"DrainPeriod", func(c *testConfig) { c.DrainPeriod = -time.Second }},
		{"BackoffMin", func(c *testConfig) { c.BackoffMin = time.Hour }},
		{"DiskChange", func(c *testConfig) { c.HDFS.DiskChange = 1 }},
		{"BlockChange", func(c *testConfig) { c.HDFS.BlockChange = -0.1 }},
		{"CallTimeout", func(c *testConfig) { c.CallTimeout = 0 }},
		{"HangAfter", func(c *testConfig) { c.HangAfter = 0 }},
		{"HungMarkAfter", func(c *testConfig) { c.HungMarkAfter = -time.Second }},
		{"UpAfter", func(c *testConfig) { c.UpAfter = -time.Second }},
		{"FlapWindow", func(c *testConfig) { c.FlapWindow = 0 }},
		{"FlapHoldMax", func(c *testConfig) { c.FlapHoldMax = time.Second }},
		{"PID", func(c *testConfig) { c.PID, c.PIDFile = 12, "/run/dn.pid" }},
		{"PIDFile", func(c *testConfig) { c.PIDFile, c.SystemdUnit = "/run/dn.pid", "hadoop-hdfs-datanode" }},
		{"PID", func(c *testConfig) { c.PID = -1 }},
		{"PID", func(c *testConfig) { c.PID = 1 << 23 }},
		{"SystemdUnit", func(c *testConfig) { c.SystemdUnit = "--all" }},
		{"SystemdUnit", func(c *testConfig) { c.SystemdUnit = "a b.service" }},
	} {
		cfg := good
		c.f(&cfg)
		err := cfg.Validate()
		if err == nil {
			err = cfg.HDFS.Validate()
		}
		if ce, ok := errors.AsType[*heureka.ConfigError](err); !ok || ce.Field != c.field {
			t.Errorf("%s: %v; want a *heureka.ConfigError naming %[1]s", c.field, err)
		}
	}
	if _, err := newAgent(good, nil, &fakeDaemon{}); err == nil {
		t.Error("New with a nil registry succeeded")
	}
	cfg := good
	cfg.HDFS.AdminState = "decommissioning"
	a, err := newAgent(cfg, newFakeRegistry(), &fakeDaemon{})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Instance().Metadata.Get(hdfs.MetaStatus); got != "DECOMMISSION_INPROGRESS" {
		t.Errorf("admin state written as %q", got)
	}
}

// TestStatusPageIsWhatOthersCanOpen checks the status page an agent
// registers: the daemon's URL without credentials, which every reader of
// the registry would see, and nothing for a loopback URL, which no reader
// on another machine could open.
func TestStatusPageIsWhatOthersCanOpen(t *testing.T) {
	for _, c := range []struct{ given, want string }{
		{"http://dn1.example.net:9864/jmx", "http://dn1.example.net:9864/jmx"},
		{"https://ops:s3cret@dn1.example.net:9865/", "https://dn1.example.net:9865/"},
		{"http://127.0.0.1:9864", ""},
		{"http://[::1]:9864", ""},
		{"http://localhost:9864", ""},
		{"", ""},
		{"not a url:9864", ""},
	} {
		cfg := newTestConfig(t, hdfs.RoleDataNode)
		cfg.StatusPageURL = c.given
		a, err := newAgent(cfg, newFakeRegistry(), &fakeDaemon{})
		if err != nil {
			t.Fatal(err)
		}
		in := a.Instance()
		if in.StatusPageURL != c.want || in.HomePageURL != c.want {
			t.Errorf("StatusPageURL %q: registered status page %q, home page %q; want %q", c.given, in.StatusPageURL, in.HomePageURL, c.want)
		}
	}
}

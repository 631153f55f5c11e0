package registry

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// cluster is a set of DataNode-like instances with 10 s renewals and 30 s
// leases, spread over racks and apps, that a test keeps alive selectively.
type cluster struct {
	t     *testing.T
	r     *Registry
	clk   *fakeClock
	nodes []*heureka.Instance
	// stagger spreads the renewals over each 10 s interval, node k renewing
	// k seconds into it (mod 10), as real clients do; otherwise every node
	// renews on the same second.
	stagger bool
}

func newCluster(t *testing.T, racks, apps, perRackApp int, mutate ...func(*Config)) *cluster {
	cfgs := append([]func(*Config){func(c *Config) {
		c.SelfPreservation = ModeSmart
		c.PauseThreshold = 5 * time.Second
	}}, mutate...)
	r, clk := newTestRegistry(t, cfgs...)
	c := &cluster{t: t, r: r, clk: clk}
	for rk := range racks {
		for a := range apps {
			for i := range perRackApp {
				in := inst(fmt.Sprintf("APP%d", a), fmt.Sprintf("r%d-a%d-%d", rk, a, i), func(in *heureka.Instance) {
					in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 10, 30
					in.Metadata = in.Metadata.With("rack", fmt.Sprintf("/rack%d", rk))
				})
				mustRegister(t, r, in)
				c.nodes = append(c.nodes, in)
			}
		}
	}
	return c
}

// run advances the clock one second at a time for d, ticking each second;
// every 10 s the instances for which alive returns true renew.
func (c *cluster) run(d time.Duration, alive func(*heureka.Instance) bool) {
	for s := time.Duration(0); s < d; s += time.Second {
		c.clk.Advance(time.Second)
		for k, in := range c.nodes {
			sec := c.clk.Now().Unix()
			if c.stagger {
				sec += int64(k)
			}
			if sec%10 != 0 || !alive(in) {
				continue
			}
			if _, err := c.r.Renew(RenewRequest{App: in.App, ID: in.ID}); err != nil {
				c.t.Fatalf("renew %s: %v", in, err)
			}
		}
		c.r.Tick()
	}
}

func (c *cluster) alive() int { return c.r.Snapshot().Len() }

func everyone(*heureka.Instance) bool { return true }

func TestSmartSelfPreservation(t *testing.T) {
	tests := []struct {
		name           string
		racks, apps    int
		perRackApp     int
		dead           func(*heureka.Instance) bool
		wantProtecting bool
	}{
		{"isolated death is evicted", 4, 2, 3, func(in *heureka.Instance) bool { return in.ID == "r1-a0-0" }, false},
		{"two deaths in different racks are evicted", 4, 2, 3, func(in *heureka.Instance) bool { return in.ID == "r1-a0-0" || in.ID == "r2-a1-2" }, false},
		{"one rack of four lost is evicted", 4, 2, 3, func(in *heureka.Instance) bool { return strings.HasPrefix(in.ID, "r0-") }, false},
		{"one rack of two lost (half of everything) is evicted", 2, 2, 3, func(in *heureka.Instance) bool { return strings.HasPrefix(in.ID, "r0-") }, false},
		{"one app lost in every rack is evicted", 4, 2, 3, func(in *heureka.Instance) bool { return in.App == "APP0" }, false},
		{"the only instance of a one-node cluster is evicted", 1, 1, 1, everyone, false},
		{"60% across all racks and apps is protected", 4, 2, 5, func(in *heureka.Instance) bool {
			return !strings.HasSuffix(in.ID, "-3") && !strings.HasSuffix(in.ID, "-4")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, tt.racks, tt.apps, tt.perRackApp)
			c.run(40*time.Second, everyone)
			dead := 0
			for _, in := range c.nodes {
				if tt.dead(in) {
					dead++
				}
			}
			// The dead stop at once; leases are 30 s, so 45 s covers expiry.
			c.run(45*time.Second, func(in *heureka.Instance) bool { return !tt.dead(in) })
			p := c.r.Protection()
			if p.Active != tt.wantProtecting {
				t.Fatalf("protecting = %v (%s), want %v", p.Active, p.Reason, tt.wantProtecting)
			}
			want := len(c.nodes) - dead
			if tt.wantProtecting {
				want = len(c.nodes)
				if p.Reason == "" || p.Expired != dead {
					t.Errorf("protection %+v: want a reason and %d expired", p, dead)
				}
			}
			if got := c.alive(); got != want {
				t.Fatalf("%d instances registered, want %d", got, want)
			}
		})
	}
}

// TestSmartSeesAStaggeredLossWhole: real clients renew at their own moments
// in the interval, so when the registry is cut off from them their leases
// run out one by one over a whole interval. Protection must see the loss
// whole before the first eviction, not let the first few go as isolated
// deaths. A single death among staggered renewals is still evicted on time.
func TestSmartSeesAStaggeredLossWhole(t *testing.T) {
	for _, lease := range []int{30, 15, 10} { // 10 s renewals
		t.Run(fmt.Sprintf("lease=%ds", lease), func(t *testing.T) {
			c := newCluster(t, 4, 2, 5)
			c.stagger = true
			for _, in := range c.nodes {
				in.Lease.DurationSecs = lease
				mustRegister(t, c.r, in)
			}
			c.run(40*time.Second, everyone)
			c.run(time.Duration(lease+20)*time.Second, func(*heureka.Instance) bool { return false })
			p := c.r.Protection()
			if !p.Active || p.Expired != len(c.nodes) {
				t.Fatalf("protection %+v, want active over all %d expired", p, len(c.nodes))
			}
			if got := c.alive(); got != len(c.nodes) {
				t.Fatalf("%d instances left of %d: a staggered mass loss was evicted piecemeal", got, len(c.nodes))
			}

			c = newCluster(t, 4, 2, 5)
			c.stagger = true
			for _, in := range c.nodes {
				in.Lease.DurationSecs = lease
				mustRegister(t, c.r, in)
			}
			c.run(40*time.Second, everyone)
			dead := c.nodes[7]
			var gone time.Duration
			for s := time.Second; s <= 60*time.Second && gone == 0; s += time.Second {
				c.run(time.Second, func(in *heureka.Instance) bool { return in != dead })
				if _, ok := c.r.LastRenewal(dead.App, dead.ID); !ok {
					gone = s
				}
			}
			// It goes once it has expired and every lease that stopped with
			// it would have fallen silent: max(lease, 2.5 intervals) after
			// its last renewal, which was up to an interval before it
			// stopped; and a tick.
			if limit := time.Duration(max(lease, 25)+10+1) * time.Second; gone == 0 || gone > limit {
				t.Fatalf("the dead node went after %s, want within %s", gone, limit)
			}
			if p := c.r.Protection(); p.Active {
				t.Fatalf("protecting over one death: %+v", p)
			}
		})
	}
}

func TestSmartProtectionExitsWhenRenewalsRecover(t *testing.T) {
	c := newCluster(t, 4, 2, 5)
	c.run(40*time.Second, everyone)
	half := func(in *heureka.Instance) bool {
		return strings.HasSuffix(in.ID, "-0") || strings.HasSuffix(in.ID, "-1")
	}
	c.run(45*time.Second, half)
	if !c.r.Protection().Active {
		t.Fatal("not protecting after 60% stopped renewing")
	}
	// The partition heals: everyone's renewals arrive again.
	c.run(20*time.Second, everyone)
	if p := c.r.Protection(); p.Active {
		t.Fatalf("still protecting after renewals recovered: %+v", p)
	}
	if got := c.alive(); got != len(c.nodes) {
		t.Fatalf("%d instances, want all %d back", got, len(c.nodes))
	}
}

func TestSmartProtectionIsBounded(t *testing.T) {
	c := newCluster(t, 4, 2, 5, func(cfg *Config) { cfg.MaxProtection = 2 * time.Minute })
	c.run(40*time.Second, everyone)
	live := func(in *heureka.Instance) bool {
		return strings.HasSuffix(in.ID, "-0") || strings.HasSuffix(in.ID, "-1")
	}
	c.run(90*time.Second, live)
	if !c.r.Protection().Active {
		t.Fatal("not protecting")
	}
	c.run(2*time.Minute, live)
	if got := c.alive(); got != 16 {
		t.Fatalf("%d instances after the protection limit, want the 16 live ones", got)
	}
	if p := c.r.Protection(); p.Active {
		t.Fatalf("still protecting after the limit: %+v", p)
	}
}

func TestSmartProtectsWhenPeersAreUnreachable(t *testing.T) {
	c := newCluster(t, 4, 2, 5)
	c.run(40*time.Second, everyone)
	c.r.SetPeers(0, 2)
	// 25% stop renewing, all in one rack: alone that is an isolated loss,
	// but this peer also lost both of its peers.
	c.run(45*time.Second, func(in *heureka.Instance) bool { return !strings.HasPrefix(in.ID, "r0-") })
	p := c.r.Protection()
	if !p.Active || !strings.Contains(p.Reason, "reaches none of its 2 peers") {
		t.Fatalf("protection %+v, want active because the peers are gone", p)
	}
	c.r.SetPeers(2, 2)
	c.run(2*time.Second, everyone)
	if got := c.alive(); got != 30 {
		t.Fatalf("%d instances once the peers are back, want the rack evicted (30 left)", got)
	}
}

func TestPausedProcessGivesGrace(t *testing.T) {
	c := newCluster(t, 2, 1, 5, func(cfg *Config) { cfg.SelfPreservation = ModeOff })
	c.run(20*time.Second, everyone)
	// The server is stopped for a minute (SIGSTOP, a VM freeze): no ticks,
	// and no renewals reach it. Every 30 s lease is past due when it wakes.
	c.clk.Advance(time.Minute)
	if n := c.r.Tick(); n != 0 {
		t.Fatalf("%d evicted right after the pause, want grace", n)
	}
	// The instances are alive and renew on their next beat.
	c.run(30*time.Second, everyone)
	if got := c.alive(); got != 10 {
		t.Fatalf("%d instances, want all 10", got)
	}
	// A node that really died after the pause is still evicted on time.
	c.run(45*time.Second, func(in *heureka.Instance) bool { return in.ID != "r0-a0-0" })
	if got := c.alive(); got != 9 {
		t.Fatalf("%d instances, want 9 once the dead one expired", got)
	}
}

func TestExpectedRenewalsFollowEachLease(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "fast", func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs = 10 }))
	mustRegister(t, r, inst("DN", "slow", func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs = 30 }))
	r.Tick()
	if got := r.Protection().ExpectedRenewsPerMinute; got != 8 {
		t.Fatalf("expected renewals per minute = %v, want 6 + 2 = 8", got)
	}
	if err := r.Cancel(CancelRequest{App: "DN", ID: "fast"}); err != nil {
		t.Fatal(err)
	}
	r.Tick()
	if got := r.Protection().ExpectedRenewsPerMinute; got != 2 {
		t.Fatalf("after cancel: %v, want 2", got)
	}
}

func TestProtectionChangesAreNoticedInTheChangeLog(t *testing.T) {
	c := newCluster(t, 4, 2, 5)
	c.run(40*time.Second, everyone)
	_, v, _ := c.r.ChangesSince(0)
	half := func(in *heureka.Instance) bool {
		return strings.HasSuffix(in.ID, "-0") || strings.HasSuffix(in.ID, "-1")
	}
	c.run(45*time.Second, half)
	c.run(20*time.Second, everyone)
	changes, _, _ := c.r.ChangesSince(v)
	var kinds []string
	for _, ch := range changes {
		if ch.Notice != nil {
			kinds = append(kinds, string(ch.Notice.Kind))
			if ch.Notice.Detail == "" {
				t.Errorf("notice %s without a reason", ch.Notice.Kind)
			}
		}
	}
	if fmt.Sprint(kinds) != "[self_preservation_entered self_preservation_left]" {
		t.Fatalf("notices %v, want entered then left", kinds)
	}
	if d := c.r.Snapshot().Delta(); len(d.Apps) == 0 {
		t.Fatal("delta empty") // notices must not break the delta
	}
}

// TestAClockStepIsGraced: a forward step of the clock smaller than
// PauseThreshold (here 2.8 s against 3 s leases) is no time in which
// clients could renew: with Elapsed to compare against, leases get it as
// grace; without, the step expires them.
func TestAClockStepIsGraced(t *testing.T) {
	for _, withElapsed := range []bool{true, false} {
		t.Run(fmt.Sprintf("elapsed=%v", withElapsed), func(t *testing.T) {
			var real atomic.Int64
			r, clk := newTestRegistry(t, func(c *Config) {
				c.SelfPreservation = ModeOff
				c.PauseThreshold = 5 * time.Second
				if withElapsed {
					c.Elapsed = func() time.Duration { return time.Duration(real.Load()) }
				}
			})
			mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 1, 3 }))
			step := func(clock, elapsed time.Duration) int {
				clk.Advance(clock)
				real.Add(int64(elapsed))
				return r.Tick()
			}
			step(0, 0)
			step(500*time.Millisecond, 500*time.Millisecond)
			if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
				t.Fatal(err)
			}
			evicted := step(500*time.Millisecond+2800*time.Millisecond, 500*time.Millisecond)
			evicted += step(500*time.Millisecond, 500*time.Millisecond)
			switch {
			case withElapsed && evicted != 0:
				t.Fatalf("a 2.8 s step of the clock evicted %d lease(s) renewed 1 s of real time before", evicted)
			case !withElapsed && evicted != 1:
				t.Fatalf("without Elapsed the step evicted %d lease(s), want 1 (the test would not see the grace)", evicted)
			}
			if withElapsed {
				// A lease nobody renews still expires, one lease after.
				if n := step(3*time.Second, 3*time.Second); n != 1 {
					t.Fatalf("%d evicted a lease after the last renewal, want 1", n)
				}
			}
		})
	}
}

// stormTicks runs ticks every half second for d, registering perTick
// instances with long leases before each: a registration storm, or not,
// depending on the rate against StormRate.
func stormTicks(t *testing.T, r *Registry, clk *fakeClock, d time.Duration, perTick int) {
	t.Helper()
	long := func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 200, 600 }
	for i := 0; time.Duration(i)*500*time.Millisecond < d; i++ {
		clk.Advance(500 * time.Millisecond)
		for j := range perTick {
			mustRegister(t, r, inst("STORM", fmt.Sprintf("s%d-%d", i, j), long))
		}
		if n := r.Tick(); n != 0 {
			t.Fatalf("evicted %d during the storm", n)
		}
	}
}

// TestStormStandsTheLeaseClockStill: while registrations arrive at
// StormRate or more, every lease gets the time as grace, so an instance
// whose heartbeats may be stuck behind the storm is not evicted for it. A
// dip of one tick does not end the storm; two calm seconds do, and count
// in it. The storm shows in the protection state; once it is over, leases
// run again, and a dead instance goes one storm late, not minutes late.
func TestStormStandsTheLeaseClockStill(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.StormRate, c.StormHold = 100, 2*time.Minute })
	lease := func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 10, 30 }
	mustRegister(t, r, inst("DN", "dead", lease))
	alive := func() bool { _, ok := r.Snapshot().Instance("DN", "dead"); return ok }
	began := clk.Now()
	r.Tick()

	stormTicks(t, r, clk, 5*time.Second, 60) // 120 a second
	stormTicks(t, r, clk, 500*time.Millisecond, 0)
	stormTicks(t, r, clk, 4500*time.Millisecond, 60)
	if p := r.Protection(); !p.StormSince.Equal(began) || p.Active {
		t.Errorf("protection during the storm: %+v; want one storm since %v, nothing held", p, began)
	}
	stormTicks(t, r, clk, 1500*time.Millisecond, 0)
	if p := r.Protection(); p.StormSince.IsZero() {
		t.Errorf("protection 1.5 s after the last registration: %+v; want the storm still on", p)
	}
	stormTicks(t, r, clk, 500*time.Millisecond, 0) // two calm seconds: over, 12 s in all
	if p := r.Protection(); !p.StormSince.IsZero() {
		t.Errorf("protection after the storm: %+v; want no storm", p)
	}

	clk.Advance(29*time.Second + 500*time.Millisecond) // 41.5 s on the wall, 29.5 s on the lease clock
	if n := r.Tick(); n != 0 || !alive() {
		t.Fatalf("evicted %d 29.5 s into a 30 s lease, the storm's 12 s aside", n)
	}
	clk.Advance(time.Second) // 30.5 s of lease
	if n := r.Tick(); n != 1 || alive() {
		t.Fatalf("30.5 s into a 30 s lease after the storm: evicted %d, alive %v; want it evicted", n, alive())
	}
}

// TestNoStormEvictsFromTheFirstSecond: a small fleet registering at once
// makes no storm, so a registry that has just started evicts a dead node
// on time, as a restarted peer in a small cluster must.
func TestNoStormEvictsFromTheFirstSecond(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.StormRate = DefaultConfig().StormRate })
	lease := func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 1, 3 }
	r.Tick()
	for i := range 18 {
		mustRegister(t, r, inst("DN", fmt.Sprintf("n%02d", i), lease))
	}
	clk.Advance(500 * time.Millisecond)
	r.Tick()
	// n00 dies; the others renew every second.
	for range 7 {
		clk.Advance(500 * time.Millisecond)
		for i := 1; i < 18; i++ {
			if _, err := r.Renew(RenewRequest{App: "DN", ID: fmt.Sprintf("n%02d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		r.Tick()
	}
	if _, ok := r.Snapshot().Instance("DN", "n00"); ok {
		t.Fatalf("a dead node 4 s into a 3 s lease, in the registry's first seconds, is still served: %+v", r.Protection())
	}
	if p := r.Protection(); !p.StormSince.IsZero() || p.Active {
		t.Errorf("protection: %+v; want no storm, nothing held", p)
	}
}

// TestStormHoldBoundsTheGrace: a storm that lasts longer than StormHold
// gives no more than StormHold: it is the registry's normal load.
func TestStormHoldBoundsTheGrace(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.StormRate, c.StormHold = 100, 4*time.Second })
	lease := func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 10, 30 }
	mustRegister(t, r, inst("DN", "dead", lease))
	r.Tick()
	stormTicks(t, r, clk, 10*time.Second, 60)
	if p := r.Protection(); !p.StormSince.IsZero() {
		t.Errorf("protection once the storm outlasted its hold: %+v; want no storm shown", p)
	}
	clk.Advance(20*time.Second + 500*time.Millisecond) // 30.5 s on the wall, 26.5 s of lease
	if n := r.Tick(); n != 0 {
		t.Fatalf("evicted %d 26.5 s into a 30 s lease", n)
	}
	clk.Advance(4 * time.Second) // 30.5 s of lease: 4 s of grace, not 10
	if n := r.Tick(); n != 1 {
		t.Fatalf("evicted %d 30.5 s into a 30 s lease, past a 4 s storm hold; want 1", n)
	}
}

// TestStormingInEveryMode: whatever the self-preservation mode, Storming
// says whether the last tick counted StormRate registrations a second, so
// that work that can wait (the listing encoder's) yields to a storm; with
// StormRate 0 there is never one.
func TestStormingInEveryMode(t *testing.T) {
	for _, mode := range []Mode{ModeOff, ModeEureka, ModeSmart} {
		r, clk := newTestRegistry(t, func(c *Config) { c.SelfPreservation, c.StormRate = mode, 100 })
		r.Tick()
		stormTicks(t, r, clk, time.Second, 60) // 120 a second
		if !r.Storming() {
			t.Errorf("%s: not storming at 120 registrations a second", mode)
		}
		stormTicks(t, r, clk, 500*time.Millisecond, 40) // 80 a second
		if r.Storming() {
			t.Errorf("%s: storming at 80 registrations a second", mode)
		}
	}
	r, clk := newTestRegistry(t) // StormRate 0
	r.Tick()
	stormTicks(t, r, clk, time.Second, 600)
	if r.Storming() {
		t.Errorf("storming with StormRate 0")
	}
}

func TestRenewsMeasuredAfterTheFirstMinute(t *testing.T) {
	r, clk := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	for range 5 {
		clk.Advance(10 * time.Second)
		if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
			t.Fatal(err)
		}
		r.Tick()
	}
	// 50 s in: no window has closed, so the 0 means "not measured yet".
	if p := r.Protection(); p.RenewsMeasured || p.RenewsLastMinute != 0 {
		t.Fatalf("after 50 s: measured %v, %d renewals", p.RenewsMeasured, p.RenewsLastMinute)
	}
	clk.Advance(10 * time.Second)
	r.Tick()
	if p := r.Protection(); !p.RenewsMeasured || p.RenewsLastMinute != 5 {
		t.Fatalf("after a minute: measured %v, %d renewals, want 5", p.RenewsMeasured, p.RenewsLastMinute)
	}
}

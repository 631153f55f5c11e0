package registry

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

// recount is the census the old tick computed by walking every lease: the
// truth the incremental counts must match. marked counts the leases marked
// silent, per domain; silent (at now) is what the marks must be right after
// a tick.
type recounted struct {
	instances      int
	expectedMilli  int64
	racks, apps    map[string]domainCount
	silent, marked map[*lease]bool
	rackHit, appHt int
}

func recount(r *Registry, now time.Time) recounted {
	c := recounted{racks: map[string]domainCount{}, apps: map[string]domainCount{}, silent: map[*lease]bool{}, marked: map[*lease]bool{}}
	for name, a := range r.apps {
		for _, l := range a.leases {
			c.instances++
			c.expectedMilli += renewsPerMinMilli(l.inst)
			marked := 0
			if l.silent {
				marked = 1
				c.marked[l] = true
			}
			// Silent by the definition, in real time: the last renewal
			// (grace included) is more than one and a half intervals and
			// half the lease ago, or the lease has expired.
			iv := min(time.Duration(max(l.inst.lease.RenewalIntervalSecs, 1))*time.Second, l.duration)
			if now.UnixNano() > r.lastRenewal(l)+int64(min(max(iv*3/2, l.duration/2), l.duration)) {
				c.silent[l] = true
			}
			rk := c.racks[rackOf(l.inst)]
			c.racks[rackOf(l.inst)] = domainCount{rk.instances + 1, rk.silent + marked}
			ap := c.apps[name]
			c.apps[name] = domainCount{ap.instances + 1, ap.silent + marked}
		}
	}
	for _, d := range c.racks {
		if d.silent > 0 {
			c.rackHit++
		}
	}
	for _, d := range c.apps {
		if d.silent > 0 {
			c.appHt++
		}
	}
	return c
}

// checkBookkeeping compares the incremental state with a recount; afterTick
// also requires the silent marks to be exactly the leases silent at now.
func checkBookkeeping(t *testing.T, r *Registry, now time.Time, afterTick bool, step string) {
	t.Helper()
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := recount(r, now)
	if r.census.instances != c.instances || r.census.expectedMilli != c.expectedMilli {
		t.Fatalf("%s: census has %d instances and %d expected, a recount %d and %d",
			step, r.census.instances, r.census.expectedMilli, c.instances, c.expectedMilli)
	}
	if !maps.Equal(r.census.racks.m, c.racks) || r.census.racks.hit != c.rackHit {
		t.Fatalf("%s: racks %v (%d hit), a recount %v (%d hit)", step, r.census.racks.m, r.census.racks.hit, c.racks, c.rackHit)
	}
	if !maps.Equal(r.census.apps.m, c.apps) || r.census.apps.hit != c.appHt {
		t.Fatalf("%s: apps %v (%d hit), a recount %v (%d hit)", step, r.census.apps.m, r.census.apps.hit, c.apps, c.appHt)
	}
	if afterTick && !maps.Equal(c.marked, c.silent) {
		t.Fatalf("%s: %d leases marked silent, %d silent", step, len(c.marked), len(c.silent))
	}
	// Every live lease is in the queue or in the silent list, where its
	// index says; the queue is a heap whose times are never later than
	// when the leases really fall silent.
	if len(r.expiry)+len(r.silent) != c.instances {
		t.Fatalf("%s: %d queued and %d silent for %d instances", step, len(r.expiry), len(r.silent), c.instances)
	}
	for i, it := range r.expiry {
		if it.l.silent || int(it.l.idx) != i {
			t.Fatalf("%s: queue item %d has lease at %d (silent %v)", step, i, it.l.idx, it.l.silent)
		}
		if it.at > it.l.quietAt() {
			t.Fatalf("%s: queue item %d is due at %d, after its lease falls silent at %d", step, i, it.at, it.l.quietAt())
		}
		if p := (i - 1) / 2; i > 0 && r.expiry[p].at > it.at {
			t.Fatalf("%s: queue item %d is due before its parent", step, i)
		}
	}
	for i, l := range r.silent {
		if !l.silent || int(l.idx) != i {
			t.Fatalf("%s: silent lease %d has index %d (silent %v)", step, i, l.idx, l.silent)
		}
	}
}

// TestBookkeepingMatchesRecount drives a registry through random writes,
// renewals, clock moves (pauses and steps back included) and ticks, in each
// self-preservation mode, and after every step compares the incremental
// counts, the expiry queue and the silent list with a recount of every
// lease.
func TestBookkeepingMatchesRecount(t *testing.T) {
	for _, mode := range []Mode{ModeSmart, ModeEureka, ModeOff} {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("%s/seed=%d", mode, seed), func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(seed, 17))
				r, clk := newTestRegistry(t, func(c *Config) {
					c.SelfPreservation = mode
					c.PauseThreshold = 20 * time.Second
					c.MassLossFraction = 0.2 + rnd.Float64()*0.6
					c.Logger = discardLogger()
				})
				randomOps(t, rnd, r, clk, 3000)
			})
		}
	}
}

func randomOps(t *testing.T, rnd *rand.Rand, r *Registry, clk *fakeClock, steps int) {
	apps := []string{"NN", "DN", "JN"}
	newInstance := func(app, id string) *heureka.Instance {
		return inst(app, id, func(in *heureka.Instance) {
			in.Lease.RenewalIntervalSecs = 1 + rnd.IntN(30)
			in.Lease.DurationSecs = 5 + rnd.IntN(40)
			switch rnd.IntN(6) {
			case 0: // no rack: the availability zone is the domain
				in.Metadata = in.Metadata.Without("rack")
				in.DataCenter = heureka.DataCenterInfo{Name: heureka.DataCenterAmazon,
					Metadata: heureka.MetadataOf(map[string]string{"availability-zone": fmt.Sprintf("az%d", rnd.IntN(2))})}
			case 1: // neither: the empty domain
				in.Metadata = in.Metadata.Without("rack")
			default:
				in.Metadata = in.Metadata.With("rack", fmt.Sprintf("/rack%d", rnd.IntN(4)))
			}
		})
	}
	// pick returns a registered instance, or false.
	pick := func() (*heureka.Instance, bool) {
		s := r.Snapshot()
		n := s.Len()
		if n == 0 {
			return nil, false
		}
		k := rnd.IntN(n)
		for _, a := range s.Apps().Apps {
			if k < len(a.Instances) {
				return a.Instances[k], true
			}
			k -= len(a.Instances)
		}
		return nil, false
	}
	for step := range steps {
		var what string
		switch op := rnd.IntN(100); {
		case op < 15:
			what = "register"
			mustRegister(t, r, newInstance(apps[rnd.IntN(len(apps))], fmt.Sprintf("i%d", rnd.IntN(60))))
		case op < 45:
			what = "renew"
			if in, ok := pick(); ok {
				_, _ = r.Renew(RenewRequest{App: in.App, ID: in.ID}) // UNKNOWN status answers ENOTFOUND
			}
		case op < 50:
			what = "cancel"
			if in, ok := pick(); ok {
				if err := r.Cancel(CancelRequest{App: in.App, ID: in.ID}); err != nil {
					t.Fatal(err)
				}
			}
		case op < 55:
			what = "status"
			if in, ok := pick(); ok {
				st := []heureka.Status{heureka.StatusOutOfService, heureka.StatusUp}[rnd.IntN(2)]
				if err := r.SetStatus(in.App, in.ID, st, 0, false); err != nil {
					t.Fatal(err)
				}
			}
		case op < 58:
			what = "delete override"
			if in, ok := pick(); ok {
				if err := r.DeleteStatusOverride(in.App, in.ID, heureka.StatusUp, 0, false); err != nil {
					t.Fatal(err)
				}
			}
		case op < 63:
			what = "metadata"
			if in, ok := pick(); ok {
				if err := r.UpdateMetadata(in.App, in.ID, map[string]string{"rack": fmt.Sprintf("/rack%d", rnd.IntN(5))}); err != nil {
					t.Fatal(err)
				}
			}
		case op < 68:
			what = "adopt"
			in := newInstance(apps[rnd.IntN(len(apps))], fmt.Sprintf("i%d", rnd.IntN(60)))
			in.Lease.RegistrationTimestamp = clk.Now().UnixMilli()
			if _, err := r.Adopt(in, clk.Now().Add(-time.Duration(rnd.IntN(20))*time.Second)); err != nil {
				t.Fatal(err)
			}
		case op < 80:
			what = "clock"
			d := time.Duration(rnd.IntN(8000)) * time.Millisecond
			switch rnd.IntN(20) {
			case 0:
				d = time.Duration(25+rnd.IntN(60)) * time.Second // a pause
			case 1:
				d = -time.Duration(1+rnd.IntN(5)) * time.Second // a step back
			}
			clk.Advance(d)
		default:
			what = "tick"
			r.Tick()
			checkBookkeeping(t, r, clk.Now(), true, fmt.Sprintf("step %d (%s)", step, what))
			continue
		}
		checkBookkeeping(t, r, clk.Now(), false, fmt.Sprintf("step %d (%s)", step, what))
	}
}

// TestTickLooksOnlyAtWhatIsDue checks that a tick's cost follows the work:
// with 10k leases and none due it looks at none; with k expired it looks at
// about k.
func TestTickLooksOnlyAtWhatIsDue(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.SelfPreservation = ModeOff; c.Logger = discardLogger() })
	for i := range 10_000 {
		mustRegister(t, r, inst("DN", fmt.Sprintf("long-%d", i), func(in *heureka.Instance) {
			in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 1200, 3600
		}))
	}
	seen := func() int {
		r.tickMu.Lock()
		defer r.tickMu.Unlock()
		r.mu.RLock()
		defer r.mu.RUnlock()
		return r.advance(r.virtual(clk.Now()))
	}
	clk.Advance(time.Minute)
	if n := seen(); n != 0 {
		t.Fatalf("a tick with nothing due looked at %d leases", n)
	}
	for i := range 25 {
		mustRegister(t, r, inst("DN", fmt.Sprintf("short-%d", i), func(in *heureka.Instance) { in.Lease.DurationSecs = 10 }))
	}
	clk.Advance(11 * time.Second)
	if n := seen(); n != 25 {
		t.Fatalf("a tick with 25 leases due looked at %d", n)
	}
	if n := r.Tick(); n != 25 {
		t.Fatalf("evicted %d, want the 25 short leases", n)
	}
}

// TestRenewalsBeforeTheDeadlineAreSeenLazily checks the lazy re-insertion:
// a lease renewed since its queued deadline goes back with its new one, and
// expires only once that passes.
func TestRenewalsBeforeTheDeadlineAreSeenLazily(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.SelfPreservation = ModeOff })
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.Lease.DurationSecs = 30 }))
	for range 5 {
		clk.Advance(20 * time.Second)
		if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
			t.Fatal(err)
		}
		if n := r.Tick(); n != 0 {
			t.Fatalf("evicted %d of a lease renewed every 20 s", n)
		}
	}
	clk.Advance(30 * time.Second)
	if n := r.Tick(); n != 0 {
		t.Fatal("evicted at the deadline itself; a lease expires after it")
	}
	clk.Advance(time.Millisecond)
	if n := r.Tick(); n != 1 {
		t.Fatalf("evicted %d just after the deadline, want 1", n)
	}
}

// TestRenewAfterClockStepsBack checks that a renewal moving the deadline
// back (the wall clock was stepped back) is honoured: the lease expires a
// lease duration after that renewal, not after the earlier, later-dated
// one.
func TestRenewAfterClockStepsBack(t *testing.T) {
	r, clk := newTestRegistry(t, func(c *Config) { c.SelfPreservation = ModeOff })
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.Lease.DurationSecs = 30 }))
	clk.Advance(-10 * time.Second)
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(30*time.Second + time.Millisecond)
	if n := r.Tick(); n != 1 {
		t.Fatalf("evicted %d, want the lease gone 30 s after its last renewal", n)
	}
}

package registry

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/heureka-project/heureka"

	"github.com/heureka-project/heureka/internal/testclock"
)

// fakeClock is a clock tests move by hand.
type fakeClock = testclock.Clock

func newTestRegistry(t *testing.T, mutate ...func(*Config)) (*Registry, *fakeClock) {
	t.Helper()
	clk := testclock.New(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	cfg := DefaultConfig()
	cfg.Clock = clk.Now
	cfg.PauseThreshold = 0 // tests jump the clock between ticks
	cfg.StormRate = 0      // tests register faster than any fleet between ticks (the storm tests turn it on)
	for _, m := range mutate {
		m(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

func inst(app, id string, mutate ...func(*heureka.Instance)) *heureka.Instance {
	in := &heureka.Instance{
		ID: id, App: app, HostName: id + ".example", IPAddr: "127.0.0.1",
		Status: heureka.StatusUp, Port: heureka.Port{Number: 8080, Enabled: true},
		Metadata: heureka.MetadataOf(map[string]string{"rack": "/r1"}),
	}
	for _, m := range mutate {
		m(in)
	}
	in.Normalize()
	return in
}

func mustRegister(t *testing.T, r *Registry, in *heureka.Instance) {
	t.Helper()
	if err := r.Register(in, false); err != nil {
		t.Fatalf("register %s: %v", in, err)
	}
}

func get(t *testing.T, r *Registry, app, id string) *heureka.Instance {
	t.Helper()
	in, ok := r.Snapshot().Instance(app, id)
	if !ok {
		t.Fatalf("%s/%s is not in the registry", app, id)
	}
	return in
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := heureka.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}

func TestRegisterDefaultsAndReadAfterWrite(t *testing.T) {
	r, clk := newTestRegistry(t)
	before := r.Snapshot().Version
	mustRegister(t, r, inst("DN", "a"))
	s := r.Snapshot()
	if s.Version != before+1 {
		t.Fatalf("version %d after one write, want %d", s.Version, before+1)
	}
	in := get(t, r, "DN", "a")
	if in.Lease.DurationSecs != 90 || in.Lease.RenewalIntervalSecs != 30 {
		t.Errorf("lease %+v, want Eureka's 30 s/90 s defaults", in.Lease)
	}
	now := clk.Now().UnixMilli()
	if in.Lease.RegistrationTimestamp != now || in.Lease.ServiceUpTimestamp != now || in.LastDirtyTimestamp != now {
		t.Errorf("timestamps %+v dirty %d, want %d", in.Lease, in.LastDirtyTimestamp, now)
	}
	if in.ActionType != heureka.ActionAdded {
		t.Errorf("actionType %q, want ADDED", in.ActionType)
	}
	if got := s.Apps().HashCode; got != "UP_1_" {
		t.Errorf("hash code %q, want UP_1_", got)
	}
}

func TestExpiryAtLastRenewalPlusDuration(t *testing.T) {
	tests := []struct {
		name      string
		renewAt   time.Duration // 0: never renewed
		checkAt   time.Duration
		wantAlive bool
	}{
		{"exactly at expiry", 0, 30 * time.Second, true},
		{"just past expiry", 0, 30*time.Second + time.Millisecond, false},
		{"renewed, not yet expired", 20 * time.Second, 50 * time.Second, true},
		{"renewed, expired one lease after renewal (no doubling)", 20 * time.Second, 50*time.Second + time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, clk := newTestRegistry(t)
			mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 10, 30 }))
			if tt.renewAt > 0 {
				clk.Advance(tt.renewAt)
				if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
					t.Fatal(err)
				}
				clk.Advance(tt.checkAt - tt.renewAt)
			} else {
				clk.Advance(tt.checkAt)
			}
			r.Tick()
			_, alive := r.Snapshot().Instance("DN", "a")
			if alive != tt.wantAlive {
				t.Fatalf("alive = %v, want %v", alive, tt.wantAlive)
			}
			if !alive {
				d := r.Snapshot().Delta()
				if len(d.Apps) != 1 || d.Apps[0].Instances[0].ActionType != heureka.ActionDeleted {
					t.Fatalf("delta after eviction = %+v, want one DELETED entry", d.Apps)
				}
				if r.Stats().Evictions != 1 {
					t.Errorf("evictions = %d, want 1", r.Stats().Evictions)
				}
			}
		})
	}
}

func TestRenewUnknownIsNotFound(t *testing.T) {
	r, _ := newTestRegistry(t)
	_, err := r.Renew(RenewRequest{App: "DN", ID: "nope"})
	wantCode(t, err, heureka.ENOTFOUND)
	wantCode(t, r.Cancel(CancelRequest{App: "DN", ID: "nope"}), heureka.ENOTFOUND)
	wantCode(t, r.SetStatus("DN", "nope", heureka.StatusOutOfService, 0, false), heureka.ENOTFOUND)
	wantCode(t, r.DeleteStatusOverride("DN", "nope", "", 0, false), heureka.ENOTFOUND)
	wantCode(t, r.UpdateMetadata("DN", "nope", map[string]string{"a": "b"}), heureka.ENOTFOUND)
}

func TestOverridePrecedence(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))

	// An operator drains the node: the override survives renewals and a
	// re-registration that says UP.
	if err := r.SetStatus("DN", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, r, inst("DN", "a"))
	in := get(t, r, "DN", "a")
	if in.Status != heureka.StatusOutOfService || in.OverriddenStatus != heureka.StatusOutOfService {
		t.Fatalf("after re-register: status %s override %s, want OUT_OF_SERVICE both", in.Status, in.OverriddenStatus)
	}

	// An instance that says it is DOWN is believed, override or not.
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.Status = heureka.StatusDown }))
	if got := get(t, r, "DN", "a").Status; got != heureka.StatusDown {
		t.Fatalf("status %s after registering DOWN, want DOWN", got)
	}

	// UP through the status endpoint brings it back.
	mustRegister(t, r, inst("DN", "a"))
	if err := r.SetStatus("DN", "a", heureka.StatusUp, 0, false); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, "DN", "a").Status; got != heureka.StatusUp {
		t.Fatalf("status %s after override UP, want UP", got)
	}

	// Deleting the override without a value leaves UNKNOWN; the next renew
	// asks the client to register again, which restores UP.
	if err := r.DeleteStatusOverride("DN", "a", "", 0, false); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, "DN", "a").Status; got != heureka.StatusUnknown {
		t.Fatalf("status %s after deleting the override, want UNKNOWN", got)
	}
	_, err := r.Renew(RenewRequest{App: "DN", ID: "a"})
	wantCode(t, err, heureka.ENOTFOUND)
	mustRegister(t, r, inst("DN", "a"))
	in = get(t, r, "DN", "a")
	if in.Status != heureka.StatusUp || in.OverriddenStatus != heureka.StatusUnknown {
		t.Fatalf("after re-register: status %s override %s, want UP and UNKNOWN", in.Status, in.OverriddenStatus)
	}
}

func TestClientCannotTakeItselfOutOfService(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.Status = heureka.StatusOutOfService }))
	if got := get(t, r, "DN", "a").Status; got != heureka.StatusUp {
		t.Fatalf("status %s, want UP kept (Eureka's LeaseExistsRule)", got)
	}
	// A replication carries the peer's decision and is taken as is.
	if err := r.Register(inst("DN", "a", func(in *heureka.Instance) { in.Status = heureka.StatusOutOfService }), true); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, "DN", "a").Status; got != heureka.StatusOutOfService {
		t.Fatalf("status %s after replicated register, want OUT_OF_SERVICE", got)
	}
}

func TestDeleteOverrideWithValue(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	if err := r.SetStatus("DN", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteStatusOverride("DN", "a", heureka.StatusUp, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatalf("renew after deleting the override with value=UP: %v", err)
	}
	if got := get(t, r, "DN", "a").Status; got != heureka.StatusUp {
		t.Fatalf("status %s, want UP", got)
	}
}

func TestLastDirtyTimestampConflicts(t *testing.T) {
	const stored = 5000
	tests := []struct {
		name        string
		incoming    int64
		replication bool
		wantCode    string
	}{
		{"absent", 0, false, ""},
		{"equal", stored, false, ""},
		{"client newer: register again", stored + 1, false, heureka.ENOTFOUND},
		{"client older: fine", stored - 1, false, ""},
		{"peer newer: register again", stored + 1, true, heureka.ENOTFOUND},
		{"peer older: conflict with our copy", stored - 1, true, heureka.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newTestRegistry(t)
			mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.LastDirtyTimestamp = stored }))
			got, err := r.Renew(RenewRequest{App: "DN", ID: "a", LastDirtyTimestamp: tt.incoming, Replication: tt.replication})
			wantCode(t, err, tt.wantCode)
			if tt.wantCode == heureka.ECONFLICT && (got == nil || got.LastDirtyTimestamp != stored) {
				t.Fatalf("conflict returned %+v, want the stored copy", got)
			}
		})
	}
}

func TestRegisterKeepsNewerStoredCopy(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) {
		in.LastDirtyTimestamp = 2000
		in.Metadata = in.Metadata.With("v", "new")
	}))
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) {
		in.LastDirtyTimestamp = 1000
		in.Metadata = in.Metadata.With("v", "old")
	}))
	if got := get(t, r, "DN", "a").Metadata.Get("v"); got != "new" {
		t.Fatalf("metadata v = %q, want the newer stored copy's %q", got, "new")
	}
	// A tie goes to the incoming copy.
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) {
		in.LastDirtyTimestamp = 2000
		in.Metadata = in.Metadata.With("v", "tie")
	}))
	if got := get(t, r, "DN", "a").Metadata.Get("v"); got != "tie" {
		t.Fatalf("metadata v = %q, want %q", got, "tie")
	}
}

func TestDeltaWindowAndHashCode(t *testing.T) {
	r, clk := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	mustRegister(t, r, inst("DN", "b"))
	clk.Advance(time.Minute)
	mustRegister(t, r, inst("NN", "c", func(in *heureka.Instance) { in.Status = heureka.StatusDown }))
	if err := r.SetStatus("DN", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}

	d := r.Snapshot().Delta()
	if d.HashCode != "DOWN_1_OUT_OF_SERVICE_1_UP_1_" {
		t.Errorf("delta hash code %q, want the whole registry's DOWN_1_OUT_OF_SERVICE_1_UP_1_", d.HashCode)
	}
	if d.VersionDelta != int64(r.Snapshot().Version) {
		t.Errorf("versions__delta %d, want %d", d.VersionDelta, r.Snapshot().Version)
	}
	got := deltaIDs(d)
	want := []string{"DN/b:ADDED", "DN/a:MODIFIED", "NN/c:ADDED"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delta %v, want %v (one entry per instance, latest state)", got, want)
	}

	// Two minutes later a's and b's registrations have left the window;
	// c and a's status change (both at +1 min) are still in it.
	clk.Advance(2*time.Minute + time.Millisecond)
	got = deltaIDs(r.Snapshot().Delta())
	want = []string{"DN/a:MODIFIED", "NN/c:ADDED"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delta at +3 min %v, want %v", got, want)
	}
	clk.Advance(time.Minute)
	if got := deltaIDs(r.Snapshot().Delta()); len(got) != 0 {
		t.Fatalf("delta at +4 min %v, want empty", got)
	}
}

func deltaIDs(d *heureka.Applications) []string {
	var out []string
	for _, a := range d.Apps {
		for _, in := range a.Instances {
			out = append(out, a.Name+"/"+in.ID+":"+string(in.ActionType))
		}
	}
	return out
}

func TestBadInputChangesNothing(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	before := r.Snapshot()

	big := map[string]string{}
	for i := range 65 {
		big[fmt.Sprintf("k%d", i)] = "v"
	}
	huge := map[string]string{"k": string(make([]byte, 9000))}
	tests := []struct {
		name string
		do   func() error
	}{
		{"no host name", func() error {
			return r.Register(inst("DN", "a", func(in *heureka.Instance) { in.HostName = "" }), false)
		}},
		{"id with a slash", func() error { return r.Register(inst("DN", "x/y"), false) }},
		{"id with a control character", func() error { return r.Register(inst("DN", "x\ny"), false) }},
		{"id too long", func() error { return r.Register(inst("DN", string(make([]byte, 300))), false) }},
		{"65 metadata entries", func() error {
			return r.Register(inst("DN", "a", func(in *heureka.Instance) { in.Metadata = heureka.MetadataOf(big) }), false)
		}},
		{"metadata update over 64 entries", func() error { return r.UpdateMetadata("DN", "a", big) }},
		{"metadata update over 8 KiB", func() error { return r.UpdateMetadata("DN", "a", huge) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, tt.do(), heureka.EINVALID)
			after := r.Snapshot()
			if after != before {
				t.Fatalf("the registry changed (version %d → %d)", before.Version, after.Version)
			}
		})
	}
}

func TestMetadataUpdateMerges(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	if err := r.UpdateMetadata("DN", "a", map[string]string{"disk_used": "10"}); err != nil {
		t.Fatal(err)
	}
	md := get(t, r, "DN", "a").Metadata
	if md.Get("rack") != "/r1" || md.Get("disk_used") != "10" {
		t.Fatalf("metadata %v, want rack kept and disk_used added", md)
	}
}

func TestVIP(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.VIPAddress = "hdfs,dn" }))
	mustRegister(t, r, inst("NN", "b", func(in *heureka.Instance) { in.VIPAddress = "hdfs"; in.SecureVIPAddress = "shdfs" }))
	mustRegister(t, r, inst("NN", "c", func(in *heureka.Instance) { in.VIPAddress = "hdfsx" }))
	s := r.Snapshot()
	if got := deltaIDs(s.VIP("hdfs", false)); fmt.Sprint(got) != "[DN/a:ADDED NN/b:ADDED]" {
		t.Errorf("vip hdfs = %v", got)
	}
	if got := deltaIDs(s.VIP("shdfs", true)); fmt.Sprint(got) != "[NN/b:ADDED]" {
		t.Errorf("svip shdfs = %v", got)
	}
	v := s.VIP("none", false)
	if len(v.Apps) != 0 || v.VersionDelta != -1 || v.HashCode != "" {
		t.Errorf("empty vip = %+v", v)
	}
}

func TestSelfPreservationEureka(t *testing.T) {
	for _, mode := range []Mode{ModeOff, ModeEureka} {
		t.Run(string(mode), func(t *testing.T) {
			r, clk := newTestRegistry(t, func(c *Config) { c.SelfPreservation = mode })
			const n = 20
			for i := range n {
				mustRegister(t, r, inst("DN", fmt.Sprint(i)))
			}
			// Two minutes of everyone renewing every 30 s: the window fills.
			for range 4 {
				clk.Advance(30 * time.Second)
				for i := range n {
					if _, err := r.Renew(RenewRequest{App: "DN", ID: fmt.Sprint(i)}); err != nil {
						t.Fatal(err)
					}
				}
				r.Tick()
			}
			if mode == ModeEureka && r.Stats().SelfPreservation {
				t.Fatal("protecting while everyone renews")
			}
			// Half the nodes die; the others renew for three more minutes.
			for range 6 {
				clk.Advance(30 * time.Second)
				for i := range n / 2 {
					if _, err := r.Renew(RenewRequest{App: "DN", ID: fmt.Sprint(i)}); err != nil {
						t.Fatal(err)
					}
				}
				r.Tick()
			}
			left := r.Snapshot().Len()
			switch mode {
			case ModeOff:
				if left != n/2 {
					t.Fatalf("%d instances left, want the %d live ones", left, n/2)
				}
			case ModeEureka:
				if !r.Stats().SelfPreservation {
					t.Fatal("not protecting after half the renewals vanished")
				}
				// The classic rule evicts at most 15% per run before the
				// threshold is crossed, then freezes: some dead remain.
				if left <= n/2 {
					t.Fatalf("%d instances left; the classic rule should have kept some dead ones", left)
				}
			}
		})
	}
}

func TestChangesSince(t *testing.T) {
	r, _ := newTestRegistry(t, func(c *Config) { c.ChangeLogSize = 3 })
	for i := range 10 {
		mustRegister(t, r, inst("DN", fmt.Sprint(i)))
	}
	s := r.Snapshot()
	ch, ok := s.Changes(s.Version - 2)
	if !ok || len(ch) != 2 || ch[0].Seq != s.Version-1 {
		t.Fatalf("changes since %d = %v %v", s.Version-2, ch, ok)
	}
	if _, ok := s.Changes(0); ok {
		t.Fatal("changes since 0 claimed to be complete after the log was trimmed")
	}
	if ch, ok := s.Changes(s.Version); !ok || len(ch) != 0 {
		t.Fatalf("changes since the current version = %v %v, want none", ch, ok)
	}
}

// TestChangeLogDropsWhatNoDeltaNeeds checks the log's time bound: changes
// younger than DeltaRetention stay however many there are (within
// ChangeLogSize), older ones leave once past changeLogFloor, and the ones
// that left are reported as not in the log.
func TestChangeLogDropsWhatNoDeltaNeeds(t *testing.T) {
	r, clk := newTestRegistry(t)
	const n = 2*changeLogFloor + 1
	for i := range n {
		mustRegister(t, r, inst("DN", "a", func(in *heureka.Instance) { in.Metadata = heureka.NewMetadata("i", fmt.Sprint(i)) }))
	}
	if _, _, ok := r.ChangesSince(0); !ok {
		t.Fatalf("%d changes inside the delta window were dropped", n)
	}
	clk.Advance(r.cfg.DeltaRetention + time.Second)
	mustRegister(t, r, inst("DN", "b"))
	_, latest, _ := r.ChangesSince(0)
	if _, _, ok := r.ChangesSince(0); ok {
		t.Fatal("changes older than the delta window, beyond the floor, are still in the log")
	}
	if ch, _, ok := r.ChangesSince(latest - changeLogFloor); !ok || len(ch) != changeLogFloor {
		t.Fatalf("the newest %d changes: %d kept, ok %v", changeLogFloor, len(ch), ok)
	}
}

// TestLeaseRackDoesNotPinMetadata checks that the rack a lease is counted
// in is not a slice of its instance's metadata, which would keep every
// replaced version's metadata block alive.
func TestLeaseRackDoesNotPinMetadata(t *testing.T) {
	r, _ := newTestRegistry(t)
	in := inst("DN", "a", func(in *heureka.Instance) {
		in.Metadata = heureka.NewMetadata("rack", "/dc1/r1", "disk_used", "1")
	})
	mustRegister(t, r, in) // the stored copy shares in's metadata block
	if err := r.UpdateMetadata("DN", "a", map[string]string{"disk_used": "2"}); err != nil {
		t.Fatal(err)
	}
	r.mu.RLock()
	l := r.lookup("DN", "a")
	rack, now := l.rack, l.inst.md.Get("rack")
	r.mu.RUnlock()
	if rack != "/dc1/r1" {
		t.Fatalf("rack %q", rack)
	}
	for _, md := range []string{in.Metadata.Get("rack"), now} {
		if unsafe.StringData(rack) == unsafe.StringData(md) {
			t.Fatal("the lease's rack is a slice of a version's metadata")
		}
	}
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	r, _ := newTestRegistry(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := fmt.Sprintf("%d-%d", w, i%20)
				mustRegister(t, r, inst("DN", id))
				r.Renew(RenewRequest{App: "DN", ID: id})
				if i%7 == 0 {
					r.Cancel(CancelRequest{App: "DN", ID: id})
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				s := r.Snapshot()
				n := 0
				for _, a := range s.Apps().Apps {
					n += len(a.Instances)
				}
				if got := heureka.ReconcileHashCode(s.Apps().Apps); got != s.Apps().HashCode {
					t.Errorf("snapshot hash %q does not match its contents %q", s.Apps().HashCode, got)
					return
				}
				s.Delta()
			}
		}()
	}
	wg.Wait()
}

// TestSnapshotMatchesRegistryUnderRandomChanges checks the patched views
// against the truth after every step of a random sequence of writes.
func TestSnapshotMatchesRegistryUnderRandomChanges(t *testing.T) {
	r, clk := newTestRegistry(t)
	rng := rand.New(rand.NewPCG(1, 2))
	truth := map[string]heureka.Status{}
	for range 60 { // a base large enough for patching to be used
		id := fmt.Sprintf("i%03d", rng.IntN(1000))
		mustRegister(t, r, inst("DN", id))
		truth[id] = heureka.StatusUp
	}
	r.Snapshot()
	for step := range 2000 {
		id := fmt.Sprintf("i%03d", rng.IntN(100))
		clk.Advance(time.Millisecond)
		switch rng.IntN(3) {
		case 0:
			mustRegister(t, r, inst("DN", id))
			if _, ok := truth[id]; !ok || truth[id] != heureka.StatusOutOfService {
				truth[id] = heureka.StatusUp
			}
		case 1:
			if r.Cancel(CancelRequest{App: "DN", ID: id}) == nil {
				delete(truth, id)
			}
		case 2:
			if r.SetStatus("DN", id, heureka.StatusOutOfService, 0, false) == nil {
				truth[id] = heureka.StatusOutOfService
			}
		}
		if rng.IntN(4) > 0 {
			continue
		}
		s := r.Snapshot()
		got := map[string]heureka.Status{}
		counts := heureka.StatusCounts{}
		prev := ""
		for _, a := range s.Apps().Apps {
			for _, in := range a.Instances {
				if in.ID <= prev {
					t.Fatalf("step %d: instances out of order: %q after %q", step, in.ID, prev)
				}
				prev = in.ID
				got[in.ID] = in.Status
				counts[in.Status]++
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(truth) {
			t.Fatalf("step %d: snapshot %v, want %v", step, got, truth)
		}
		if s.Apps().HashCode != counts.HashCode() {
			t.Fatalf("step %d: hash %q, want %q", step, s.Apps().HashCode, counts.HashCode())
		}
	}
}

func TestChangedWakesWaitersAndChangesSinceCarriesWhatChanged(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	_, v, ok := r.ChangesSince(0)
	if !ok || v != 1 {
		t.Fatalf("ChangesSince(0) latest %d ok %v, want 1 true", v, ok)
	}
	ch := r.Changed()
	select {
	case <-ch:
		t.Fatal("Changed fired with no change")
	default:
	}
	if err := r.SetStatus("DN", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Changed did not fire after a change")
	}
	changes, latest, ok := r.ChangesSince(v)
	if !ok || latest != 2 || len(changes) != 1 {
		t.Fatalf("ChangesSince(%d) = %d changes, latest %d, ok %v", v, len(changes), latest, ok)
	}
	c := changes[0]
	if c.Cause != "status" || c.PrevStatus != heureka.StatusUp || c.Instance().Status != heureka.StatusOutOfService || c.Changed != nil {
		t.Fatalf("change %+v: want cause status, UP → OUT_OF_SERVICE, no metadata", c)
	}
	if first, _, _ := r.ChangesSince(0); first[0].PrevStatus != "" {
		t.Errorf("a new registration's change has a status before it: %q", first[0].PrevStatus)
	}
	if err := r.UpdateMetadata("DN", "a", map[string]string{"rack": "/r2"}); err != nil {
		t.Fatal(err)
	}
	if last, _, _ := r.ChangesSince(latest); len(last) != 1 || !slices.Equal(last[0].Changed, []string{"rack"}) || last[0].PrevStatus != heureka.StatusOutOfService {
		t.Fatalf("metadata change %+v: want rack changed, status OUT_OF_SERVICE before", last)
	}
	if _, _, ok := r.ChangesSince(latest + 5); ok {
		t.Fatal("a version from the future was accepted")
	}
}

// TestRegisterCopiesAndRegisterOwnedAdopts checks both sides of the
// ownership rule: Register stores a copy, so the caller may go on changing
// its instance; RegisterOwned sets the registry's fields on the instance it
// is given, stores that, and still forwards it to the peers.
func TestRegisterCopiesAndRegisterOwnedAdopts(t *testing.T) {
	r, _ := newTestRegistry(t)
	var forwarded []Op
	r.SetForwarder(func(op Op) { forwarded = append(forwarded, op) })

	a := inst("APP", "a")
	mustRegister(t, r, a)
	a.Metadata = a.Metadata.With("rack", "/changed")
	a.HostName = "changed.example"
	if got := get(t, r, "APP", "a"); got == a || got.Metadata.Get("rack") != "/r1" || got.HostName != "a.example" {
		t.Fatalf("Register stored the caller's instance: %+v", got)
	}

	b := inst("APP", "b")
	if err := r.RegisterOwned(RegisterRequest{Instance: b}); err != nil {
		t.Fatal(err)
	}
	if b.ActionType != heureka.ActionAdded || b.Lease.RegistrationTimestamp == 0 {
		t.Fatalf("the given instance lacks the registry's fields: action %q, registered %d", b.ActionType, b.Lease.RegistrationTimestamp)
	}
	if got := get(t, r, "APP", "b"); !reflect.DeepEqual(got, b) {
		t.Fatalf("RegisterOwned stored\n%+v\nnot the instance it set up\n%+v", got, b)
	}

	if err := r.RegisterOwned(RegisterRequest{Instance: inst("APP", "c"), Replication: true}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, op := range forwarded {
		ids = append(ids, op.ID)
	}
	if !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("forwarded %v, want a and b (c came by replication)", ids)
	}
}

// TestSnapshotsBesideWritersMatchTheirVersion builds snapshots while four
// writers register, update and cancel in three applications, patching some
// applications' blocks and re-sorting others. A build reads the registry
// under its lock but makes the blocks after it, so each snapshot must still
// be exactly its own version: its listing, instance by instance, is what
// its change log replays to.
func TestSnapshotsBesideWritersMatchTheirVersion(t *testing.T) {
	r, _ := newTestRegistry(t, func(c *Config) { c.ChangeLogSize = 1 << 20 })
	apps := []string{"A", "B", "C"}
	for i := range 300 { // a base large enough for patching to be used
		mustRegister(t, r, inst(apps[i%3], fmt.Sprintf("i%03d", i)))
	}
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for k := range 3000 {
				app, id := apps[rng.IntN(3)], fmt.Sprintf("i%03d", rng.IntN(400))
				v := fmt.Sprintf("%d-%d", w, k)
				switch rng.IntN(5) {
				case 0:
					r.Cancel(CancelRequest{App: app, ID: id})
				case 1:
					r.UpdateMetadata(app, id, map[string]string{"v": v})
				default:
					mustRegister(t, r, inst(app, id, func(in *heureka.Instance) {
						in.Metadata = heureka.MetadataOf(map[string]string{"v": v})
					}))
				}
			}
		}()
	}
	builds := 0
	go func() { wg.Wait(); stop.Store(true) }()
	for !stop.Load() || builds == 0 {
		s := r.Snapshot()
		builds++
		want := map[string]string{} // app/id -> metadata v
		for _, c := range s.changes {
			in := c.Instance()
			key := in.App + "/" + in.ID
			if in.ActionType == heureka.ActionDeleted {
				delete(want, key)
			} else {
				want[key] = in.Metadata.Get("v")
			}
		}
		got := map[string]string{}
		for _, a := range s.full {
			prev := ""
			for _, b := range a.Blocks {
				for _, in := range b.Instances() {
					if in.ID <= prev {
						t.Fatalf("version %d, %s: %q after %q", s.Version, a.Name, in.ID, prev)
					}
					prev = in.ID
					got[in.App+"/"+in.ID] = in.Metadata.Get("v")
				}
			}
		}
		if !maps.Equal(got, want) {
			t.Fatalf("version %d: the listing holds %d instances, its change log replays to %d, or their figures differ", s.Version, len(got), len(want))
		}
		if len(s.changes) > 0 && s.changes[len(s.changes)-1].Seq != s.Version {
			t.Fatalf("version %d, newest change %d", s.Version, s.changes[len(s.changes)-1].Seq)
		}
	}
	wg.Wait()
	t.Logf("%d snapshots checked", builds)
}

package registry

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

type opLog struct {
	mu  sync.Mutex
	ops []string
}

func (l *opLog) add(op Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := fmt.Sprintf("%s %s/%s", op.Action, op.App, op.ID)
	if op.Status != "" && op.Action != ActionRegister {
		s += " " + string(op.Status)
	}
	if op.OverriddenStatus != "" {
		s += " override=" + string(op.OverriddenStatus)
	}
	if op.Action == ActionRegister && op.Instance == nil {
		s += " WITHOUT INSTANCE"
	}
	if op.Told != "" {
		s += " told=" + op.Told
	}
	l.ops = append(l.ops, s)
}

func (l *opLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.ops)
}

func TestClientWritesAreForwardedReplicatedOnesAreNot(t *testing.T) {
	r, _ := newTestRegistry(t)
	var log opLog
	r.SetForwarder(log.add)

	mustRegister(t, r, inst("DN", "a"))
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetStatus("DN", "a", heureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteStatusOverride("DN", "a", heureka.StatusUp, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateMetadata("DN", "a", map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Cancel(CancelRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	// Replicated writes and failed ones are not forwarded.
	if err := r.Register(inst("DN", "b"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "b", Replication: true}); err != nil {
		t.Fatal(err)
	}
	// A replicated write's told peers change nothing: it is not forwarded.
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "b", Replication: true, Told: "http://p2:8761/eureka"}); err != nil {
		t.Fatal(err)
	}
	// A client's heartbeat and registration are forwarded with the peers
	// their sender tells itself, as they came: which peers those are is
	// the forwarder's to decide.
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "b", Told: "http://p1:8761/eureka,http://p2:8761/eureka"}); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterOwned(RegisterRequest{Instance: inst("DN", "c"), Told: "http://p1:8761/eureka"}); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterOwned(RegisterRequest{Instance: inst("DN", "d"), Replication: true, Told: "http://p1:8761/eureka"}); err != nil {
		t.Fatal(err)
	}
	_ = r.Cancel(CancelRequest{App: "DN", ID: "nope"})
	if err := r.Cancel(CancelRequest{App: "DN", ID: "b", Replication: true}); err != nil {
		t.Fatal(err)
	}

	want := "[Register DN/a Heartbeat DN/a UP StatusUpdate DN/a OUT_OF_SERVICE " +
		"Heartbeat DN/a OUT_OF_SERVICE override=OUT_OF_SERVICE DeleteStatusOverride DN/a UP Register DN/a Cancel DN/a " +
		"Heartbeat DN/b UP told=http://p1:8761/eureka,http://p2:8761/eureka Register DN/c told=http://p1:8761/eureka]"
	if got := log.String(); got != want {
		t.Fatalf("forwarded\n%s\nwant\n%s", got, want)
	}
}

func TestTombstonesAndAdopt(t *testing.T) {
	r, clk := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	peerCopy := get(t, r, "DN", "a") // a peer registered it at the same time
	clk.Advance(time.Second)
	if err := r.Cancel(CancelRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	ts := r.Tombstones()
	if len(ts) != 1 || ts[0].ID != "a" {
		t.Fatalf("tombstones %v, want one for a", ts)
	}
	// A partitioned peer still holding the old registration cannot hand it
	// back.
	if ok, err := r.Adopt(peerCopy, time.Time{}); err != nil || ok {
		t.Fatalf("adopt of a copy older than the cancel = %v, %v; want refused", ok, err)
	}
	if _, ok := r.Snapshot().Instance("DN", "a"); ok {
		t.Fatal("cancelled instance resurrected")
	}
	// A registration made after the cancel is adopted.
	newer := peerCopy.Clone()
	newer.Lease.RegistrationTimestamp = clk.Now().Add(time.Second).UnixMilli()
	newer.OverriddenStatus, newer.Status = heureka.StatusOutOfService, heureka.StatusOutOfService
	if ok, err := r.Adopt(newer, time.Time{}); err != nil || !ok {
		t.Fatalf("adopt of a newer registration = %v, %v", ok, err)
	}
	in := get(t, r, "DN", "a")
	if in.Status != heureka.StatusOutOfService {
		t.Fatalf("adopted status %s, want the peer's OUT_OF_SERVICE", in.Status)
	}
	// The override came along: a renewal keeps it.
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, "DN", "a").Status; got != heureka.StatusOutOfService {
		t.Fatalf("status %s after renew, want OUT_OF_SERVICE kept by the adopted override", got)
	}
	// Tombstones expire.
	clk.Advance(31 * time.Minute)
	r.Tick()
	if ts := r.Tombstones(); len(ts) != 0 {
		t.Fatalf("tombstones %v after their TTL", ts)
	}
}

func TestCancelIfRegisteredBefore(t *testing.T) {
	r, clk := newTestRegistry(t)
	mustRegister(t, r, inst("DN", "a"))
	regAt := clk.Now()
	if r.CancelIfRegisteredBefore("DN", "a", regAt.Add(-time.Second)) {
		t.Fatal("cancelled an instance registered after the peer's cancel")
	}
	if !r.CancelIfRegisteredBefore("DN", "a", regAt.Add(time.Second)) {
		t.Fatal("kept an instance the peer cancelled after its registration")
	}
	if _, ok := r.Snapshot().Instance("DN", "a"); ok {
		t.Fatal("still registered")
	}
}

func TestAdoptRefusesWhatHasAlreadyExpired(t *testing.T) {
	r, clk := newTestRegistry(t)
	dead := inst("DN", "dead", func(in *heureka.Instance) { in.Lease.DurationSecs = 30 })
	if ok, err := r.Adopt(dead, clk.Now().Add(-31*time.Second)); err != nil || ok {
		t.Fatalf("adopt of a lease that ran out = %v, %v; want refused", ok, err)
	}
	alive := inst("DN", "alive", func(in *heureka.Instance) { in.Lease.RenewalIntervalSecs, in.Lease.DurationSecs = 10, 30 })
	if ok, err := r.Adopt(alive, clk.Now().Add(-20*time.Second)); err != nil || !ok {
		t.Fatalf("adopt of a live lease = %v, %v", ok, err)
	}
	clk.Advance(11 * time.Second)
	r.Tick()
	if _, ok := r.Snapshot().Instance("DN", "alive"); ok {
		t.Fatal("the adopted lease did not keep the peer's renewal time")
	}
	app, ok := r.LiveApp("DN")
	if ok || app != nil {
		t.Fatalf("LiveApp of an empty app = %v, %v", app, ok)
	}
	mustRegister(t, r, inst("DN", "x"))
	clk.Advance(5 * time.Second)
	if _, err := r.Renew(RenewRequest{App: "DN", ID: "x"}); err != nil {
		t.Fatal(err)
	}
	app, ok = r.LiveApp("DN")
	if !ok || app.Instances[0].Lease.LastRenewalTimestamp != clk.Now().UnixMilli() {
		t.Fatalf("LiveApp = %+v, want the renewal time", app)
	}
}

// TestTimestampsFromTheFutureAreRefused: newer wins, so a lastDirtyTimestamp
// (or a peer's registration time) beyond MaxAhead of the clock is refused
// on every path that stores one; up to the bound it is taken.
func TestTimestampsFromTheFutureAreRefused(t *testing.T) {
	r, clk := newTestRegistry(t)
	const app = "HDFS-DATANODE.PROD"
	now := clk.Now()
	if err := r.Register(inst(app, "a", func(in *heureka.Instance) { in.LastDirtyTimestamp = now.UnixMilli() }), false); err != nil {
		t.Fatal(err)
	}
	future := now.Add(5*time.Minute + time.Second).UnixMilli()
	ahead := now.Add(5 * time.Minute).UnixMilli()
	checks := []struct {
		name string
		err  error
	}{
		{"register", r.Register(inst(app, "a", func(in *heureka.Instance) { in.LastDirtyTimestamp = future }), true)},
		{"register negative", r.Register(inst(app, "b", func(in *heureka.Instance) { in.LastDirtyTimestamp = -1 }), false)},
		{"set status", r.SetStatus(app, "a", heureka.StatusOutOfService, future, true)},
		{"delete override", r.DeleteStatusOverride(app, "a", heureka.StatusUp, future, true)},
	}
	_, err := r.Renew(RenewRequest{App: app, ID: "a", LastDirtyTimestamp: future, OverriddenStatus: heureka.StatusOutOfService, Replication: true})
	checks = append(checks, struct {
		name string
		err  error
	}{"renew", err})
	_, err = r.Adopt(inst(app, "c", func(in *heureka.Instance) { in.Lease.RegistrationTimestamp = future }), time.Time{})
	checks = append(checks, struct {
		name string
		err  error
	}{"adopt", err})
	for _, c := range checks {
		if heureka.ErrorCode(c.err) != heureka.EINVALID {
			t.Errorf("%s from the future: error %v, want EINVALID", c.name, c.err)
		}
	}
	snap := r.Snapshot()
	if in, _ := snap.Instance(app, "a"); in.LastDirtyTimestamp != now.UnixMilli() || in.Status != heureka.StatusUp {
		t.Fatalf("a after the refusals: lastDirtyTimestamp %d, status %s", in.LastDirtyTimestamp, in.Status)
	}
	if snap.Len() != 1 {
		t.Fatalf("%d instances, want 1", snap.Len())
	}
	// At the bound, taken.
	if err := r.Register(inst(app, "a", func(in *heureka.Instance) { in.LastDirtyTimestamp = ahead }), true); err != nil {
		t.Fatalf("a copy MaxAhead ahead: %v", err)
	}
	if _, err := New(func() Config { c := DefaultConfig(); c.MaxAhead = 0; return c }()); !strings.HasPrefix(fmt.Sprint(err), "MaxAhead 0s:") {
		t.Fatalf("MaxAhead 0: %v, want an error naming it", err)
	}
}

// TestCurrentIsTheStoredCopyNow: Current returns what is stored at the
// call, a metadata update included (which leaves lastDirtyTimestamp
// alone), and nothing for an unknown instance.
func TestCurrentIsTheStoredCopyNow(t *testing.T) {
	r, _ := newTestRegistry(t)
	mustRegister(t, r, inst("HDFS-DATANODE.PROD", "x"))
	before, ok := r.Current("HDFS-DATANODE.PROD", "x")
	if !ok || before.LastDirtyTimestamp == 0 {
		t.Fatalf("Current after Register: %v %v", before, ok)
	}
	if err := r.UpdateMetadata("HDFS-DATANODE.PROD", "x", map[string]string{"rev": "7"}); err != nil {
		t.Fatal(err)
	}
	got, ok := r.Current("HDFS-DATANODE.PROD", "x")
	if !ok || got.Metadata.Get("rev") != "7" || got.LastDirtyTimestamp != before.LastDirtyTimestamp {
		t.Fatalf("Current: %v %v; want the copy with rev 7 and lastDirtyTimestamp %d", got, ok, before.LastDirtyTimestamp)
	}
	if _, ok := r.Current("HDFS-DATANODE.PROD", "y"); ok {
		t.Error("Current found an instance that was never registered")
	}
}

package agent_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/hdfs"
)

// upAndSettled starts an agent with a live daemon and lets it register.
func upAndSettled(t *testing.T, cfg testConfig) *running {
	t.Helper()
	d := &fakeDaemon{alive: true, info: dataNodeInfo()}
	r := start(t, cfg, d)
	time.Sleep(1500 * time.Millisecond)
	synctest.Wait()
	if in := r.instance(t); in.Status != heureka.StatusUp {
		t.Fatalf("not UP at start: %s", in.Status)
	}
	return r
}

func (r *running) pause(d time.Duration) {
	r.d.set(func(d *fakeDaemon) { d.paused = true })
	time.Sleep(d)
	r.d.set(func(d *fakeDaemon) { d.paused = false })
}

// TestShortPauseChangesNothing: a pause shorter than HungMarkAfter (an
// ordinary full GC) leaves the registry alone: no registration at all.
func TestShortPauseChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := upAndSettled(t, newTestConfig(t, hdfs.RoleDataNode))
		regs := r.reg.count("register")
		r.pause(4500 * time.Millisecond)
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if st := r.a.Status(); !st.Hung || st.Health != heureka.StatusUp {
			t.Errorf("while paused: %+v; want hung and UP", st)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := r.reg.count("register"); n != regs {
			t.Errorf("a 4.5 s pause made %d registrations: %+v", n-regs, r.reg.log())
		}
		if st := r.a.Status(); st.Hung || st.Pauses != 1 || st.Health != heureka.StatusUp {
			t.Errorf("after the pause: %+v", st)
		}
	})
}

// TestLongPauseMarkedThenDown: a pause past HungMarkAfter is marked
// probe_state=hung once, and unmarked when it ends; one past HangAfter is
// DOWN "not answering", and UP again after UpAfter of answers.
func TestLongPauseMarkedThenDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := newTestConfig(t, hdfs.RoleDataNode)
		r := upAndSettled(t, cfg)
		regs := r.reg.count("register")

		r.d.set(func(d *fakeDaemon) { d.paused = true })
		time.Sleep(7 * time.Second)
		synctest.Wait()
		in := r.instance(t)
		if in.Status != heureka.StatusUp || in.Metadata.Get(hdfs.MetaProbeState) != hdfs.ProbeStateHung {
			t.Errorf("paused 7 s: %s %v; want UP with probe_state=hung", in.Status, in.Metadata)
		}
		r.d.set(func(d *fakeDaemon) { d.paused = false })
		time.Sleep(2 * time.Second)
		synctest.Wait()
		in = r.instance(t)
		if _, ok := in.Metadata.Lookup(hdfs.MetaProbeState); ok || in.Status != heureka.StatusUp {
			t.Errorf("after the pause: %s %v", in.Status, in.Metadata)
		}
		if n := r.reg.count("register") - regs; n != 2 {
			t.Errorf("a 7 s pause made %d registrations; want 2 (mark, unmark): %+v", n, r.reg.log())
		}

		paused := time.Now()
		r.d.set(func(d *fakeDaemon) { d.paused = true })
		var downAt time.Time
		for time.Since(paused) < 20*time.Second && downAt.IsZero() {
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if r.instance(t).Status == heureka.StatusDown {
				downAt = time.Now()
			}
		}
		// The pause is counted from the first unanswered probe, which
		// starts within a probe interval of the pause.
		if took := downAt.Sub(paused); downAt.IsZero() || took < cfg.HangAfter || took > cfg.HangAfter+2*(cfg.ProbeInterval+cfg.ProbeTimeout) {
			t.Fatalf("DOWN %v after the pause began; want HangAfter %v plus a probe or two", took, cfg.HangAfter)
		}
		in = r.instance(t)
		if in.Metadata.Get(hdfs.MetaDownCause) != agent.CauseNotAnswering {
			t.Errorf("down_cause %q, want %q", in.Metadata.Get(hdfs.MetaDownCause), agent.CauseNotAnswering)
		}
		if _, ok := in.Metadata.Lookup(hdfs.MetaProbeState); ok {
			t.Errorf("DOWN and still probe_state: %v", in.Metadata)
		}

		resumed := time.Now()
		r.d.set(func(d *fakeDaemon) { d.paused = false })
		upAt := waitUp(t, r, 20*time.Second)
		if took := upAt.Sub(resumed); took < cfg.UpAfter || took > cfg.UpAfter+2*cfg.ProbeInterval+cfg.ProbeTimeout {
			t.Errorf("UP %v after the pause ended; want UpAfter %v plus about a probe", took, cfg.UpAfter)
		}
	})
}

func waitUp(t *testing.T, r *running, bound time.Duration) time.Time {
	t.Helper()
	from := time.Now()
	for time.Since(from) < bound {
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		if r.instance(t).Status == heureka.StatusUp {
			return time.Now()
		}
	}
	t.Fatalf("not UP within %v: %+v", bound, r.a.Status())
	return time.Time{}
}

// TestFlappingHeldDown: every DOWN within FlapWindow doubles how long the
// daemon must answer before it is UP, up to FlapHoldMax.
func TestFlappingHeldDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := newTestConfig(t, hdfs.RoleDataNode)
		cfg.FlapHoldMax = 10 * time.Second
		r := upAndSettled(t, cfg)
		for i, want := range []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second} {
			r.d.set(func(d *fakeDaemon) { d.alive = false })
			time.Sleep(2 * time.Second)
			synctest.Wait()
			if in := r.instance(t); in.Status != heureka.StatusDown {
				t.Fatalf("flap %d: not DOWN", i)
			}
			if st := r.a.Status(); st.Hold != want || st.RecentDowns != i+1 {
				t.Errorf("flap %d: hold %v with %d recent downs; want %v with %d", i, st.Hold, st.RecentDowns, want, i+1)
			}
			back := time.Now()
			r.d.set(func(d *fakeDaemon) { d.alive = true })
			upAt := waitUp(t, r, 30*time.Second)
			if took := upAt.Sub(back); took < want || took > want+cfg.ProbeInterval+100*time.Millisecond {
				t.Errorf("flap %d: UP after %v of answers; want %v", i, took, want)
			}
		}
		// Quiet for a whole FlapWindow: the next DOWN is forgiven.
		time.Sleep(cfg.FlapWindow)
		r.d.set(func(d *fakeDaemon) { d.alive = false })
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if st := r.a.Status(); st.Hold != cfg.UpAfter || st.RecentDowns != 1 {
			t.Errorf("after a quiet window: hold %v, %d recent downs", st.Hold, st.RecentDowns)
		}
	})
}

// TestAnswerBetweenFailuresRestartsTheWindow: a daemon that answers, then
// fails, then answers is not UP until one unbroken run of UpAfter.
func TestAnswerBetweenFailuresRestartsTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := upAndSettled(t, newTestConfig(t, hdfs.RoleDataNode))
		r.d.set(func(d *fakeDaemon) { d.alive = false })
		time.Sleep(2 * time.Second)
		for range 3 {
			r.d.set(func(d *fakeDaemon) { d.alive = true })
			time.Sleep(2 * time.Second)
			r.d.set(func(d *fakeDaemon) { d.alive = false })
			time.Sleep(1500 * time.Millisecond)
		}
		synctest.Wait()
		for _, c := range r.reg.log()[1:] {
			if c.op == "register" && c.status == heureka.StatusUp {
				t.Fatalf("UP between failures: %+v", r.reg.log())
			}
		}
	})
}

// TestProcessExitedIsDownAtOnce: the process watcher's news is DOWN with
// cause "process exited" at once, and the probes refused afterwards do
// not change the cause.
func TestProcessExitedIsDownAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := upAndSettled(t, newTestConfig(t, hdfs.RoleDataNode))
		r.d.set(func(d *fakeDaemon) { d.alive = false })
		agent.Exited(r.a, 4242)
		synctest.Wait()
		in := r.instance(t)
		if in.Status != heureka.StatusDown || in.Metadata.Get(hdfs.MetaDownCause) != agent.CauseProcessExited {
			t.Fatalf("right after the exit: %s %v", in.Status, in.Metadata)
		}
		regs := r.reg.count("register")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := r.reg.count("register"); n != regs || r.instance(t).Metadata.Get(hdfs.MetaDownCause) != agent.CauseProcessExited {
			t.Errorf("refused probes after the exit: %d more registrations, cause %q", n-regs, r.instance(t).Metadata.Get(hdfs.MetaDownCause))
		}
	})
}

package cluster_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
)

func TestWritesReplicateAcrossProcesses(t *testing.T) {
	t.Parallel()
	ps := startCluster(t, 3)
	ps[0].register("dn1", 60)
	proctest.Eventually(t, 5*time.Second, "dn1 on peers 2 and 3", func() bool {
		return ps[1].statuses()["dn1"] == "UP" && ps[2].statuses()["dn1"] == "UP"
	})

	if code, b := ps[1].do(http.MethodPut, "/eureka/apps/"+app+"/dn1/status?value=OUT_OF_SERVICE", nil); code != http.StatusOK {
		t.Fatalf("status override on peer 2: %d %s", code, b)
	}
	proctest.Eventually(t, 5*time.Second, "the override on every peer", func() bool {
		for _, p := range ps {
			if p.statuses()["dn1"] != "OUT_OF_SERVICE" {
				return false
			}
		}
		return true
	})

	if code, b := ps[2].do(http.MethodDelete, "/eureka/apps/"+app+"/dn1", nil); code != http.StatusOK {
		t.Fatalf("cancel on peer 3: %d %s", code, b)
	}
	proctest.Eventually(t, 5*time.Second, "dn1 gone everywhere", func() bool {
		for _, p := range ps {
			if _, ok := p.statuses()["dn1"]; ok {
				return false
			}
		}
		return true
	})
}

func TestKilledPeerHoldsEverythingBeforeReady(t *testing.T) {
	t.Parallel()
	ps := startCluster(t, 3)
	const n = 200
	for i := range n {
		ps[i%3].register(fmt.Sprintf("dn%03d", i), 120)
	}
	if code, b := ps[0].do(http.MethodPut, "/eureka/apps/"+app+"/dn007/status?value=OUT_OF_SERVICE", nil); code != http.StatusOK {
		t.Fatalf("override: %d %s", code, b)
	}
	proctest.Eventually(t, 10*time.Second, "all instances on peer 2", func() bool {
		s := ps[1].statuses()
		return len(s) == n && s["dn007"] == "OUT_OF_SERVICE"
	})

	ps[1].kill()
	ps[1].start()
	proctest.Eventually(t, 10*time.Second, "restarted peer 2 ready", ps[1].ready)
	s := ps[1].statuses()
	if len(s) != n {
		t.Fatalf("restarted peer 2 reports ready holding %d of %d instances", len(s), n)
	}
	if s["dn007"] != "OUT_OF_SERVICE" {
		t.Fatalf("restarted peer 2 has dn007 %s, want the override OUT_OF_SERVICE", s["dn007"])
	}
}

func TestFrozenPeerConvergesWithoutLossOrResurrection(t *testing.T) {
	t.Parallel()
	ps := startCluster(t, 3)
	for _, id := range []string{"stay1", "stay2", "cancelme", "drainme"} {
		ps[0].register(id, 120)
	}
	proctest.Eventually(t, 5*time.Second, "the registrations on peer 3", func() bool { return len(ps[2].statuses()) == 4 })

	// Peer 3 freezes: no ticks, no answers. Meanwhile the others change
	// things.
	ps[2].signal(syscall.SIGSTOP)
	if code, _ := ps[0].do(http.MethodDelete, "/eureka/apps/"+app+"/cancelme", nil); code != http.StatusOK {
		t.Fatalf("cancel: %d", code)
	}
	ps[0].register("newcomer", 120)
	if code, _ := ps[1].do(http.MethodPut, "/eureka/apps/"+app+"/drainme/status?value=OUT_OF_SERVICE", nil); code != http.StatusOK {
		t.Fatalf("override: %d", code)
	}
	for _, p := range ps[:2] {
		proctest.Eventually(t, 20*time.Second, p.name+" to count peer 3 unreachable", func() bool {
			st, ok := p.peerStatus(ps[2].url())
			return ok && !st.Reachable
		})
	}
	ps[2].signal(syscall.SIGCONT)

	want := map[string]string{"stay1": "UP", "stay2": "UP", "newcomer": "UP", "drainme": "OUT_OF_SERVICE"}
	converged := func() bool {
		for _, p := range ps {
			if fmt.Sprint(p.statuses()) != fmt.Sprint(want) {
				return false
			}
		}
		return true
	}
	proctest.Eventually(t, 15*time.Second, "all three peers to converge", converged)
	// Once every queue is drained and every peer reachable, nothing is
	// left in flight that could still change what they serve.
	proctest.Eventually(t, 15*time.Second, "every peer to drain its queues", func() bool { return drained(ps) })
	for _, p := range ps {
		if got := p.statuses(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s drifted after convergence: %v, want %v", p.name, got, want)
		}
	}
}

// TestSelfPreservationOnTheRealClock runs one server with 2 s leases: a
// dead node is evicted within a lease and a second; a mass loss across all
// racks is held back and reported; recovery ends it.
func TestSelfPreservationOnTheRealClock(t *testing.T) {
	t.Parallel()
	p := startProc(t, "solo", proctest.FreeAddr(t, "127.0.0.2"))
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("n%02d", i)
		ids = append(ids, id)
		p.register(id, 2)
	}
	var silent atomic.Value // map[string]bool of instances that stop renewing
	silent.Store(map[string]bool{})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(400 * time.Millisecond):
			}
			quiet := silent.Load().(map[string]bool)
			for _, id := range ids {
				if !quiet[id] {
					if p.renew(id) == http.StatusNotFound {
						p.register(id, 2)
					}
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()

	// One node dies: gone within its 2 s lease plus a second.
	silent.Store(map[string]bool{"n00": true})
	died := time.Now()
	proctest.Eventually(t, 6*time.Second, "n00 evicted", func() bool { _, ok := p.statuses()["n00"]; return !ok })
	if d := time.Since(died); d > 4*time.Second {
		t.Errorf("eviction took %s, want about the 2 s lease", d)
	}

	// Three quarters go quiet across every rack: that is the registry's
	// own problem more likely than theirs. Held back, and said so.
	quiet := map[string]bool{"n00": true}
	for _, id := range ids[1:10] {
		quiet[id] = true
	}
	silent.Store(quiet)
	proctest.Eventually(t, 6*time.Second, "self-preservation to engage", func() bool {
		var st struct {
			SelfPreservation struct {
				Active bool   `json:"active"`
				Reason string `json:"reason"`
			} `json:"selfPreservation"`
		}
		_, b := p.do(http.MethodGet, "/v1/status", nil)
		_ = json.Unmarshal(b, &st)
		return st.SelfPreservation.Active && strings.Contains(st.SelfPreservation.Reason, "stopped renewing")
	})
	if n := len(p.statuses()); n != 11 {
		t.Fatalf("%d instances while protecting, want the 11 registered", n)
	}

	// They come back: protection ends, nothing was lost.
	silent.Store(map[string]bool{"n00": true})
	proctest.Eventually(t, 6*time.Second, "self-preservation to end", func() bool {
		_, b := p.do(http.MethodGet, "/v1/status", nil)
		return strings.Contains(string(b), `"active":false`)
	})
	if n := len(p.statuses()); n != 11 {
		t.Fatalf("%d instances after recovery, want 11", n)
	}
}

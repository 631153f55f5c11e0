package replication_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/registry/registrytest"
	"github.com/heureka-project/heureka/replication"
	"github.com/heureka-project/heureka/replication/replicationtest"
)

const (
	reg1 = "http://reg1.example:8761/eureka"
	reg2 = "http://reg2.example:8761/eureka"
	reg3 = "http://reg3.example:8761/eureka"
	reg4 = "http://reg4.example:8761/eureka"
)

// newForwarder is reg1's replicator over peers, never run: what Forward
// queues for each peer stays queued, for PeerStatus.Queued to show.
func newForwarder(t *testing.T, peers []string) *replication.Replicator {
	t.Helper()
	rcfg := registry.DefaultConfig()
	rcfg.Logger = slog.New(slog.DiscardHandler)
	reg, err := registry.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	pcfg := replication.DefaultConfig()
	pcfg.Peers, pcfg.SelfURL, pcfg.NodeID = peers, reg1, "reg1"
	pcfg.Transport = replicationtest.NewMemNetwork().Transport("reg1.example:8761")
	pcfg.Logger = rcfg.Logger
	rp, err := replication.New(pcfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// queued is each other peer's queue length, by URL.
func queued(rp *replication.Replicator) map[string]int {
	out := map[string]int{}
	for _, st := range rp.Status() {
		if !st.Self {
			out[st.URL] = st.Queued
		}
	}
	return out
}

// TestForwardLeavesOutOnlyTheToldPeers is the rule behind
// heureka.ToldPeersHeader, on reg1, for every shape a cluster takes: a
// client's heartbeat or registration goes to each peer the header does
// not name, and to none that it names; a name that is not spelt as this
// server spells a peer names nobody. Each case forwards a heartbeat and a
// registration with the header, then a cancel (which never carries it),
// and checks what each peer was queued.
func TestForwardLeavesOutOnlyTheToldPeers(t *testing.T) {
	every := []string{reg1, reg2, reg3}
	list := func(urls ...string) string { return strings.Join(urls, ",") }
	for _, c := range []struct {
		name  string
		peers []string // the server's --peers
		told  string   // the writes' header
		sent  []string // the peers that must be queued the writes; the others none
	}{
		{"a plain Eureka client: no header", every, "", []string{reg2, reg3}},
		{"an agent listing every peer", every, list(reg1, reg2, reg3), nil},
		{"an agent listing only this peer", every, reg1, []string{reg2, reg3}},
		{"an agent listing two of three", every, list(reg1, reg2), []string{reg3}},
		{"an agent listing two of three, in another order", every, list(reg2, reg1), []string{reg3}},
		{"an agent that failed over here from a peer that did not answer", every, list(reg3, reg1), []string{reg2}},
		{"an agent listing one other peer but not this one", every, reg2, []string{reg3}},
		{"an older agent's value in the header", every, "true", []string{reg2, reg3}},
		{"a peer spelt by its address", every, list(reg1, "http://10.0.0.2:8761/eureka", reg3), []string{reg2}},
		{"a peer spelt with an explicit default port", []string{reg1, "http://reg2.example/eureka", reg3}, list(reg1, "http://reg2.example:80/eureka", reg3), []string{"http://reg2.example/eureka"}},
		{"a peer spelt without its path", every, list(reg1, "http://reg2.example:8761", reg3), []string{reg2}},
		{"case and trailing slashes", every, list(reg1, "HTTP://REG2.Example:8761/eureka/", reg3), nil},
		{"credentials in a name", every, list(reg1, "http://agent:secret@reg2.example:8761/eureka", reg3), nil},
		{"spaces around the names", every, " " + reg1 + " , " + reg2 + " ,\t" + reg3, nil},
		{"a name with a query", every, list(reg1, reg2+"?x=1", reg3), []string{reg2}},
		{"empty names", every, ",,," + reg3 + ",", []string{reg2}},
		{"a server listing a peer without its path", []string{reg1, "http://reg2.example:8761", reg3}, list(reg1, reg2, reg3), nil},
		{"a value longer than 4 KiB", every, list(reg2, reg3, strings.Repeat("x", 4096)), []string{reg2, reg3}},
		{"a peer named past the 64th name", every, strings.Repeat("http://other:1/eureka,", 64) + reg2, []string{reg2, reg3}},
		// The peer list changes while agents run: the servers restart with
		// the new --peers, the agents keep their list until they restart.
		{"a peer replaced on the servers, agents listing the old one", []string{reg1, reg2, reg4}, list(reg1, reg2, reg3), []string{reg4}},
		{"a peer added on the servers, not yet on the agents", []string{reg1, reg2, reg3, reg4}, list(reg1, reg2, reg3), []string{reg4}},
		{"a peer removed on the servers, agents still listing it", []string{reg1, reg2}, list(reg1, reg2, reg3), nil},
		{"a peer added on the agents, not yet on the servers", every, list(reg1, reg2, reg3, reg4), nil},
		{"a peer removed on the agents, not yet on the servers", every, list(reg1, reg2), []string{reg3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rp := newForwarder(t, c.peers)
			// Twice each: the second answer comes from the cache.
			for i := range 2 {
				rp.Forward(registry.Op{Action: registry.ActionHeartbeat, App: registrytest.DataNodeApp, ID: fmt.Sprint("beat", i), Told: c.told})
				rp.Forward(registry.Op{Action: registry.ActionRegister, App: registrytest.DataNodeApp, ID: fmt.Sprint("reg", i),
					Instance: registrytest.DataNode(i), Told: c.told})
			}
			got := queued(rp)
			for url, n := range got {
				want := 0
				for _, s := range c.sent {
					if s == url {
						want = 4
					}
				}
				if n != want {
					t.Errorf("told %q: peer %s was queued %d write(s), want %d (all: %v)", c.told, url, n, want, got)
				}
			}
			rp.Forward(registry.Op{Action: registry.ActionCancel, App: registrytest.DataNodeApp, ID: "beat0"})
			for url, n := range queued(rp) {
				if n != got[url]+1 {
					t.Errorf("a cancel was queued %d time(s) for peer %s, want once", n-got[url], url)
				}
			}
		})
	}
}

// TestToldCacheHoldsUnderManyValues: values past the cache's size, from
// many goroutines at once, each still name exactly the peers they list,
// and a value seen before the cache started again is resolved again.
func TestToldCacheHoldsUnderManyValues(t *testing.T) {
	rp := newForwarder(t, []string{reg1, reg2, reg3})
	const workers, perWorker = 4, 200 // 800 distinct values, over three cache generations
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				// Even values name reg2 and reg3 beside a URL of their own;
				// odd ones only their own.
				own := fmt.Sprintf("http://agent-%d-%d:8761/eureka", w, i)
				told := own
				if i%2 == 0 {
					told = strings.Join([]string{own, reg2, reg3}, ",")
				}
				rp.Forward(registry.Op{Action: registry.ActionHeartbeat, App: registrytest.DataNodeApp, ID: fmt.Sprint(w, "-", i), Told: told})
			}
		})
	}
	wg.Wait()
	want := workers * perWorker / 2 // the odd ones, one heartbeat each
	for url, n := range queued(rp) {
		if n != want {
			t.Errorf("peer %s was queued %d heartbeat(s), want %d (the values that did not name it)", url, n, want)
		}
	}
}

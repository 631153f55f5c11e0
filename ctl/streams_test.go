package ctl

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/server"
	"github.com/heureka-project/heureka/server/servertest"
)

// TestWatchAndEvents follows both streams while things change, then
// restarts the server under them: watch re-reads the registry and prints
// what differs. A status change of an instance the watch knew is MODIFIED
// with its change written as events write it.
func TestWatchAndEvents(t *testing.T) {
	dn1 := node{role: hdfs.RoleDataNode, host: "dn1.example.com", ip: "10.1.0.1", rack: "/dc1/rack-a", usedPct: 41}.instance()
	s, c := cluster(t)
	servertest.Register(t, s, dn1)
	addr := s.Addr().String()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var watchOut, watchErr, evOut, evErr, jsonOut proctest.Buffer
	done := make(chan error, 3)
	zero := uint64(0)
	go func() { done <- Watch(ctx, c, Output{W: &watchOut, Notes: &watchErr}, nil) }()
	go func() { done <- Events(ctx, c, Output{W: &evOut, Notes: &evErr}, nil, &zero) }()
	go func() {
		done <- Events(ctx, c, Output{W: &jsonOut, Notes: &evErr, JSON: true}, []string{"HDFS-DATANODE.PROD"}, nil)
	}()
	proctest.Eventually(t, 10*time.Second, "three streams", func() bool { return s.API.Watchers() == 3 })

	down := dn1.Clone()
	down.Status = heureka.StatusDown
	servertest.Register(t, s, down, &heureka.Instance{ID: "orders-1", App: "ORDERS", HostName: "o1", IPAddr: "10.2.0.1", Status: heureka.StatusUp})
	defer func() {
		if t.Failed() {
			t.Logf("watch:\n%s\n%s\nevents:\n%s\n%s", watchOut.String(), watchErr.String(), evOut.String(), evErr.String())
		}
	}()
	proctest.Eventually(t, 10*time.Second, "watch lines", func() bool {
		return strings.Contains(watchOut.String(), "ORDERS/orders-1  UP  cause=register")
	})
	if w := watchOut.String(); !strings.Contains(w, "MODIFIED HDFS-DATANODE.PROD/"+dn1.ID+"  UP → DOWN  cause=register  rack=/dc1/rack-a disk=41.0%") {
		t.Errorf("watch output:\n%s", w)
	}
	proctest.Eventually(t, 10*time.Second, "event lines", func() bool { return strings.Contains(evOut.String(), "ORDERS/orders-1") })
	e := evOut.String()
	for _, want := range []string{"#1      registered       HDFS-DATANODE.PROD/" + dn1.ID, "status_changed   HDFS-DATANODE.PROD/" + dn1.ID + "  UP → DOWN by instance"} {
		if !strings.Contains(e, want) {
			t.Errorf("events output lacks %q:\n%s", want, e)
		}
	}
	proctest.Eventually(t, 10*time.Second, "a JSON event", func() bool { return strings.Contains(jsonOut.String(), "\n") })
	var ev map[string]any
	if line, _, _ := strings.Cut(jsonOut.String(), "\n"); json.Unmarshal([]byte(line), &ev) != nil || ev["type"] != "status_changed" || ev["oldStatus"] != "UP" {
		t.Errorf("events as JSON: %q", jsonOut.String())
	}
	if strings.Contains(jsonOut.String(), "ORDERS") {
		t.Errorf("the apps filter let ORDERS through: %s", jsonOut.String())
	}

	// A new server process takes over the address: it knows only dn2.
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if err := s.Close(cctx); err != nil {
		t.Fatal(err)
	}
	s2 := servertest.Open(t, func(c *server.Config) { c.Listen = addr })
	http.DefaultClient.CloseIdleConnections() // they led to the old server
	dn2 := node{role: hdfs.RoleDataNode, host: "dn2.example.com", ip: "10.1.0.2", rack: "/dc1/rack-b", usedPct: 10}.instance()
	servertest.Register(t, s2, dn2)
	proctest.Eventually(t, 20*time.Second, "watch to resync", func() bool { return strings.Contains(watchOut.String(), "cause=resync") })
	proctest.Eventually(t, 5*time.Second, "the whole resync", func() bool { return strings.Count(watchOut.String(), "cause=resync") == 3 })
	w := watchOut.String()
	for _, want := range []string{
		"DELETED  HDFS-DATANODE.PROD/" + dn1.ID + "  DOWN  cause=resync",
		"DELETED  ORDERS/orders-1  UP  cause=resync",
		"ADDED    HDFS-DATANODE.PROD/" + dn2.ID + "  UP  cause=resync",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("watch output after the restart lacks %q:\n%s", want, w)
		}
	}
	if !strings.Contains(watchErr.String(), "another server process") {
		t.Errorf("watch did not say why it resynced:\n%s", watchErr.String())
	}
	// Changes on the new server follow, once the event streams follow it
	// too (from its latest version).
	proctest.Eventually(t, 20*time.Second, "three streams on the new server", func() bool { return s2.API.Watchers() == 3 })
	servertest.Register(t, s2, dn1)
	proctest.Eventually(t, 10*time.Second, "watch to follow the new server", func() bool {
		return strings.Contains(watchOut.String(), "ADDED    HDFS-DATANODE.PROD/"+dn1.ID+"  UP  cause=register")
	})
	proctest.Eventually(t, 10*time.Second, "events to follow the new server", func() bool {
		return strings.Contains(evOut.String(), "registered       HDFS-DATANODE.PROD/"+dn1.ID+"  registered UP") &&
			strings.Count(evOut.String(), "registered       HDFS-DATANODE.PROD/"+dn1.ID) == 2
	})
	cancel()
	for range 3 {
		if err := <-done; err != nil {
			t.Errorf("a stream ended with %v; notes:\n%s\n%s", err, watchErr.String(), evErr.String())
		}
	}
}

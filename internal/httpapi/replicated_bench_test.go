package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/replication"
	"github.com/heureka-project/heureka/replication/replicationtest"
)

// BenchmarkRenewReplicated is BenchmarkRenewHandler on the first of three
// peers, with a replicator installed as a server installs it (its peers'
// queues fill, nothing is sent), so the figure includes deciding which
// peers each heartbeat is forwarded to and queueing it there. The cases
// are the heartbeats of the cluster shapes in docs/deployment.md:
//
//   - plain: a Eureka client's, no heureka header; forwarded to both peers;
//   - every-peer: an agent that lists every peer; forwarded to none;
//   - one-url: an agent that lists only this peer; forwarded to both;
//   - old-agent: an agent from before heureka.ToldPeersHeader, marked
//     X-Heureka-Every-Peer; forwarded to both.
//
// cpu-ns/op is the process's CPU per renewal, which a busy machine
// disturbs less than the time per op. Run it as
//
//	go test -run '^$' -bench RenewReplicated ./internal/httpapi
func BenchmarkRenewReplicated(b *testing.B) {
	peers := []string{"http://10.0.0.1:8761/eureka", "http://10.0.0.2:8761/eureka", "http://10.0.0.3:8761/eureka"}
	for _, n := range []int{10_000, 100_000} {
		for _, c := range toldCases(peers) {
			b.Run(fmt.Sprintf("%s-%dk", c.name, n/1000), func(b *testing.B) {
				reg := benchRegistry(b, nil, n)
				pcfg := replication.DefaultConfig()
				pcfg.Peers, pcfg.SelfURL, pcfg.NodeID = peers, peers[0], "bench"
				pcfg.Transport = replicationtest.NewMemNetwork().Transport("10.0.0.1:8761")
				pcfg.Logger = slog.New(slog.DiscardHandler)
				rep, err := replication.New(pcfg, reg)
				if err != nil {
					b.Fatal(err)
				}
				reg.SetForwarder(rep.Forward)
				hcfg := DefaultConfig()
				hcfg.WriteRate = 1e9 // measure the limiter, never trip it
				h := mustNew(b, hcfg, reg, nil).Handler()
				reqs := make([]*http.Request, n)
				for i := range reqs {
					r := httptest.NewRequest(http.MethodPut, "/eureka/apps/HDFS-DATANODE.PROD/"+benchInstance(i).ID+"?status=UP&lastDirtyTimestamp=1700000000000", nil)
					r.RemoteAddr = "10.1.2.3:40000"
					for k, v := range c.header {
						r.Header[k] = v
					}
					reqs[i] = r
				}
				w := &discardWriter{h: http.Header{}}
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cpuTime()
				for i := range b.N {
					w.code = 0
					h.ServeHTTP(w, reqs[i%n])
					if w.code != http.StatusOK {
						b.Fatalf("status %d, want 200", w.code)
					}
				}
				// The process's CPU per renewal: on a shared machine the
				// time per op also counts the waits for a core.
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

type toldCase struct {
	name   string
	header http.Header
}

// toldCases are the headers each shape's heartbeat carries at the first
// of peers.
func toldCases(peers []string) []toldCase {
	return []toldCase{
		{"plain", nil},
		{"every-peer", http.Header{heureka.ToldPeersHeader: {strings.Join(peers, ",")}}},
		{"one-url", http.Header{heureka.ToldPeersHeader: {peers[0]}}},
		{"old-agent", http.Header{"X-Heureka-Every-Peer": {"true"}}},
	}
}

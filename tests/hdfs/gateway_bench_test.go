package hdfs_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/proctest"
)

// TestGatewayBenchmark measures the gateway's and the Picker's latencies
// that issue 12 sets targets for, and the gateway's overhead against
// direct access to the simulated NameNode, in one run. Like
// TestLatencyBenchmark it runs only with HEUREKA_BENCH=1
// (HEUREKA_BENCH_TRIALS, default 10):
//
//	HEUREKA_BENCH=1 go test ./tests/hdfs -run TestGatewayBenchmark -v
func TestGatewayBenchmark(t *testing.T) {
	if os.Getenv("HEUREKA_BENCH") == "" {
		t.Skip("set HEUREKA_BENCH=1 to measure latencies")
	}
	trials := 10
	if n, err := strconv.Atoi(os.Getenv("HEUREKA_BENCH_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	// The registry alone decides here: the probe would hide it.
	wc := startWebCluster(t, 3, "--probe-timeout", "0")
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, time.Since(start)
	}

	t.Run("NameNode failover → gateway routes to the new active", func(t *testing.T) {
		active, standby := wc.nns[0], wc.nns[1]
		hosts := map[*simDaemon]string{wc.nns[0]: "nn1.test", wc.nns[1]: "nn2.test"}
		var lat []time.Duration
		for range trials {
			time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond) // a random phase against the agents' probes
			active.do(t, "/sim/ha?state=standby")
			standby.do(t, "/sim/ha?state=active")
			flipped := time.Now()
			for {
				resp, _ := get(wc.url("/", "GETFILESTATUS"))
				if resp.StatusCode == 200 && resp.Header.Get("X-Heureka-Simulator-Hostname") == hosts[standby] {
					lat = append(lat, time.Since(flipped))
					break
				}
				if time.Since(flipped) > 10*time.Second {
					t.Fatalf("the gateway did not reach %s within 10 s", hosts[standby])
				}
			}
			active, standby = standby, active
		}
		t.Logf("BENCH NameNode failover → gateway answers from the new active: %s (target p99 ≤ 1.5s)", summarize(lat))
		overTarget(t, "failover → gateway routes", p99(lat), 1500*time.Millisecond)
	})

	t.Run("DataNode killed → no gateway write directed at it", func(t *testing.T) {
		c := newClient(t, wc.reg)
		dead := wc.dns[0]
		var lat []time.Duration
		for range trials {
			time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond) // a random phase against the agents' probes
			dead.do(t, "/sim/stop")
			stopped := time.Now()
			lastBad := stopped
			// Ask for write targets for 2.5 s; the last one on the dead
			// node is when the gateway stopped sending writes there.
			for time.Since(stopped) < 2500*time.Millisecond {
				req, _ := http.NewRequest(http.MethodPut, wc.url("/bench/x", "CREATE"), nil)
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if u, err := url.Parse(resp.Header.Get("Location")); err == nil && u.Host == dead.http {
					lastBad = time.Now()
				}
			}
			lat = append(lat, lastBad.Sub(stopped))
			dead.do(t, "/sim/start")
			waitStatus(t, c, dnApp, dnID(0), heureka.StatusUp, 15*time.Second)
		}
		t.Logf("BENCH DataNode killed → last gateway write directed at it (registry only, no probe): %s (target p99 ≤ 1.5s)", summarize(lat))
		overTarget(t, "DataNode killed → no writes to it", p99(lat), 1500*time.Millisecond)
	})

	t.Run("DataNode killed → a watching Picker stops returning it", func(t *testing.T) {
		w := newWatcher(t, wc.reg)
		<-w.cache.Synced()
		picker := &hdfs.Picker{DataNodes: func() []*heureka.Instance { return w.cache.Instances(dnApp) }}
		dead := wc.dns[1]
		returns := func() bool {
			pl, _ := picker.Choose(context.Background(), hdfs.PlacementRequest{Replicas: len(wc.dns)})
			return slices.ContainsFunc(pl.Nodes, func(in *heureka.Instance) bool { return in.ID == dnID(1) })
		}
		var lat []time.Duration
		for range trials {
			// The agent's flap damping may hold a restarted node DOWN for
			// up to FlapHoldMax.
			proctest.Eventually(t, agent.DefaultConfig().FlapHoldMax+10*time.Second, "the Picker to return the restarted DataNode", returns)
			time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond) // a random phase against the agents' probes
			dead.do(t, "/sim/stop")
			stopped := time.Now()
			for returns() {
				if time.Since(stopped) > 10*time.Second {
					t.Fatal("the Picker still returns the stopped DataNode after 10 s")
				}
				time.Sleep(2 * time.Millisecond) // the latency's resolution: proctest's 20 ms poll is too coarse
			}
			lat = append(lat, time.Since(stopped))
			dead.do(t, "/sim/start")
		}
		t.Logf("BENCH DataNode killed → watching Picker stops returning it: %s (target p99 ≤ 1.5s)", summarize(lat))
		overTarget(t, "DataNode killed → Picker", p99(lat), 1500*time.Millisecond)
	})

	t.Run("gateway overhead against the NameNode simulator", func(t *testing.T) {
		// Whichever NameNode is active now, directly and through the gateway.
		var direct string
		for _, nn := range wc.nns {
			resp, _ := get("http://" + nn.http + "/webhdfs/v1/?op=GETFILESTATUS")
			if resp.StatusCode == 200 {
				direct = nn.http
			}
		}
		const n = 300
		for _, op := range []string{"GETFILESTATUS", "CREATE"} {
			var viaGW, viaNN []time.Duration
			for i := range 2 * n { // interleaved, so both see the same machine
				method := http.MethodGet
				if op == "CREATE" {
					method = http.MethodPut
				}
				base := "http://" + direct
				if i%2 == 0 {
					base = "http://" + wc.gw
				}
				req, _ := http.NewRequest(method, base+"/webhdfs/v1/bench/y?op="+op+"&user.name=bench", nil)
				if op == "GETFILESTATUS" {
					req.URL.Path = "/webhdfs/v1/"
				}
				start := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if i%2 == 0 {
					viaGW = append(viaGW, time.Since(start))
				} else {
					viaNN = append(viaNN, time.Since(start))
				}
			}
			slices.Sort(viaGW)
			slices.Sort(viaNN)
			med := func(s []time.Duration) time.Duration { return s[len(s)/2] }
			t.Logf("BENCH %s through the gateway: median %v p99 %v; direct: median %v p99 %v; median ratio %.2f", op,
				med(viaGW), p99(viaGW), med(viaNN), p99(viaNN), float64(med(viaGW))/float64(med(viaNN)))
		}
	})
}

package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/registry/registrytest"
)

// BenchmarkServerMemory100k registers 100k DataNodes in a real server
// process, reads the registry once as JSON (gzip), and reports the
// process's resident memory per instance:
//
//	go test -run '^$' -bench ServerMemory -benchtime 1x ./tests/cluster
func BenchmarkServerMemory100k(b *testing.B) {
	for range b.N {
		p := startBenchProc(b)
		base := rss(b, p)
		const n = 100_000
		registerMany(b, p, n)
		req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+"/eureka/apps/", nil)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		after := rss(b, p)
		b.ReportMetric(float64(after-base)/n, "rss-bytes/instance")
		b.ReportMetric(float64(after)/(1<<20), "rss-MiB")
		p.kill()
	}
}

// BenchmarkServerResident100k registers 100k DataNode records
// (registrytest.DataNode: ~1 KiB of Eureka JSON with 20 metadata entries,
// the agent's shape) in a real server process, fetches the full registry
// and the delta in JSON and XML, each gzip and plain, and reports the
// process's whole resident memory per instance, the figure issue 17's
// ≤ 3 KiB target is about:
//
//	go test -run '^$' -bench ServerResident -benchtime 1x ./tests/cluster
func BenchmarkServerResident100k(b *testing.B) {
	const n = 100_000
	bodies := make([][]byte, n)
	for i := range bodies {
		dn := registrytest.DataNode(i)
		dn.Lease.DurationSecs = 3600 // nothing may expire while the fetches run
		bodies[i] = eureka.EncodeInstance(eureka.JSON, dn)
	}
	for range b.N {
		p := startBenchProc(b)
		registerEach(b, n, func(i int) { registerBody(b, p, registrytest.DataNodeApp, bodies[i]) })
		for _, path := range []string{"/eureka/apps/", "/eureka/apps/delta"} {
			for _, accept := range []string{"application/json", "application/xml"} {
				for _, gz := range []bool{true, false} {
					req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+path, nil)
					req.Header.Set("Accept", accept)
					if gz {
						req.Header.Set("Accept-Encoding", "gzip")
					}
					resp, err := http.DefaultTransport.RoundTrip(req) // no transparent gunzip
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("GET %s (%s, gzip %v): %d", path, accept, gz, resp.StatusCode)
					}
				}
			}
		}
		b.ReportMetric(float64(rss(b, p))/n/1024, "rss-KiB/instance")
		p.kill()
	}
}

// BenchmarkReplicationLatency measures a change on one peer until another
// peer serves it, over real processes, and reports p50/p99:
//
//	go test -run '^$' -bench ReplicationLatency -benchtime 200x ./tests/cluster
func BenchmarkReplicationLatency(b *testing.B) {
	ps := startBenchCluster(b, 2)
	var lat []time.Duration
	for i := range b.N {
		id := fmt.Sprintf("lat%05d", i)
		start := time.Now()
		registerRaw(b, ps[0], id, 120)
		for {
			code, _ := getRaw(ps[1], "/eureka/apps/"+app+"/"+id)
			if code == http.StatusOK {
				break
			}
			if time.Since(start) > 10*time.Second {
				b.Fatalf("%s never reached peer 2", id)
			}
			time.Sleep(time.Millisecond) // the latency's resolution: proctest's 20 ms poll is too coarse
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkPartitionHeal100k holds 100k instances on three peers, freezes
// one for 60 s (SIGSTOP) while the others keep renewing and change a few
// instances, thaws it, and reports how long until it serves what the
// others serve:
//
//	go test -run '^$' -bench PartitionHeal -benchtime 1x -timeout 20m ./tests/cluster
func BenchmarkPartitionHeal100k(b *testing.B) {
	if os.Getenv("HEUREKA_LONG_BENCH") == "" {
		b.Skip("set HEUREKA_LONG_BENCH=1: this benchmark freezes a peer for 60 s")
	}
	ps := startBenchCluster(b, 3)
	const n = 100_000
	registerMany(b, ps[0], n)
	waitLen(b, ps[2], n, 2*time.Minute)
	ps[2].signal(19) // SIGSTOP
	// During the partition: renewals keep flowing to peer 1 (coalesced per
	// instance for peer 3), and 100 instances are drained, 100 cancelled.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i = (i + 1) % n {
			select {
			case <-stop:
				return
			default:
			}
			putRaw(ps[0], fmt.Sprintf("/eureka/apps/%s/bulk%06d", app, i))
		}
	}()
	for i := range 100 {
		putRaw(ps[0], fmt.Sprintf("/eureka/apps/%s/bulk%06d/status?value=OUT_OF_SERVICE", app, i))
		delRaw(ps[1], fmt.Sprintf("/eureka/apps/%s/bulk%06d", app, n-1-i))
	}
	time.Sleep(60 * time.Second) // the partition's length is the scenario
	close(stop)
	wg.Wait()
	want := digestOf(b, ps[0])
	thaw := time.Now()
	ps[2].signal(18) // SIGCONT
	proctest.Eventually(b, 5*time.Minute, "peer 3 to converge", func() bool { return digestOf(b, ps[2]) == want })
	b.ReportMetric(time.Since(thaw).Seconds(), "converge-s")
}

func startBenchProc(b *testing.B) *proc {
	return startProc(b, "bench", proctest.FreeAddr(b, "127.0.0.2"), "--log-level", "info")
}

func startBenchCluster(b *testing.B, n int) []*proc {
	return startCluster(b, n, "--log-level", "info")
}

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}

func instanceBody(id string, lease int) []byte {
	return fmt.Appendf(nil, `{"instance":{"instanceId":%q,"hostName":"%s.example","app":%q,"ipAddr":"127.0.0.1",
		"status":"UP","port":{"$":9866,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
		"leaseInfo":{"renewalIntervalInSecs":10,"durationInSecs":%d},"vipAddress":"hdfs-datanode.prod",
		"metadata":{"rack":"/rack%d","disk_used":"123456789012","disk_total":"480000000000000","block_count":"1234567","version":"3.3.6","status":"NORMAL","data_port":"9866"}}}`,
		id, id, app, lease, rackOf(id))
}

func registerRaw(b testing.TB, p *proc, id string, lease int) {
	registerBody(b, p, app, instanceBody(id, lease))
}

// registerBody registers one instance of application a from its Eureka
// JSON and marks b failed unless the server answers 204. It does not stop
// the caller: it runs on registerEach's goroutines, where FailNow may not.
func registerBody(b testing.TB, p *proc, a string, body []byte) {
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.addr+"/eureka/apps/"+a, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b.Errorf("register %s: %d", a, resp.StatusCode)
	}
}

// registerMany registers n instances bulk000000… from 16 goroutines.
func registerMany(b testing.TB, p *proc, n int) {
	registerEach(b, n, func(i int) { registerRaw(b, p, fmt.Sprintf("bulk%06d", i), 3600) })
}

// registerEach calls register for 0…n-1 from 16 goroutines, and stops
// handing out work once b has failed.
func registerEach(b testing.TB, n int, register func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				register(i)
			}
		})
	}
	for i := 0; i < n && !b.Failed(); i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

func getRaw(p *proc, path string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+path, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := benchClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func putRaw(p *proc, path string) {
	req, _ := http.NewRequest(http.MethodPut, "http://"+p.addr+path, nil)
	if resp, err := benchClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func delRaw(p *proc, path string) {
	req, _ := http.NewRequest(http.MethodDelete, "http://"+p.addr+path, nil)
	if resp, err := benchClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// digestOf is the peer's anti-entropy digest of the one application.
func digestOf(b *testing.B, p *proc) string {
	_, body := getRaw(p, "/v1/replication/digest")
	s := string(body)
	i := strings.Index(s, `"apps":`)
	j := strings.Index(s, `,"tombstones"`)
	if i < 0 || j < i {
		return s
	}
	return s[i:j]
}

func waitLen(b *testing.B, p *proc, n int, limit time.Duration) {
	proctest.Eventually(b, limit, fmt.Sprintf("%s to hold %d instances", p.name, n), func() bool {
		_, body := getRaw(p, "/v1/status")
		return strings.Contains(string(body), fmt.Sprintf(`"instances":%d,`, n))
	})
}

// rss reads the process's resident set size in bytes.
func rss(b *testing.B, p *proc) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.run.Cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkReplicationOverhead drives 10k renewals a second, spread over
// three peers holding 10k instances, for 10 s, once with the peers
// replicating to each other and once as three standalone servers, and
// reports CPU seconds per peer and replication bytes per renewal:
//
//	go test -run '^$' -bench ReplicationOverhead -benchtime 1x -timeout 10m ./tests/cluster
func BenchmarkReplicationOverhead(b *testing.B) {
	for _, mode := range []string{"standalone", "replicated"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				var ps []*proc
				if mode == "replicated" {
					ps = startBenchCluster(b, 3)
				} else {
					for i := range 3 {
						ps = append(ps, startProc(b, fmt.Sprintf("solo%d", i+1), proctest.FreeAddr(b, fmt.Sprintf("127.0.0.%d", i+2)), "--log-level", "info"))
					}
				}
				const n = 10_000
				for i := range n {
					registerRaw(b, ps[i%3], fmt.Sprintf("bulk%06d", i), 3600)
				}
				if mode == "replicated" {
					for _, p := range ps {
						waitLen(b, p, n, time.Minute)
					}
				}
				cpu0 := make([]float64, 3)
				for i, p := range ps {
					cpu0[i] = cpuSeconds(b, p)
				}
				renewals := driveRenewals(b, ps, n, 10_000, 10*time.Second)
				var cpu float64
				for i, p := range ps {
					cpu += cpuSeconds(b, p) - cpu0[i]
				}
				b.ReportMetric(cpu/3/10, "cpu-s/s/peer")
				b.ReportMetric(float64(renewals)/10, "renewals/s")
				if mode == "replicated" {
					proctest.Eventually(b, 30*time.Second, "the last batches to go", func() bool { return drained(ps) })
					var bytes float64
					for _, p := range ps {
						_, body := getRaw(p, "/v1/status")
						var st struct {
							Peers []struct {
								BytesSent float64 `json:"bytesSent"`
							} `json:"peers"`
						}
						_ = json.Unmarshal(body, &st)
						for _, pe := range st.Peers {
							bytes += pe.BytesSent
						}
					}
					b.ReportMetric(bytes/float64(renewals+n), "wire-bytes/write")
				}
			}
		})
	}
}

// driveRenewals sends up to rate renewals a second, round-robin over the
// peers and instances, for d, and returns how many were sent.
func driveRenewals(b *testing.B, ps []*proc, n, rate int, d time.Duration) int {
	var sent atomic.Int64
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	perTick := rate / 100
	var wg sync.WaitGroup
	work := make(chan int, perTick*4)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				putRaw(ps[i%len(ps)], fmt.Sprintf("/eureka/apps/%s/bulk%06d", app, i%n))
				sent.Add(1)
			}
		}()
	}
	i := 0
	for time.Now().Before(deadline) {
		<-tick.C
		for range perTick {
			select {
			case work <- i:
				i++
			default: // the servers cannot keep up: do not queue without bound
			}
		}
	}
	close(work)
	wg.Wait()
	return int(sent.Load())
}

// cpuSeconds reads the process's user plus system CPU time.
func cpuSeconds(b *testing.B, p *proc) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.run.Cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

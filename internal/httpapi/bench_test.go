package httpapi

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// The benchmarks drive a real server over loopback HTTP with keep-alive
// connections. Run them with
//
//	go test -run '^$' -bench . -benchtime 3s ./internal/httpapi
//
// BenchmarkRenew runs the same load generator against a bare handler that
// only answers 200 (this machine's ceiling) and against heureka, so the two
// rates can be compared as a ratio.

func benchInstance(i int) *heureka.Instance {
	host := fmt.Sprintf("dn%06d.prod.example.com", i)
	in := &heureka.Instance{
		ID: fmt.Sprintf("prod-%s-rack%02d", host, i%40), App: "HDFS-DATANODE.PROD",
		HostName: host, IPAddr: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
		Status: heureka.StatusUp, Port: heureka.Port{Number: 9866, Enabled: true},
		VIPAddress: "hdfs-datanode.prod", HomePageURL: "http://" + host + ":9864/",
		Lease: heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
		Metadata: heureka.MetadataOf(map[string]string{
			"rack": fmt.Sprintf("/dc1/rack%02d", i%40), "disk_used": "123456789012", "disk_total": "480000000000000",
			"block_count": "1234567", "version": "3.3.6", "status": "NORMAL", "data_port": "9866",
		}),
	}
	in.Normalize()
	return in
}

func benchServer(b *testing.B, n int) (*httptest.Server, *registry.Registry) {
	ts, reg, _ := benchServerClock(b, n)
	return ts, reg
}

// benchServerClock also returns a function that moves the registry's clock
// forward, so a benchmark can age the registrations out of the delta.
func benchServerClock(b *testing.B, n int) (*httptest.Server, *registry.Registry, func(time.Duration)) {
	b.Helper()
	var offset atomic.Int64
	reg := benchRegistry(b, func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }, n)
	ts := httptest.NewServer(mustNew(b, DefaultConfig(), reg, nil).Handler())
	b.Cleanup(ts.Close)
	return ts, reg, func(d time.Duration) { offset.Add(int64(d)) }
}

// benchRegistry is a registry holding benchInstance 0 to n-1, on clock
// (nil: the real one), that never pauses evictions.
func benchRegistry(b *testing.B, clock func() time.Time, n int) *registry.Registry {
	b.Helper()
	cfg := registry.DefaultConfig()
	if clock != nil {
		cfg.Clock = clock
	}
	cfg.PauseThreshold = 0
	reg, err := registry.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	registerRange(b, reg, 0, n)
	return reg
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
}

// drive sends b.N requests from 8 goroutines per core, made by mk, and
// reports requests per second; every answer must have status want.
func drive(b *testing.B, c *http.Client, want int, mk func(i int) *http.Request) {
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Do(mk(int(next.Add(1))))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				b.Errorf("status %d, want %d", resp.StatusCode, want)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

func BenchmarkRenew(b *testing.B) {
	renew := func(base string, ids []string) func(int) *http.Request {
		return func(i int) *http.Request {
			req, _ := http.NewRequest(http.MethodPut, base+"/eureka/apps/HDFS-DATANODE.PROD/"+ids[i%len(ids)], nil)
			return req
		}
	}
	b.Run("bare-handler", func(b *testing.B) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
		}))
		defer ts.Close()
		drive(b, benchClient(), http.StatusOK, renew(ts.URL, []string{"x"}))
	})
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("heureka-%dk", n/1000), func(b *testing.B) {
			ids := make([]string, n)
			for i := range ids {
				ids[i] = benchInstance(i).ID
			}
			ts, _ := benchServer(b, n)
			drive(b, benchClient(), http.StatusOK, renew(ts.URL, ids))
		})
	}
}

// BenchmarkRenewHandler is what heureka adds to a renewal beyond net/http:
// the handler called directly, with requests as a real client sends them
// (remote address, query, no body) and a writer that keeps nothing, so
// neither the connection nor a client is in the figure. The loopback
// address is the one wrk and the soak send from; "remote" is an agent on
// another host, which the write-rate limiter sees.
func BenchmarkRenewHandler(b *testing.B) {
	for _, c := range []struct{ name, from string }{{"loopback", "127.0.0.1:40000"}, {"remote", "10.1.2.3:40000"}} {
		b.Run(c.name, func(b *testing.B) { benchRenewals(b, 10_000, 0, 10_000, c.from, http.StatusOK) })
	}
}

// BenchmarkRenewUnknown is a renewal of an instance a registry of 100k
// does not hold: what a restarted registry answers every agent once,
// before it registers again.
func BenchmarkRenewUnknown(b *testing.B) {
	benchRenewals(b, 100_000, 100_000, 1000, "10.1.2.3:40000", http.StatusNotFound)
}

// benchRenewals calls the handler directly with renewals of asked bench
// instances from the first'th on, from address from, in a registry that
// holds the first held; every answer must have status want.
func benchRenewals(b *testing.B, held, first, asked int, from string, want int) {
	reg := benchRegistry(b, nil, held)
	hcfg := DefaultConfig()
	hcfg.WriteRate = 1e9 // measure the limiter, never trip it
	h := mustNew(b, hcfg, reg, nil).Handler()
	reqs := make([]*http.Request, asked)
	for i := range reqs {
		r := httptest.NewRequest(http.MethodPut, "/eureka/apps/HDFS-DATANODE.PROD/"+benchInstance(first+i).ID+"?status=UP&lastDirtyTimestamp=1700000000000", nil)
		r.RemoteAddr = from
		reqs[i] = r
	}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w.code = 0
		clear(w.h) // an error answer sets headers
		h.ServeHTTP(w, reqs[i%asked])
		if w.code != want {
			b.Fatalf("status %d, want %d", w.code, want)
		}
	}
}

// discardWriter is a ResponseWriter that remembers only the status.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }

// SetWriteDeadline lets http.ResponseController set the answer's deadline,
// as it does on a real connection.
func (w *discardWriter) SetWriteDeadline(time.Time) error { return nil }

func BenchmarkRegister(b *testing.B) {
	ts, _ := benchServer(b, 0)
	bodies := make([][]byte, 100_000)
	for i := range bodies {
		bodies[i] = eureka.EncodeInstance(eureka.JSON, benchInstance(i))
	}
	drive(b, benchClient(), http.StatusNoContent, func(i int) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/eureka/apps/HDFS-DATANODE.PROD", bytes.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		return req
	})
}

// BenchmarkFetch measures reads of an encoded registry (the state between
// two changes) and reports their latency percentiles.
func BenchmarkFetch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, path := range []string{"/eureka/apps/", "/eureka/apps/delta"} {
			b.Run(fmt.Sprintf("%s/%d", path, n), func(b *testing.B) {
				ts, reg, advance := benchServerClock(b, n)
				// The registrations age out of the delta window; then ten
				// changes, so the delta holds what a poller typically sees.
				advance(4 * time.Minute)
				for i := range 10 {
					_ = reg.SetStatus("HDFS-DATANODE.PROD", benchInstance(i).ID, heureka.StatusOutOfService, 0, false)
				}
				c := benchClient()
				get := func() (time.Duration, int) {
					req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
					req.Header.Set("Accept", "application/json")
					req.Header.Set("Accept-Encoding", "gzip")
					start := time.Now()
					resp, err := c.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					size, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
						b.Fatalf("status %d, encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
					}
					return time.Since(start), int(size)
				}
				_, size := get() // encode once
				var mu sync.Mutex
				var lat []time.Duration
				b.ResetTimer()
				for range b.N {
					d, _ := get()
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(size), "gzip-bytes")
			})
		}
	}
}

// BenchmarkFetchAfterChange measures the first full fetch after a change:
// snapshot patch, JSON encoding and gzip of the whole registry.
func BenchmarkFetchAfterChange(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ts, reg := benchServer(b, n)
			c := benchClient()
			id := benchInstance(0).ID
			b.ResetTimer()
			for i := range b.N {
				st := heureka.StatusUp
				if i%2 == 0 {
					st = heureka.StatusOutOfService
				}
				_ = reg.SetStatus("HDFS-DATANODE.PROD", id, st, 0, false)
				req, _ := http.NewRequest(http.MethodGet, ts.URL+"/eureka/apps/", nil)
				req.Header.Set("Accept", "application/json")
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// fetchOnce GETs path with the given Accept and Accept-Encoding and returns
// the time to the last byte and the body's size. The body is read and
// discarded, never decoded, so the reader's CPU does not dominate.
func fetchOnce(b *testing.B, c *http.Client, url, accept string, gz bool) (time.Duration, int64) {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", accept)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	size, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || (resp.Header.Get("Content-Encoding") == "gzip") != gz {
		b.Fatalf("GET %s: status %d, encoding %q", url, resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	return time.Since(start), size
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkFirstFetchAfterChange is BenchmarkFetchAfterChange with
// percentiles: each iteration changes one instance's metadata and times the
// full gzip fetch that follows.
func BenchmarkFirstFetchAfterChange(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ts, reg := benchServer(b, n)
			c := benchClient()
			id := benchInstance(n / 2).ID
			fetchOnce(b, c, ts.URL+"/eureka/apps/", "application/json", true)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				if err := reg.UpdateMetadata("HDFS-DATANODE.PROD", id, map[string]string{"disk_used": fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
				d, _ := fetchOnce(b, c, ts.URL+"/eureka/apps/", "application/json", true)
				lat = append(lat, d)
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkDeltaAfterStorm polls /apps/delta right after n registrations,
// all still inside the delta window: "first" is the first poll, "poll" the
// polls after it with no write between them, "one-more-write" a poll after
// each further metadata change.
func BenchmarkDeltaAfterStorm(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ts, reg := benchServer(b, n)
			c := benchClient()
			url := ts.URL + "/eureka/apps/delta"
			id := benchInstance(n / 3).ID
			b.ResetTimer()
			first, _ := fetchOnce(b, c, url, "application/json", true)
			poll := make([]time.Duration, 0, b.N)
			for range b.N {
				d, _ := fetchOnce(b, c, url, "application/json", true)
				poll = append(poll, d)
			}
			write := make([]time.Duration, 0, b.N)
			for i := range b.N {
				if err := reg.UpdateMetadata("HDFS-DATANODE.PROD", id, map[string]string{"disk_used": fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
				d, _ := fetchOnce(b, c, url, "application/json", true)
				write = append(write, d)
			}
			b.StopTimer()
			b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
			slices.Sort(poll)
			slices.Sort(write)
			b.ReportMetric(float64(poll[len(poll)*50/100].Microseconds())/1000, "poll-p50-ms")
			b.ReportMetric(float64(poll[len(poll)*99/100].Microseconds())/1000, "poll-p99-ms")
			b.ReportMetric(float64(write[len(write)*50/100].Microseconds())/1000, "write-p50-ms")
			b.ReportMetric(float64(write[len(write)*99/100].Microseconds())/1000, "write-p99-ms")
		})
	}
}

// BenchmarkResident reports the heap in use per instance once the full
// registry and the delta, each in JSON and XML, gzip and plain, have all
// been fetched, after a GC: "heap-B/inst" is the whole heap (the registry
// and everything the read path keeps), "read-path-B/inst" what the fetches
// added. One measurement per run, whatever b.N.
func BenchmarkResident(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ts, _ := benchServer(b, n)
			c := benchClient()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for _, path := range []string{"/eureka/apps/", "/eureka/apps/delta"} {
				for _, accept := range []string{"application/json", "application/xml"} {
					for _, gz := range []bool{true, false} {
						fetchOnce(b, c, ts.URL+path, accept, gz)
					}
				}
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapInuse)/float64(n), "heap-B/inst")
			b.ReportMetric((float64(after.HeapInuse)-float64(before.HeapInuse))/float64(n), "read-path-B/inst")
		})
	}
}

// BenchmarkBlockGzip encodes and gzips 10k instances in blocks of each
// size, at BestSpeed and at the default level, with the standard
// library's gzip and with klauspost/compress's (which the read path
// uses), one gzip member per block, as the read path does when every
// block is new: ns/op is per 10k instances, gz-B/inst the compressed size
// per instance.
func BenchmarkBlockGzip(b *testing.B) {
	const n = 10_000
	ins := make([]*heureka.Instance, n)
	for i := range ins {
		ins[i] = benchInstance(i)
	}
	type gzipWriter interface {
		io.WriteCloser
		Reset(io.Writer)
	}
	libs := []struct {
		name string
		new  func(level int) gzipWriter
	}{
		{"std", func(level int) gzipWriter { zw, _ := stdgzip.NewWriterLevel(nil, level); return zw }},
		{"klauspost", func(level int) gzipWriter { zw, _ := gzip.NewWriterLevel(nil, level); return zw }},
	}
	for _, lib := range libs {
		for _, level := range []int{gzip.BestSpeed, gzip.DefaultCompression} {
			for _, size := range []int{64, 128, 256, n} {
				b.Run(fmt.Sprintf("%s/level=%d/block=%d", lib.name, level, size), func(b *testing.B) {
					zw := lib.new(level)
					var buf bytes.Buffer
					var plain []byte
					total := 0
					for range b.N {
						total = 0
						for i := 0; i < n; i += size {
							plain = eureka.AppendInstances(plain[:0], eureka.JSON, ins[i:min(i+size, n)])
							buf.Reset()
							zw.Reset(&buf)
							_, _ = zw.Write(plain)
							_ = zw.Close()
							total += buf.Len()
						}
					}
					b.ReportMetric(float64(total)/n, "gz-B/inst")
				})
			}
		}
	}
}

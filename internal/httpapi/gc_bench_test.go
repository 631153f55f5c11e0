package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	rtmetrics "runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/registry/registrytest"
)

// BenchmarkRenewGC100k measures what the garbage collector costs a server
// holding 100k DataNodes (20 metadata entries, ~1 KiB each, decoded from
// JSON as a registration would be) while it answers renewals over loopback
// HTTP from 16 goroutines on keep-alive connections, the eviction loop
// running as in the server. It reports the heap objects per stored
// instance, the GC CPU one forced collection of that heap costs, and
// during the renewals the GC's share of the CPU the process used (which
// rises when the rest of the work shrinks), the GC CPU per renewal, its
// cycles per second and CPU per cycle. The load
// generator runs in the same process, so its garbage is counted too: the
// figure compares registries, not servers with clients. Run it as
//
//	go test -run '^$' -bench RenewGC100k -benchtime 100000x ./internal/httpapi
func BenchmarkRenewGC100k(b *testing.B) {
	const n = 100_000
	cfg := registry.DefaultConfig()
	cfg.PauseThreshold = 0
	reg, err := registry.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, n)
	runtime.GC()
	before := heapObjects()
	for i := range n {
		dn := registrytest.DataNode(i)
		dn.Lease.DurationSecs = 3600 // the load outlasts a 30 s lease on a busy machine; nothing may expire
		in, err := eureka.DecodeInstance(eureka.EncodeInstance(eureka.JSON, dn), eureka.JSON)
		if err != nil {
			b.Fatal(err)
		}
		if err := reg.Register(in, false); err != nil {
			b.Fatal(err)
		}
		ids[i] = in.ID
	}
	reg.Snapshot()
	runtime.GC()
	objects := float64(heapObjects()-before) / n
	// What one collection of this heap costs on its own, in the process's
	// CPU (the runtime's own CPU classes count its workers' wall time, which
	// a busy machine inflates): the part of the GC's price that the
	// registry's shape sets. How often it runs is the garbage per request's
	// doing.
	const forced = 5
	c0 := cpuTime()
	for range forced {
		runtime.GC()
	}
	perCollection := cpuTime() - c0

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go reg.Run(ctx)

	api, err := New(DefaultConfig(), reg, nil)
	if err != nil {
		b.Fatal(err)
	}
	// Without this the background encoder would keep this registry alive
	// into the next run of the benchmark, and its collections would mark
	// both.
	defer api.CloseStreams()
	ts := httptest.NewServer(api.Handler())
	defer ts.Close()
	c := benchClient()
	g0 := readGC()
	start := time.Now()
	drive(b, c, http.StatusOK, func(i int) *http.Request {
		req, _ := http.NewRequest(http.MethodPut, ts.URL+"/eureka/apps/"+registrytest.DataNodeApp+"/"+ids[i%n], nil)
		return req
	})
	elapsed := time.Since(start)
	g1 := readGC()
	// The runtime updates its CPU classes at the end of a cycle: without
	// one in the window there is nothing to report.
	if cycles := g1.cycles - g0.cycles; cycles > 0 {
		used := (g1.total - g1.idle) - (g0.total - g0.idle)
		b.ReportMetric((g1.gc-g0.gc)/used, "gc-cpu-fraction")
		b.ReportMetric(1e6*(g1.gc-g0.gc)/float64(b.N), "gc-cpu-us/renewal")
		b.ReportMetric(float64(cycles)/elapsed.Seconds(), "gc/s")
	}
	// After drive: its ResetTimer drops the metrics reported before.
	b.ReportMetric(objects, "objects/instance")
	b.ReportMetric(float64(perCollection.Microseconds())/1000/forced, "gc-cpu-ms/collection")
}

type gcCounters struct {
	gc, total, idle float64
	cycles          uint64
}

func readGC() gcCounters {
	s := []rtmetrics.Sample{
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/total:cpu-seconds"},
		{Name: "/cpu/classes/idle:cpu-seconds"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	rtmetrics.Read(s)
	return gcCounters{s[0].Value.Float64(), s[1].Value.Float64(), s[2].Value.Float64(), s[3].Value.Uint64()}
}

// cpuTime is the CPU the process has used.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func heapObjects() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapObjects
}

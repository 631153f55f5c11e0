package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	rtmetrics "runtime/metrics"
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
//	go test -run '^$' -bench RenewGC100k -benchtime 20000x ./internal/httpapi
func BenchmarkRenewGC100k(b *testing.B) {
	const n = 100_000
	cfg := registry.DefaultConfig()
	cfg.PauseThreshold = 0
	reg, err := registry.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go reg.Run(ctx)

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
	// What one collection of this heap costs, on its own: the part of the
	// GC's price that the registry's shape sets (how often it runs is the
	// garbage per request's doing).
	const forced = 5
	f0 := readGC()
	for range forced {
		runtime.GC()
	}
	f1 := readGC()

	ts := httptest.NewServer(New(DefaultConfig(), reg, nil).Handler())
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
	used := (g1.total - g1.idle) - (g0.total - g0.idle)
	b.ReportMetric((g1.gc-g0.gc)/used, "gc-cpu-fraction")
	b.ReportMetric(1e6*(g1.gc-g0.gc)/float64(b.N), "gc-cpu-us/renewal")
	b.ReportMetric(float64(g1.cycles-g0.cycles)/elapsed.Seconds(), "gc/s")
	b.ReportMetric(objects, "objects/instance") // after drive: ResetTimer drops earlier metrics
	b.ReportMetric(1000*(f1.gc-f0.gc)/forced, "gc-cpu-ms/collection")
	if cycles := g1.cycles - g0.cycles; cycles > 0 {
		b.ReportMetric(1000*(g1.gc-g0.gc)/float64(cycles), "gc-cpu-ms/cycle")
	}
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

func heapObjects() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapObjects
}

package registry

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/testclock"
)

// benchInstance is a DataNode as the agent registers it: the usual Eureka
// fields plus seven metadata entries.
func benchInstance(i int) *heureka.Instance {
	host := fmt.Sprintf("dn%06d.prod.example.com", i)
	in := &heureka.Instance{
		ID: fmt.Sprintf("prod-%s-rack%02d", host, i%40), App: "HDFS-DATANODE.PROD",
		HostName: host, IPAddr: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
		Status: heureka.StatusUp, Port: heureka.Port{Number: 9866, Enabled: true},
		VIPAddress: "hdfs-datanode.prod", SecureVIPAddress: "hdfs-datanode.prod",
		HomePageURL: "http://" + host + ":9864/", HealthCheckURL: "http://" + host + ":9864/jmx",
		Lease: heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
		Metadata: heureka.MetadataOf(map[string]string{
			"rack": fmt.Sprintf("/dc1/rack%02d", i%40), "disk_used": "123456789012", "disk_total": "480000000000000",
			"block_count": "1234567", "version": "3.3.6", "status": "NORMAL", "data_port": "9866",
		}),
	}
	in.Normalize()
	return in
}

func fill(b testing.TB, r *Registry, n int) {
	for i := range n {
		if err := r.Register(benchInstance(i), false); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRegistry(b testing.TB) *Registry {
	r, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkRegister measures registrations into a registry that grows.
func BenchmarkRegister(b *testing.B) {
	r := benchRegistry(b)
	ins := make([]*heureka.Instance, b.N)
	for i := range ins {
		ins[i] = benchInstance(i)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := r.Register(ins[i], false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenew measures heartbeats, all cores at once, on 10k and 100k
// instances.
func BenchmarkRenew(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := benchRegistry(b)
			fill(b, r, n)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = benchInstance(i).ID
			}
			var next atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1)) % n
					if _, err := r.Renew(RenewRequest{App: "HDFS-DATANODE.PROD", ID: ids[i]}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkSnapshotAfterChange measures the cost of the first read after a
// write: one instance changes, the view is rebuilt.
func BenchmarkSnapshotAfterChange(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := benchRegistry(b)
			fill(b, r, n)
			id := benchInstance(0).ID
			b.ResetTimer()
			for i := range b.N {
				st := heureka.StatusUp
				if i%2 == 0 {
					st = heureka.StatusOutOfService
				}
				if err := r.SetStatus("HDFS-DATANODE.PROD", id, st, 0, false); err != nil {
					b.Fatal(err)
				}
				r.Snapshot()
			}
		})
	}
}

// BenchmarkSnapshotRead measures a read when nothing changed: the cost every
// reader pays.
func BenchmarkSnapshotRead(b *testing.B) {
	r := benchRegistry(b)
	fill(b, r, 1000)
	r.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Snapshot()
		}
	})
}

// BenchmarkMemoryPerInstance reports the live heap per registered instance
// at 100k instances, change log and snapshot included.
func BenchmarkMemoryPerInstance(b *testing.B) {
	const n = 100_000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := benchRegistry(b)
		fill(b, r, n)
		r.Snapshot().Delta()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/instance")
		runtime.KeepAlive(r)
	}
}

// BenchmarkCollection100k reports what one collection of a 100k registry
// costs in CPU: the live heap a collector marks at every cycle under load,
// whose price a renewal pays in proportion (docs/design.md). GOMAXPROCS is
// 1 while it collects, so the figure is the work, not the parallelism.
func BenchmarkCollection100k(b *testing.B) {
	const n = 100_000
	for _, settled := range []bool{false, true} {
		name := "storm"
		if settled {
			name = "settled"
		}
		b.Run(name, func(b *testing.B) { benchCollection(b, n, settled) })
	}
}

// benchCollection is BenchmarkCollection100k at n instances, right after
// they registered (their changes in the log and the delta) or settled,
// once the delta window has passed.
func benchCollection(b *testing.B, n int, settled bool) {
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	cfg := DefaultConfig()
	cfg.Clock = clk.Now
	r, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	fill(b, r, n)
	r.Snapshot()
	if settled {
		clk.Advance(cfg.DeltaRetention + time.Second)
		for i := range changeLogFloor + 1 { // each renewal's registration logs a change, pushing the storm's out
			if err := r.Register(benchInstance(i), false); err != nil {
				b.Fatal(err)
			}
		}
		clk.Advance(cfg.DeltaRetention + time.Second)
		if err := r.Register(benchInstance(0), false); err != nil {
			b.Fatal(err)
		}
		r.Snapshot()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.GC()
	b.ResetTimer()
	c0 := processCPU()
	for range b.N {
		runtime.GC()
	}
	b.ReportMetric(float64(processCPU()-c0)/float64(b.N)/1e6, "cpu-ms/collection")
	runtime.KeepAlive(r)
}

// processCPU returns the process's CPU time so far, in nanoseconds.
func processCPU() int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}

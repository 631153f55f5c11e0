package httpapi

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/registry"
)

// BenchmarkHDFSCollector scrapes the HDFS metrics of 100,000 DataNodes in
// ten clusters (40 racks each): "memoised" is a scrape with no application
// changed since the last, "one-app-changed" after one status change in one
// cluster, "full-count" recounts every instance, as a scrape without the
// memo would.
func BenchmarkHDFSCollector(b *testing.B) {
	cfg := registry.DefaultConfig()
	reg, err := registry.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		app := fmt.Sprintf("HDFS-DATANODE.C%d", i%10)
		in := &heureka.Instance{ID: fmt.Sprintf("dn%d", i), App: app, HostName: fmt.Sprintf("dn%d", i), IPAddr: "127.0.0.1",
			Status: heureka.StatusUp, Lease: heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
			Metadata: heureka.MetadataOf(map[string]string{"rack": fmt.Sprintf("/dc1/rack-%02d", (i/10)%40)})}
		in.Normalize()
		if err := reg.Register(in, false); err != nil {
			b.Fatal(err)
		}
	}
	gather := func(b *testing.B, c prometheus.Collector) {
		ch := make(chan prometheus.Metric, 1024)
		go func() { c.Collect(ch); close(ch) }()
		n := 0
		for range ch {
			n++
		}
		if n < 10*40 { // 400 UP series, and one OUT_OF_SERVICE at times
			b.Fatalf("%d series, want at least 400", n)
		}
	}
	c := newHDFSCollector(reg)
	gather(b, c)
	b.Run("memoised", func(b *testing.B) {
		for b.Loop() {
			gather(b, c)
		}
	})
	b.Run("one-app-changed", func(b *testing.B) {
		st := []heureka.Status{heureka.StatusOutOfService, heureka.StatusUp}
		i := 0
		for b.Loop() {
			if err := reg.SetStatus("HDFS-DATANODE.C0", "dn0", st[i%2], 0, false); err != nil {
				b.Fatal(err)
			}
			i++
			gather(b, c)
		}
	})
	b.Run("full-count", func(b *testing.B) {
		for b.Loop() {
			c.mu.Lock()
			clear(c.memo)
			c.mu.Unlock()
			gather(b, c)
		}
	})
}

package replication_test

import (
	"log/slog"
	"testing"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
	"github.com/heureka-project/heureka/registry/registrytest"
	"github.com/heureka-project/heureka/replication"
)

// BenchmarkReceiveRegistrations100k measures what a peer spends on the
// registrations another peer replicates to it in a restart storm: 100,000
// DataNode records in batches of 250 (the sender's batch size), decoded
// and stored. One op is one registration.
func BenchmarkReceiveRegistrations100k(b *testing.B) {
	const n, per = 100_000, 250
	var bodies [][]byte
	for i := 0; i < n; i += per {
		items := make([]eureka.ReplicationItem, 0, per)
		for j := i; j < i+per; j++ {
			in := registrytest.DataNode(j)
			items = append(items, eureka.ReplicationItem{AppName: in.App, ID: in.ID, Action: string(registry.ActionRegister),
				Instance: in, LastDirtyTimestamp: in.LastDirtyTimestamp, Status: in.Status})
		}
		bodies = append(bodies, eureka.EncodeReplicationList(items))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N / n {
		b.StopTimer()
		cfg := registry.DefaultConfig()
		cfg.Logger = slog.New(slog.DiscardHandler)
		reg, err := registry.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		rc := replication.NewReceiver(reg, "node-a", slog.New(slog.DiscardHandler))
		b.StartTimer()
		for _, body := range bodies {
			if _, err := rc.Batch(body); err != nil {
				b.Fatal(err)
			}
		}
		if got := rc.ItemsRefused(); got != 0 {
			b.Fatalf("%d of the %d registrations refused", got, n)
		}
	}
}

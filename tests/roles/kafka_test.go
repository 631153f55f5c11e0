package roles_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaBootstrap: an agent beside each broker of a kfake cluster (a
// real Kafka-protocol implementation) registers it with its rack
// (broker.rack) and role; a real franz-go client bootstraps from the
// registry's answer, the UP instances of kafka-broker.prod, and produces
// and consumes; the controller moving and a broker's death are
// registered.
func TestKafkaBootstrap(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	c := simtest.Open(t, sim.SystemKafka, func(cfg *sim.ClusterConfig) { cfg.ClusterID = "kafka-prod" })
	cl := newClient(t, reg)
	app := heureka.RoleApp(kafka.RoleName, "prod")
	w := newWatcher(t, reg, app)
	from := w.mark()
	var ids []string
	for i := range 3 {
		b := "broker" + strconv.Itoa(i)
		startAgent(t, reg, kafka.RoleName, b+".test", "--broker", simtest.Addr(t, c, b), "--broker-id", strconv.Itoa(i), "--cluster-id", "kafka-prod")
		ids = append(ids, id(b+".test", "/r"+strconv.Itoa(i+1)))
	}
	await(t, cl, app, ids[0], `^UP role_state=broker$`, settle)
	await(t, cl, app, ids[1], `^UP role_state=broker$`, settle)
	in := await(t, cl, app, ids[2], `^UP role_state=controller$`, settle)
	if in.Metadata.Get(kafka.MetaBrokerID) != "2" || in.Metadata.Get(kafka.MetaListener) != net.JoinHostPort(in.IPAddr, strconv.Itoa(in.Port.Number)) {
		t.Errorf("broker2 registered as %+v", in)
	}

	// A client bootstraps from the registry: bootstrap.servers is the UP
	// brokers' host:port.
	var seeds []string
	for _, in := range w.cache.Instances(app) {
		if in.Status == heureka.StatusUp {
			seeds = append(seeds, net.JoinHostPort(in.IPAddr, strconv.Itoa(in.Port.Number)))
		}
	}
	if len(seeds) != 3 {
		t.Fatalf("the registry lists %d UP brokers: %v", len(seeds), seeds)
	}
	kc, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("orders"), kgo.ConsumeTopics("orders"),
		kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 10 {
		if err := kc.ProduceSync(ctx, &kgo.Record{Value: []byte("order-" + strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce through the registry's brokers: %v", err)
		}
	}
	var got []string
	for len(got) < 10 && ctx.Err() == nil {
		fs := kc.PollFetches(ctx)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			t.Fatalf("consume: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 10 {
		t.Errorf("consumed %d of 10 records: %v", len(got), got)
	}

	from = w.mark()
	if err := c.SetState("broker0", "controller"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, ids[0], `^UP role_state=controller$`, bound)
	w.await(t, from, ids[2], `^UP role_state=broker$`, bound)
	from = w.mark()
	if err := c.Stop("broker0"); err != nil {
		t.Fatal(err)
	}
	w.await(t, from, ids[0], `^DOWN .*down_cause=port refused$`, bound)
	w.await(t, from, ids[1], `^UP role_state=controller$`, bound)
}

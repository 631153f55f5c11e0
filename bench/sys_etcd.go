package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcd as a registry, the usual way: one lease per instance (TTL = the
// lease), the instance's Eureka JSON under /heureka/apps/{APP}/{ID} attached
// to it, keep-alives on the lease, and consumers that read the prefix and
// watch it from the revision they read.
const etcdPrefix = "/heureka/apps/"

func etcdKey(app, id string) string { return etcdPrefix + strings.ToUpper(app) + "/" + id }

type etcdBackend struct {
	addr    string
	ttl     int64
	clients []*clientv3.Client // writers share a few connections

	mu     sync.Mutex
	leases map[string]clientv3.LeaseID // by key
}

func newEtcdBackend(addr string, conns int, t timers) (*etcdBackend, error) {
	b := &etcdBackend{addr: addr, ttl: int64(t.Lease / time.Second), leases: map[string]clientv3.LeaseID{}}
	for range conns {
		c, err := newEtcdClient(addr)
		if err != nil {
			b.close()
			return nil, err
		}
		b.clients = append(b.clients, c)
	}
	return b, nil
}

// register grants a lease and puts the instance under it: two requests,
// both through Raft (and the WAL's fsync) on the server.
func (b *etcdBackend) register(ctx context.Context, worker int, in *heureka.Instance) error {
	c := b.clients[worker%len(b.clients)]
	l, err := c.Grant(ctx, b.ttl)
	if err != nil {
		return err
	}
	key := etcdKey(in.App, in.ID)
	if _, err := c.Put(ctx, key, string(eureka.EncodeInstance(eureka.JSON, in)), clientv3.WithLease(l.ID)); err != nil {
		return err
	}
	b.mu.Lock()
	b.leases[key] = l.ID
	b.mu.Unlock()
	return nil
}

func (b *etcdBackend) update(ctx context.Context, in *heureka.Instance) error {
	key := etcdKey(in.App, in.ID)
	b.mu.Lock()
	l, ok := b.leases[key]
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("etcd: %s was not registered here", key)
	}
	_, err := b.clients[0].Put(ctx, key, string(eureka.EncodeInstance(eureka.JSON, in)), clientv3.WithLease(l))
	return err
}

// renewAll sends LeaseKeepAlive requests on one stream per connection, as
// clientv3's KeepAlive does, but paced evenly like the other systems'
// heartbeats and timed from request to response.
func (b *etcdBackend) renewAll(ctx context.Context, ins []*heureka.Instance, period time.Duration, st *renewStats) {
	st.note = "one LeaseKeepAlive per lease per period on a bidirectional gRPC stream (as clientv3's KeepAlive), evenly spread"
	type stream struct {
		mu      sync.Mutex
		s       pb.Lease_LeaseKeepAliveClient
		pending map[int64][]time.Time
	}
	var streams []*stream
	for _, c := range b.clients {
		s, err := pb.NewLeaseClient(c.ActiveConnection()).LeaseKeepAlive(ctx)
		if err != nil {
			st.failed.Add(1)
			<-ctx.Done()
			return
		}
		ks := &stream{s: s, pending: map[int64][]time.Time{}}
		streams = append(streams, ks)
		go func() {
			for {
				resp, err := s.Recv()
				if err != nil {
					return
				}
				now := time.Now()
				ks.mu.Lock()
				q := ks.pending[resp.ID]
				if len(q) > 0 {
					st.lat.add(now.Sub(q[0]))
					if len(q) == 1 {
						delete(ks.pending, resp.ID)
					} else {
						ks.pending[resp.ID] = q[1:]
					}
				}
				ks.mu.Unlock()
				if resp.TTL <= 0 {
					st.failed.Add(1)
				}
			}
		}()
	}
	ids := make([]clientv3.LeaseID, len(ins))
	b.mu.Lock()
	for i, in := range ins {
		ids[i] = b.leases[etcdKey(in.App, in.ID)]
	}
	b.mu.Unlock()
	// Sends on one gRPC stream must not be concurrent: one worker per stream.
	pace(ctx, len(ins), period, 1, &st.late, func(i int) {
		ks := streams[i%len(streams)]
		ks.mu.Lock()
		ks.pending[int64(ids[i])] = append(ks.pending[int64(ids[i])], time.Now())
		ks.mu.Unlock()
		if err := ks.s.Send(&pb.LeaseKeepAliveRequest{ID: int64(ids[i])}); err != nil {
			if ctx.Err() == nil {
				st.failed.Add(1)
			}
			return
		}
		st.sent.Add(1)
	})
	for _, ks := range streams {
		_ = ks.s.CloseSend()
	}
}

// consumer is a client of its own that reads each app's prefix, then
// watches it from the next revision.
func (b *etcdBackend) consumer(ctx context.Context, apps []string, v *view) (func(), error) {
	c, err := newEtcdClient(b.addr)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := func() { cancel(); c.Close() }
	for _, app := range apps {
		prefix := etcdPrefix + strings.ToUpper(app) + "/"
		resp, err := c.Get(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			stop()
			return nil, err
		}
		ins := make([]*heureka.Instance, 0, len(resp.Kvs))
		for _, kv := range resp.Kvs {
			if in, err := eureka.DecodeInstance(kv.Value, eureka.JSON); err == nil {
				ins = append(ins, in)
			}
		}
		v.setApp(app, ins)
		wch := c.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
		go func() {
			for wr := range wch {
				for _, ev := range wr.Events {
					id := strings.TrimPrefix(string(ev.Kv.Key), prefix)
					if ev.Type == clientv3.EventTypeDelete {
						v.put(app, id, nil)
						continue
					}
					if in, err := eureka.DecodeInstance(ev.Kv.Value, eureka.JSON); err == nil {
						v.put(app, id, in)
					}
				}
			}
		}()
	}
	return stop, nil
}

func (b *etcdBackend) close() {
	for _, c := range b.clients {
		c.Close()
	}
}

// etcdRegistry is agent.Registry on etcd, for the failure scenarios: the
// same agent, probing the same simulated daemon, reports through etcd.
// Register puts under the instance's lease (granted on first use, again
// after it expired); Renew is one keep-alive; SetStatus rewrites the value;
// Cancel deletes the key and revokes the lease.
type etcdRegistry struct {
	c   *clientv3.Client
	ttl int64

	mu    sync.Mutex
	lease clientv3.LeaseID
	last  lastRegistration
}

func (r *etcdRegistry) Register(ctx context.Context, in *heureka.Instance) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if r.lease == 0 {
			l, err := r.c.Grant(ctx, r.ttl)
			if err != nil {
				return unavailable(err)
			}
			r.lease = l.ID
		}
		_, err := r.c.Put(ctx, etcdKey(in.App, in.ID), string(eureka.EncodeInstance(eureka.JSON, in)), clientv3.WithLease(r.lease))
		if errors.Is(err, rpctypes.ErrLeaseNotFound) && attempt == 0 {
			r.lease = 0
			continue
		}
		if err != nil {
			return unavailable(err)
		}
		r.last.set(in)
		return nil
	}
}

func (r *etcdRegistry) Renew(ctx context.Context, app, id string) error {
	r.mu.Lock()
	l := r.lease
	r.mu.Unlock()
	if l == 0 {
		return heureka.Errorf(heureka.ENOTFOUND, "no lease")
	}
	_, err := r.c.KeepAliveOnce(ctx, l)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		r.mu.Lock()
		r.lease = 0
		r.mu.Unlock()
		return heureka.Errorf(heureka.ENOTFOUND, "lease expired")
	}
	return unavailable(err)
}

func (r *etcdRegistry) SetStatus(ctx context.Context, app, id string, status heureka.Status) error {
	return r.last.setStatus(ctx, status, r.Register)
}

func (r *etcdRegistry) Cancel(ctx context.Context, app, id string) error {
	r.mu.Lock()
	l := r.lease
	r.lease = 0
	r.mu.Unlock()
	if _, err := r.c.Delete(ctx, etcdKey(app, id)); err != nil {
		return unavailable(err)
	}
	if l != 0 {
		_, _ = r.c.Revoke(ctx, l)
	}
	return nil
}

// unavailable wraps a peer's error as a retryable registry failure.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return heureka.Errorf(heureka.EUNAVAILABLE, "%v", err)
}

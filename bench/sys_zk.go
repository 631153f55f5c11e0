package main

import (
	"context"
	"errors"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"golang.org/x/sync/errgroup"
)

// ZooKeeper as a registry, the usual way (Curator's ServiceDiscovery): an
// ephemeral znode /heureka/{APP}/{ID} holding the instance's Eureka JSON,
// alive as long as the session that created it; consumers keep a child
// watch on each application and a data watch on each instance (Curator's
// PathChildrenCache), re-arming every one-shot watch after it fires and
// re-reading what changed.
//
// Liveness is per session, not per znode. A real deployment has one
// session per host; here the writers share a pool of sessions (see
// zkBackend.sessions), so ZooKeeper's heartbeat load is per pooled session.
const zkRoot = "/heureka"

func zkDir(app string) string      { return zkRoot + "/" + strings.ToUpper(app) }
func zkPath(app, id string) string { return zkDir(app) + "/" + id }

var zkACL = zk.WorldACL(zk.PermAll)

type zkBackend struct {
	addr     string
	timeout  time.Duration
	sessions []*zk.Conn

	mu    sync.Mutex
	owner map[string]int // znode → the session that created it
}

// newZKBackend opens n sessions with the given session timeout.
func newZKBackend(ctx context.Context, addr string, n int, t timers) (*zkBackend, error) {
	b := &zkBackend{addr: addr, timeout: t.Lease, sessions: make([]*zk.Conn, n), owner: map[string]int{}}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for i := range n {
		g.Go(func() error {
			c, err := zkConnect(gctx, addr, t.Lease)
			b.sessions[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// ensureApps creates the persistent parents of the apps' znodes.
func (b *zkBackend) ensureApps(apps []string) error {
	c := b.sessions[0]
	for _, p := range append([]string{zkRoot}, mapSlice(apps, zkDir)...) {
		if _, err := c.Create(p, nil, 0, zkACL); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

func (b *zkBackend) register(_ context.Context, worker int, in *heureka.Instance) error {
	s := worker % len(b.sessions)
	p := zkPath(in.App, in.ID)
	_, err := b.sessions[s].Create(p, eureka.EncodeInstance(eureka.JSON, in), zk.FlagEphemeral, zkACL)
	if errors.Is(err, zk.ErrNoNode) { // the app's parent is missing
		if err := b.ensureApps([]string{in.App}); err != nil {
			return err
		}
		_, err = b.sessions[s].Create(p, eureka.EncodeInstance(eureka.JSON, in), zk.FlagEphemeral, zkACL)
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.owner[p] = s
	b.mu.Unlock()
	return nil
}

func (b *zkBackend) update(_ context.Context, in *heureka.Instance) error {
	p := zkPath(in.App, in.ID)
	b.mu.Lock()
	s := b.owner[p]
	b.mu.Unlock()
	_, err := b.sessions[s].Set(p, eureka.EncodeInstance(eureka.JSON, in), -1)
	return err
}

// renewAll has nothing to send: the client library pings each session
// every third of its timeout, whatever the number of znodes it owns.
func (b *zkBackend) renewAll(ctx context.Context, _ []*heureka.Instance, _ time.Duration, st *renewStats) {
	st.note = "no per-instance heartbeat: go-zookeeper pings each session every timeout/3 (10 s)"
	<-ctx.Done()
}

func (b *zkBackend) consumer(ctx context.Context, apps []string, v *view) (func(), error) {
	return zkFollow(ctx, b.addr, b.timeout, apps, v)
}

func (b *zkBackend) close() {
	for _, c := range b.sessions {
		if c != nil {
			c.Close()
		}
	}
}

// zkFollow opens a session that mirrors apps into v: a child watch per app
// and a data watch per instance, each re-armed (and what it guards re-read)
// every time it fires. Watch events are handled in arrival order by one
// goroutine.
func zkFollow(ctx context.Context, addr string, timeout time.Duration, apps []string, v *view) (func(), error) {
	events := make(chan zk.Event, 4096)
	var closed sync.Once
	done := make(chan struct{})
	cb := func(ev zk.Event) {
		if ev.Type == zk.EventSession || ev.Type == zk.EventNotWatching {
			return
		}
		select {
		case events <- ev:
		case <-done:
		}
	}
	c, sev, err := zk.Connect([]string{addr}, timeout, zk.WithLogInfo(false), zk.WithLogger(silentLogger{}), zk.WithEventCallback(cb))
	if err != nil {
		return nil, err
	}
	stop := func() { closed.Do(func() { close(done); c.Close() }) }
	if err := waitSession(ctx, addr, sev); err != nil {
		stop()
		return nil, err
	}
	f := &zkFollower{c: c, v: v, known: map[string]map[string]bool{}}
	for _, app := range apps {
		if err := f.listApp(app); err != nil {
			stop()
			return nil, err
		}
	}
	go func() {
		for {
			select {
			case <-done:
				return
			case ev := <-events:
				f.handle(ev)
			}
		}
	}()
	return stop, nil
}

type zkFollower struct {
	c     *zk.Conn
	v     *view
	known map[string]map[string]bool // app → children being followed
}

// listApp reads an app's children with a child watch and reads (with a
// data watch) each child not yet known; gone children leave the view.
func (f *zkFollower) listApp(app string) error {
	dir := zkDir(app)
	kids, _, _, err := f.c.ChildrenW(dir)
	for errors.Is(err, zk.ErrNoNode) {
		// Not created yet: watch for its creation and start empty. If it
		// appeared meanwhile, list it after all.
		ok, _, _, eerr := f.c.ExistsW(dir)
		if eerr != nil || !ok {
			f.v.setApp(app, nil)
			return eerr
		}
		kids, _, _, err = f.c.ChildrenW(dir)
	}
	if err != nil {
		return err
	}
	known := f.known[app]
	if known == nil {
		known = map[string]bool{}
		f.known[app] = known
	}
	now := map[string]bool{}
	var fresh []string
	for _, k := range kids {
		now[k] = true
		if !known[k] {
			fresh = append(fresh, k)
		}
	}
	for k := range known {
		if !now[k] {
			delete(known, k)
			f.v.put(app, k, nil)
		}
	}
	// Read new children concurrently: the connection pipelines requests.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	gone := make([]bool, len(fresh))
	for i, k := range fresh {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			gone[i] = !f.readChild(app, k)
		})
	}
	wg.Wait()
	for i, k := range fresh {
		if !gone[i] {
			known[k] = true
		}
	}
	if len(kids) == 0 {
		f.v.setApp(app, nil)
	}
	return nil
}

// readChild reads one instance with a data watch; false means it is gone.
func (f *zkFollower) readChild(app, id string) bool {
	data, _, _, err := f.c.GetW(zkPath(app, id))
	if err != nil {
		f.v.put(app, id, nil)
		return false
	}
	if in, err := eureka.DecodeInstance(data, eureka.JSON); err == nil {
		f.v.put(app, id, in)
	}
	return true
}

func (f *zkFollower) handle(ev zk.Event) {
	dir, id := path.Split(ev.Path)
	dir = strings.TrimSuffix(dir, "/")
	switch ev.Type {
	case zk.EventNodeChildrenChanged:
		_ = f.listApp(strings.TrimPrefix(ev.Path, zkRoot+"/"))
	case zk.EventNodeCreated:
		if dir == zkRoot {
			_ = f.listApp(id)
		}
	case zk.EventNodeDataChanged:
		if dir != zkRoot {
			app := strings.TrimPrefix(dir, zkRoot+"/")
			if !f.readChild(app, id) {
				delete(f.known[app], id)
			}
		}
	case zk.EventNodeDeleted:
		if dir != zkRoot {
			app := strings.TrimPrefix(dir, zkRoot+"/")
			delete(f.known[app], id)
			f.v.put(app, id, nil)
			// It may be back already (an agent registering again), and
			// its child event may have been handled before this one.
			_ = f.listApp(app)
		}
	}
}

// zkRegistry is agent.Registry on ZooKeeper, with the agent's own session
// (timeout = the lease): Register creates the ephemeral znode or rewrites
// it; Renew checks it still exists (the library's pings keep the session
// alive; a znode lost with an expired session is created again);
// SetStatus rewrites it; Cancel deletes it.
type zkRegistry struct {
	c    *zk.Conn
	last lastRegistration
}

func (r *zkRegistry) Register(_ context.Context, in *heureka.Instance) error {
	data := eureka.EncodeInstance(eureka.JSON, in)
	p := zkPath(in.App, in.ID)
	_, err := r.c.Set(p, data, -1)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = r.c.Create(p, data, zk.FlagEphemeral, zkACL)
		if errors.Is(err, zk.ErrNoNode) {
			for _, d := range []string{zkRoot, zkDir(in.App)} {
				if _, e := r.c.Create(d, nil, 0, zkACL); e != nil && !errors.Is(e, zk.ErrNodeExists) {
					return unavailable(e)
				}
			}
			_, err = r.c.Create(p, data, zk.FlagEphemeral, zkACL)
		}
	}
	if err != nil {
		return unavailable(err)
	}
	r.last.set(in)
	return nil
}

func (r *zkRegistry) Renew(_ context.Context, app, id string) error {
	ok, _, err := r.c.Exists(zkPath(app, id))
	switch {
	case err != nil:
		return unavailable(err)
	case !ok:
		return heureka.Errorf(heureka.ENOTFOUND, "znode gone (session expired)")
	}
	return nil
}

func (r *zkRegistry) SetStatus(ctx context.Context, app, id string, status heureka.Status) error {
	return r.last.setStatus(ctx, status, r.Register)
}

func (r *zkRegistry) Cancel(_ context.Context, app, id string) error {
	err := r.c.Delete(zkPath(app, id), -1)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return unavailable(err)
	}
	return nil
}

func mapSlice[T, U any](s []T, f func(T) U) []U {
	out := make([]U, len(s))
	for i, x := range s {
		out[i] = f(x)
	}
	return out
}

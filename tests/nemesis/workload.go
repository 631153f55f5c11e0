package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/agent"
	"github.com/heureka-project/heureka/agent/hdfsrole"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

const (
	plainApp   = "NEMESIS-PLAIN"
	heurekaApp = "HDFS-DATANODE.NEMESIS"
)

// The shapes of client the workload runs, each as users deploy it; what
// each is promised is in promise.go and docs/reliability.md.
const (
	shapeOne   = "one-url"       // heureka's agent with one registry URL (the packaged default)
	shapeSome  = "some-peers"    // heureka's agent with two of the peers' URLs
	shapeEvery = "every-peer"    // heureka's agent with every peer's URL
	shapePlain = "eureka-client" // a plain Eureka client with every peer's URL (eurekaClient)
)

// shapes is every shape, in the order reports list them.
var shapes = []string{shapeOne, shapeSome, shapeEvery, shapePlain}

// agentShapes is the shapes of heureka's agent; agent n takes the n-th in
// turn (-agents narrows them).
var agentShapes = []string{shapeOne, shapeSome, shapeEvery}

// world is what the workload and the nemesis share.
type world struct {
	h     *history
	peers []*peer
	cfg   runConfig
	rng   *lockedRand
	http  *http.Client

	mu   sync.Mutex
	live map[string]*liveInst // instances that should be registered now
	// changing is false once the settle period began: agents keep
	// renewing but change nothing.
	changing atomic.Bool
}

// liveInst is an instance that should be registered now, and what the
// promises need to know of its client.
type liveInst struct {
	shape  string
	agent  int      // plain agent index
	listed []string // a heureka agent's registry peers, which it heartbeats itself
	// via is the peer that acknowledged the plain client's last call, and
	// viaSince when it began to (the client's peer before was another).
	via        string
	viaSince   time.Time
	registered time.Time
	lastOK     time.Time
}

func (li *liveInst) plain() bool { return li.shape == shapePlain }

// acked notes a registration or heartbeat of instance id's client that a
// peer acknowledged (via, when known): the peer renewed its lease. first
// makes the entry when id is not live yet.
func (w *world) acked(id string, via *peer, first func() *liveInst) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	li := w.live[id]
	if li == nil {
		if first == nil {
			return
		}
		li = first()
		li.registered = now
		w.live[id] = li
	}
	li.lastOK = now
	if via != nil && via.name() != li.via {
		li.via, li.viaSince = via.name(), now
	}
}

// forget takes id out of the live instances.
func (w *world) forget(id string) {
	w.mu.Lock()
	delete(w.live, id)
	w.mu.Unlock()
}

type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) intN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

func (l *lockedRand) dur(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(l.intN(int(hi-lo)/int(time.Millisecond)+1))*time.Millisecond
}

// call sends one Eureka request to p, bounded by 2 s, and records it.
func (w *world) call(ctx context.Context, proc, opName, id string, p *peer, method, path string, body []byte) (int, []byte, error) {
	return w.callWithin(ctx, 2*time.Second, proc, opName, id, p, method, path, body)
}

// callWithin sends one Eureka request to p, bounded by d, and records it.
// A status of 300 or more is an error too; the status is returned with it.
func (w *world) callWithin(ctx context.Context, d time.Duration, proc, opName, id string, p *peer, method, path string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.clientURL()+path, strings.NewReader(string(body)))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := w.http.Do(req)
	o := op{Proc: proc, Op: opName, ID: id, Peer: p.name()}
	if err != nil {
		o.Result, o.Info = outcome(err), err.Error()
		w.h.add(o)
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	o.Code = resp.StatusCode
	o.Result = "ok"
	if resp.StatusCode >= 300 {
		o.Result = "error"
		err = fmt.Errorf("%s %s: %d", method, path, resp.StatusCode)
	}
	w.h.add(o)
	return resp.StatusCode, b, err
}

func instanceJSON(id, status string, leaseSecs int, md map[string]string, dirty int64) []byte {
	mdj, _ := json.Marshal(md)
	return fmt.Appendf(nil, `{"instance":{"instanceId":%q,"hostName":"%s.nemesis","app":%q,"ipAddr":"10.213.9.9",
		"status":%q,"port":{"$":9866,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
		"leaseInfo":{"renewalIntervalInSecs":1,"durationInSecs":%d},"metadata":%s,"lastDirtyTimestamp":"%d"}}`,
		id, id, plainApp, status, leaseSecs, mdj, dirty)
}

// serverList is plain client n's service URLs: every peer, in an order of
// the client's own, as Netflix's client shuffles its list with a seed
// drawn from its address (ResolverUtils.randomize; n stands for the
// address). Over a fleet that spreads the clients' first servers over
// every peer; over a dozen clients a shuffle may miss one, so client n
// starts at peer n mod N and the rest of its list is shuffled.
func serverList(peers []*peer, n int) []*peer {
	list := slices.Clone(peers)
	first := n % len(list)
	list[0], list[first] = list[first], list[0]
	rest := list[1:]
	r := rand.New(rand.NewPCG(uint64(n), 0x656e6470))
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return list
}

// plainAgent is a plain Eureka client (eurekaClient) on a node of its
// own: it registers, heartbeats every second with its status and
// lastDirtyTimestamp, registers again when a heartbeat is answered 404
// (DiscoveryClient.renew), changes its metadata and (unless operators own
// its status) its status, cancels, and starts again under a new ID. An ID
// whose cancel was acknowledged is never used again. A crash (the
// node-death fault sends a channel on crash) stops it renewing without a
// word; it sends back the ID it was renewing and starts again under a new
// one.
func (w *world) plainAgent(ctx context.Context, n int, c *eurekaClient, crash chan chan string) {
	ownsStatus := n%3 != 0 // operators override the others
	lease := int(w.cfg.lease / time.Second)
	for gen := 0; ctx.Err() == nil; gen++ {
		id := fmt.Sprintf("plain-%02d-%03d", n, gen)
		md := map[string]string{"gen": strconv.Itoa(gen), "rev": "0"}
		status := "UP"
		var dirty int64
		register := func() bool {
			dirty = max(dirty+1, time.Now().UnixMilli())
			code, p, err := c.do(ctx, "register", id, http.MethodPost, "/apps/"+plainApp, instanceJSON(id, status, lease, md, dirty))
			if err != nil || code/100 != 2 { // DiscoveryClient.register: 204 is success
				return false
			}
			w.acked(id, p, func() *liveInst { return &liveInst{shape: shapePlain, agent: n} })
			return true
		}
		for !register() {
			if sleep(ctx, time.Second) != nil {
				return
			}
		}
		life := w.rng.dur(w.cfg.minLife, w.cfg.maxLife)
		end := time.Now().Add(life)
		crashed := false
		for ctx.Err() == nil && (time.Now().Before(end) || !w.changing.Load()) {
			reply, err := sleepOrCrash(ctx, time.Second, crash)
			if err != nil {
				return
			}
			if reply != nil {
				w.forget(id)
				reply <- id
				crashed = true
				break
			}
			q := url.Values{"status": {status}, "lastDirtyTimestamp": {strconv.FormatInt(dirty, 10)}}
			code, p, err := c.do(ctx, "renew", id, http.MethodPut, "/apps/"+plainApp+"/"+id+"?"+q.Encode(), nil)
			switch {
			case err != nil:
				continue
			case code == http.StatusNotFound:
				register() // DiscoveryClient.renew
				continue
			}
			w.acked(id, p, nil)
			if !w.changing.Load() {
				continue
			}
			switch r := w.rng.intN(20); {
			case r == 0:
				md["rev"] = strconv.Itoa(gen*1000 + w.rng.intN(1000))
				q := url.Values{"rev": {md["rev"]}}
				// A metadata update renews no lease (as in Eureka), so it
				// is not an acknowledged heartbeat.
				_, _, _ = c.do(ctx, "metadata", id, http.MethodPut, "/apps/"+plainApp+"/"+id+"/metadata?"+q.Encode(), nil)
			case r == 1 && ownsStatus:
				if status == "UP" {
					status = "DOWN"
				} else {
					status = "UP"
				}
				register()
			}
		}
		if ctx.Err() != nil {
			return
		}
		if !crashed {
			w.forget(id)
			// Cancel is best effort: any answer ends it.
			_, _, _ = c.do(ctx, "cancel", id, http.MethodDelete, "/apps/"+plainApp+"/"+id, nil)
		}
		if sleep(ctx, w.rng.dur(500*time.Millisecond, 2*time.Second)) != nil {
			return
		}
	}
}

// sleepOrCrash waits d, or until a crash is asked for (its reply channel
// is returned).
func sleepOrCrash(ctx context.Context, d time.Duration, crash chan chan string) (chan string, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case reply := <-crash:
		return reply, nil
	case <-t.C:
		return nil, nil
	}
}

// operator sets and clears OUT_OF_SERVICE on the instances of the plain
// agents that do not change their own status.
func (w *world) operator(ctx context.Context) {
	overridden := map[string]bool{}
	for ctx.Err() == nil && w.changing.Load() {
		if sleep(ctx, w.rng.dur(time.Second, 3*time.Second)) != nil {
			return
		}
		w.mu.Lock()
		var ids []string
		for id, li := range w.live {
			if li.plain() && li.agent%3 == 0 {
				ids = append(ids, id)
			}
		}
		w.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		sortStrings(ids)
		id := ids[w.rng.intN(len(ids))]
		p := w.peers[w.rng.intN(len(w.peers))]
		if !overridden[id] {
			if _, _, err := w.call(ctx, "operator", "override", id, p, http.MethodPut, "/apps/"+plainApp+"/"+id+"/status?value=OUT_OF_SERVICE", nil); err == nil {
				overridden[id] = true
			}
		} else {
			if _, _, err := w.call(ctx, "operator", "clear", id, p, http.MethodDelete, "/apps/"+plainApp+"/"+id+"/status?value=UP", nil); err == nil {
				overridden[id] = false
			}
		}
	}
}

// recordingRegistry is a heureka agent's registry client that writes every
// call to the history, and fails every call once the node is dead.
type recordingRegistry struct {
	w      *world
	proc   string
	shape  string
	listed []string
	c      *client.Client
	dead   atomic.Bool
}

var errDead = errors.New("the node is dead")

func (r *recordingRegistry) rec(name, id string, err error) error {
	o := op{Proc: r.proc, Op: name, ID: id, Result: outcome(err)}
	var ce *client.Error
	if errors.As(err, &ce) {
		o.Code, o.Info = ce.Status, ce.Error()
	} else if err != nil {
		o.Info = err.Error()
	}
	r.w.h.add(o)
	return err
}

func (r *recordingRegistry) Register(ctx context.Context, in *heureka.Instance) error {
	if r.dead.Load() {
		return errDead
	}
	err := r.rec("register", in.ID, r.c.Register(ctx, in))
	if err == nil {
		r.w.acked(in.ID, nil, func() *liveInst { return &liveInst{shape: r.shape, listed: r.listed} })
	}
	return err
}

func (r *recordingRegistry) Renew(ctx context.Context, app, id string) error {
	if r.dead.Load() {
		return errDead
	}
	err := r.rec("renew", id, r.c.Renew(ctx, app, id))
	if err == nil {
		r.w.acked(id, nil, nil)
	}
	return err
}

// recordingRegistry reaches the other peers as the real client does.
var _ agent.OtherPeers = (*recordingRegistry)(nil)

// RenewTold is recorded as "renew": it is the node's first heartbeat,
// naming the other peers that answered the last round.
func (r *recordingRegistry) RenewTold(ctx context.Context, app, id string, told []string) error {
	if r.dead.Load() {
		return errDead
	}
	err := r.rec("renew", id, r.c.RenewTold(ctx, app, id, told))
	if err == nil {
		r.w.acked(id, nil, nil)
	}
	return err
}

func (r *recordingRegistry) RenewOthers(ctx context.Context, app, id string, in *heureka.Instance) ([]string, error) {
	if r.dead.Load() {
		return nil, errDead
	}
	answered, err := r.c.RenewOthers(ctx, app, id, in)
	return answered, r.rec("renew-others", id, err)
}

func (r *recordingRegistry) SetStatus(ctx context.Context, app, id string, st heureka.Status) error {
	if r.dead.Load() {
		return errDead
	}
	return r.rec("drain", id, r.c.SetStatus(ctx, app, id, st))
}

func (r *recordingRegistry) Cancel(ctx context.Context, app, id string) error {
	if r.dead.Load() {
		return errDead
	}
	return r.rec("cancel", id, r.c.Cancel(ctx, app, id))
}

// healthyDaemon is a DataNode that always answers.
type healthyDaemon struct{}

func (healthyDaemon) Probe(context.Context) (hdfsrole.Health, error) { return hdfsrole.Health{}, nil }
func (healthyDaemon) Collect(context.Context) (hdfs.NodeInfo, error) {
	return hdfs.NodeInfo{DiskUsed: 1 << 30, DiskTotal: 100 << 30, BlockCount: 10, Version: "3.3.6", DataPort: 9866}, nil
}

// hagent is one node running heureka's own agent. Its registry URLs are
// those of its shape, starting at its own peer and going round the ring:
// one (the packaged default), two, or every peer, as a deployment
// configures them.
type hagent struct {
	proc   string
	shape  string
	id     string
	reg    *recordingRegistry
	cancel context.CancelFunc
	done   chan struct{}
}

// agentPeers is agent n's registry peers for its shape. Agents take the
// shapes in turn, so starting agent n at peer n would give every agent of
// a shape the same peers (with three peers, every one-url agent p1): the
// ring is shifted by one for each turn.
func agentPeers(peers []*peer, n int, shape string) []*peer {
	first := (n + n/len(agentShapes)) % len(peers)
	k := map[string]int{shapeOne: 1, shapeSome: 2, shapeEvery: len(peers)}[shape]
	var out []*peer
	for i := range k {
		out = append(out, peers[(first+i)%len(peers)])
	}
	return out
}

func (w *world) startHAgent(ctx context.Context, n int, shape string) (*hagent, error) {
	proc := fmt.Sprintf("hagent-%02d", n)
	ccfg := client.DefaultConfig()
	var listed []string
	for _, p := range agentPeers(w.peers, n, shape) {
		ccfg.URLs = append(ccfg.URLs, p.clientURL())
		listed = append(listed, p.name())
	}
	ccfg.ConnectTimeout, ccfg.ReadTimeout = time.Second, time.Second
	c, err := client.New(ccfg)
	if err != nil {
		return nil, err
	}
	cfg := agent.DefaultConfig()
	cfg.Role, cfg.Cluster, cfg.Host, cfg.IPAddr, cfg.Rack = hdfs.RoleName(hdfs.RoleDataNode), "nemesis", fmt.Sprintf("hn%03d", n), "10.213.9.8", "/r1"
	cfg.RenewInterval, cfg.LeaseDuration = time.Second, w.cfg.lease
	cfg.CallTimeout, cfg.DrainPeriod = 2*time.Second, 0
	cfg.BackoffMin, cfg.BackoffMax = 200*time.Millisecond, time.Second
	cfg.Logger = slog.New(slog.DiscardHandler)
	reg := &recordingRegistry{w: w, proc: proc, shape: shape, listed: listed, c: c}
	hcfg := hdfsrole.DefaultConfig()
	hcfg.Role = hdfs.RoleDataNode
	role, err := hdfsrole.New(hcfg, healthyDaemon{})
	if err != nil {
		return nil, err
	}
	a, err := agent.New(cfg, reg, role)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithCancel(ctx)
	ha := &hagent{proc: proc, shape: shape, id: a.Instance().ID, reg: reg, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ha.done)
		defer c.Close()
		_ = a.Run(actx)
	}()
	return ha, nil
}

// die stops the node without a word to the registry, as a crash would.
func (ha *hagent) die(w *world) {
	ha.reg.dead.Store(true)
	w.forget(ha.id)
	ha.cancel()
	<-ha.done
}

// instView is what a full fetch shows of one instance: what clients see
// (status, the metadata's rev) and what tells why two peers' copies differ.
type instView struct {
	Status     string `json:"status"`
	Rev        string `json:"rev"`
	Overridden string `json:"overriddenStatus,omitempty"`
	Action     string `json:"actionType,omitempty"`
	Dirty      string `json:"lastDirtyTimestamp,omitempty"`
	Updated    string `json:"lastUpdatedTimestamp,omitempty"`
	Renewed    string `json:"lastRenewalTimestamp,omitempty"`
}

// seen is what peers must agree on: what a client of the peer sees.
func (v instView) seen() string { return v.Status + " rev=" + v.Rev }

// view is one peer's full registry: id → instance.
type view map[string]instView

// seen is the view as the peers must agree on it: id → status and rev.
func (v view) seen() map[string]string {
	out := make(map[string]string, len(v))
	for id, in := range v {
		out[id] = in.seen()
	}
	return out
}

// fetchView reads the full registry of p.
func (w *world) fetchView(ctx context.Context, proc string, p *peer) (view, error) {
	_, b, err := w.call(ctx, proc, "fetch", "", p, http.MethodGet, "/apps", nil)
	if err != nil {
		return nil, err
	}
	var env struct {
		Applications struct {
			Application []struct {
				Instance []struct {
					ID         string            `json:"instanceId"`
					Status     string            `json:"status"`
					Overridden string            `json:"overriddenStatus"`
					Metadata   map[string]string `json:"metadata"`
					Action     string            `json:"actionType"`
					Dirty      json.RawMessage   `json:"lastDirtyTimestamp"`
					Updated    json.RawMessage   `json:"lastUpdatedTimestamp"`
					Lease      struct {
						Renewed json.RawMessage `json:"lastRenewalTimestamp"`
					} `json:"leaseInfo"`
				} `json:"instance"`
			} `json:"application"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("%s: the full fetch does not decode: %w", p.name(), err)
	}
	raw := func(m json.RawMessage) string { return strings.Trim(string(m), `"`) }
	out := view{}
	for _, a := range env.Applications.Application {
		for _, in := range a.Instance {
			out[in.ID] = instView{Status: in.Status, Rev: in.Metadata["rev"], Overridden: in.Overridden, Action: in.Action,
				Dirty: raw(in.Dirty), Updated: raw(in.Updated), Renewed: raw(in.Lease.Renewed)}
		}
	}
	return out, nil
}

// deltaReader fetches /apps/delta from the peers in turn.
func (w *world) deltaReader(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		if sleep(ctx, time.Second) != nil {
			return
		}
		_, _, _ = w.call(ctx, "reader", "delta", "", w.peers[i%len(w.peers)], http.MethodGet, "/apps/delta", nil)
	}
}

// watchStats are one watcher's findings.
type watchStats struct {
	streams, events, resyncs, gaps, reorders int
}

// watcher follows /v1/watch on p for the whole run, reconnecting from the
// last id it saw. On a stream not told to resync, ids must never go back,
// and a change's id must follow the last id seen: a progress event covers
// every id up to its own that the stream does not carry.
func (w *world) watcher(ctx context.Context, p *peer, st *watchStats) {
	proc := "watch-" + p.name()
	var last uint64
	hc := &http.Client{} // streams: no overall timeout
	for ctx.Err() == nil {
		u := strings.TrimSuffix(p.clientURL(), "/eureka") + "/v1/watch"
		if last > 0 {
			u += "?since=" + strconv.FormatUint(last, 10)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := hc.Do(req)
		if err != nil {
			w.h.add(op{Proc: proc, Op: "watch", Peer: p.name(), Result: outcome(err), Info: err.Error()})
			if sleep(ctx, 500*time.Millisecond) != nil {
				return
			}
			continue
		}
		st.streams++
		events, resynced, err := w.readStream(ctx, p.name(), resp.Body, &last, st)
		resp.Body.Close()
		info := fmt.Sprintf("%d events", events)
		if err != nil && ctx.Err() == nil {
			info += "; ended: " + err.Error()
		}
		w.h.add(op{Proc: proc, Op: "watch", Peer: p.name(), Result: "ok", Code: resp.StatusCode, Info: info})
		if resynced {
			st.resyncs++
			last = 0
		}
		if sleep(ctx, 200*time.Millisecond) != nil {
			return
		}
	}
}

func (w *world) readStream(ctx context.Context, peerName string, body io.Reader, last *uint64, st *watchStats) (events int, resynced bool, err error) {
	// A frozen or cut-off peer sends nothing, not even keep-alives: the
	// reader gives up after 20 s of silence (the server's keep-alive is
	// shorter) and reconnects.
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		errc <- sc.Err()
	}()
	var event string
	var id uint64
	for {
		select {
		case <-ctx.Done():
			return events, false, ctx.Err()
		case err := <-errc:
			return events, false, err
		case <-time.After(20 * time.Second):
			return events, false, errors.New("20 s of silence")
		case line := <-lines:
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				id, _ = strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
			case strings.HasPrefix(line, "data: ") && event == "hello" && *last == 0:
				var h struct{ Version uint64 }
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &h)
				*last = h.Version
			case line == "":
				switch event {
				case "resync":
					return events, true, nil
				case "change", "progress":
					events++
					st.events++
					switch {
					case id <= *last:
						st.reorders++
						w.h.add(op{Proc: "checker", Op: "watch-reorder", Peer: peerName, Result: "error", Info: fmt.Sprintf("%s id %d after %d", event, id, *last)})
					case id != *last+1 && event == "change":
						// A progress event stands for every change up to its
						// id that the stream does not carry (several peer
						// notices in a row give one), so only a change may
						// not skip.
						st.gaps++
						w.h.add(op{Proc: "checker", Op: "watch-gap", Peer: peerName, Result: "error", Info: fmt.Sprintf("%s id %d after %d", event, id, *last)})
					}
					if id > *last {
						*last = id
					}
				}
				event, id = "", 0
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

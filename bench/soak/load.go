package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry/registrytest"
)

// fleet is the simulated population: every instance's record, pre-encoded
// so that the generator spends no CPU encoding during the run.
type fleet struct {
	ids, apps []string
	bodies    [][]byte // JSON registration bodies
	ldt       []string // lastDirtyTimestamp of each body
	renewURL  []string // path and query of each heartbeat, after the base
}

func newFleet(n, apps int, renew, lease time.Duration) *fleet {
	f := &fleet{ids: make([]string, n), apps: make([]string, n), bodies: make([][]byte, n),
		ldt: make([]string, n), renewURL: make([]string, n)}
	perApp := (n + apps - 1) / apps
	now := time.Now().UnixMilli()
	for i := range n {
		app := fmt.Sprintf("HDFS-DATANODE.C%03d", i/perApp)
		in := registrytest.AgentDataNode(app, i, registrytest.Shape{
			Domain: "soak.invalid", Renew: renew, Lease: lease, LastDirty: now})
		f.ids[i], f.apps[i] = in.ID, in.App
		f.bodies[i] = eureka.EncodeInstance(eureka.JSON, in)
		f.ldt[i] = strconv.FormatInt(in.LastDirtyTimestamp, 10)
		f.renewURL[i] = "/apps/" + in.App + "/" + in.ID + "?status=UP&lastDirtyTimestamp=" + f.ldt[i]
	}
	return f
}

// shuffle puts the fleet in a random order (from seed), which is the order
// the storm registers in and the renewals are spread in. A real fleet's
// heartbeat timers have nothing to do with the order of its IDs; in ID
// order a storm touches few of the registry's blocks at a time, which
// flatters the server.
func (f *fleet) shuffle(seed int64) {
	r := rand.New(rand.NewSource(seed))
	r.Shuffle(len(f.ids), func(i, j int) {
		f.ids[i], f.ids[j] = f.ids[j], f.ids[i]
		f.apps[i], f.apps[j] = f.apps[j], f.apps[i]
		f.bodies[i], f.bodies[j] = f.bodies[j], f.bodies[i]
		f.ldt[i], f.ldt[j] = f.ldt[j], f.ldt[i]
		f.renewURL[i], f.renewURL[j] = f.renewURL[j], f.renewURL[i]
	})
}

// newTransport keeps up to conns keep-alive connections to each server and
// leaves gzip to the caller (readers count compressed bytes).
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        conns * 4,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
}

// register sends one registration; ok is a 204.
func register(ctx context.Context, c *http.Client, base string, f *fleet, i int) (time.Duration, int, error) {
	return registerWith(ctx, c, base, f, i, nil)
}

// registerTold registers instance i at base with toldPeersHeader set to
// told, as heureka's agent registers at a peer its extra heartbeat found
// lacking it.
func registerTold(ctx context.Context, c *http.Client, base, told string, f *fleet, i int) (time.Duration, int, error) {
	return registerWith(ctx, c, base, f, i, http.Header{toldPeersHeader: {told}})
}

func registerWith(ctx context.Context, c *http.Client, base string, f *fleet, i int, h http.Header) (time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/apps/"+f.apps[i], bytes.NewReader(f.bodies[i]))
	if err != nil {
		return 0, 0, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	return do(c, req)
}

func renew(ctx context.Context, c *http.Client, base string, f *fleet, i int) (time.Duration, int, error) {
	return renewWith(ctx, c, base, f, i, "")
}

// renewWith renews instance i at base, with toldPeersHeader set to told
// unless told is "".
func renewWith(ctx context.Context, c *http.Client, base string, f *fleet, i int, told string) (time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+f.renewURL[i], nil)
	if err != nil {
		return 0, 0, err
	}
	if told != "" {
		req.Header.Set(toldPeersHeader, told)
	}
	return do(c, req)
}

// toldPeersHeader is heureka.ToldPeersHeader, spelt out: the soak talks to
// the server only over HTTP. A server leaves out of a heartbeat's
// replication the peers it names.
const toldPeersHeader = "X-Heureka-Told-Peers"

// renewOther sends instance i's heartbeat to another peer as heureka's
// agent does, naming told (every peer), registering it there if that peer
// answers 404.
func renewOther(ctx context.Context, c *http.Client, base, told string, f *fleet, i int) error {
	_, code, err := renewWith(ctx, c, base, f, i, told)
	switch {
	case err != nil:
		return err
	case code == http.StatusNotFound:
		if _, code, err = registerTold(ctx, c, base, told, f, i); err == nil && code != http.StatusNoContent {
			err = fmt.Errorf("register at %s: status %d", base, code)
		}
		return err
	case code != http.StatusOK:
		return fmt.Errorf("renew at %s: status %d", base, code)
	}
	return nil
}

func do(c *http.Client, req *http.Request) (time.Duration, int, error) {
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return time.Since(t0), 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(t0), resp.StatusCode, nil
}

// storm registers every instance from w concurrent writers and returns how
// long it took.
func storm(ctx context.Context, c *http.Client, base string, f *fleet, w int, st *phaseStats) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	t0 := time.Now()
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(f.ids) || ctx.Err() != nil {
					return
				}
				d, code, err := register(ctx, c, base, f, i)
				st.writes.observe(d)
				if err != nil || code != http.StatusNoContent {
					st.writeErrors.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("register %s: status %d, %v", f.ids[i], code, err))
				}
			}
		}()
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil && st.writeErrors.Load() > int64(len(f.ids)/100) {
		return time.Since(t0), fmt.Errorf("%d registrations failed; the first: %s", st.writeErrors.Load(), e)
	}
	return time.Since(t0), ctx.Err()
}

// renewers heartbeats every instance every period, instance i at offset
// i·period/n within the period. A heartbeat answered 404 registers the
// instance again. Each outcome is counted in the phase the heartbeat was
// due in.
//
// conns workers send the beats that are due, oldest first across the whole
// fleet (dueQueue): a real fleet's agents do not wait for one another, so
// no instance's beat waits behind others that happen to share a
// connection, and when the server falls behind, its backlog is served in
// order, as a server's queue serves it. A beat that waited a whole period
// for a worker is given up, due and not kept: Eureka's client gives a
// heartbeat up after an interval (heureka's agent sooner), and neither
// sends two to catch up.
//
// The schedule is a fixed grid, not an interval after each heartbeat
// finished as in an agent: a pause of the generator's own (its collector,
// its one core) would otherwise bunch every beat due in it, and fixed
// delays would carry that bunch from round to round, which no fleet of
// separate machines does.
type renewers struct {
	f    *fleet
	c    *http.Client
	base string // every instance talks to this server (the first peer)
	// others, when set, are sent each successful heartbeat as well, with
	// toldPeersHeader naming every peer, base and others, which is told
	// (heureka's agent with every peer listed). As in
	// the agent, those go out beside the renewals, not in their way, to
	// every other peer at once: at most othersInFlight rounds at once (busy
	// counts them), and a beat whose round finds none free skips it
	// (skipped).
	others []string
	told   string
	// othersOK[i] is whether every other peer answered instance i's last
	// round; its next renewal at base then names every peer as well, as
	// the agent's does.
	othersOK []atomic.Bool
	// inRound[i] is set while instance i's round is out: as in the agent,
	// a beat then sends no round and an unmarked renewal.
	inRound []atomic.Bool
	busy    chan struct{}
	skipped atomic.Int64
	othersW sync.WaitGroup
	period  time.Duration
	t0      time.Time
	phases  *phases
	// okAfter[i] is set once instance i renewed or registered successfully
	// after the restart mark.
	okAfter   []atomic.Bool
	restarted atomic.Bool
	// lastOK[i] is when instance i last renewed or registered successfully
	// (unix nanoseconds): the time between two is its silence, which its
	// lease must outlast.
	lastOK []atomic.Int64
}

// othersInFlight bounds the rounds of heartbeats to the other peers that
// are out at once.
const othersInFlight = 2048

func (r *renewers) run(ctx context.Context, conns int) {
	defer r.othersW.Wait()
	if len(r.others) > 0 && r.busy == nil {
		r.busy = make(chan struct{}, othersInFlight)
		r.othersOK = make([]atomic.Bool, len(r.f.ids))
		r.inRound = make([]atomic.Bool, len(r.f.ids))
	}
	if r.lastOK == nil {
		r.lastOK = make([]atomic.Int64, len(r.f.ids))
	}
	q := newDueQueue(r.t0, r.period, len(r.f.ids))
	beats := make(chan due)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for {
				var b due
				select {
				case <-ctx.Done():
					return
				case b = <-beats:
				}
				if time.Since(b.at) > r.period {
					r.phases.at(b.at).scheduled.Add(1)
				} else {
					r.beat(ctx, b.i, b.at)
				}
				q.put(b.i, b.at.Add(r.period))
			}
		})
	}
	q.dispatch(ctx, beats)
	wg.Wait()
}

// spread calls beat for each of n items once per period from t0, item i at
// period·i/n into each round k, from conns goroutines (goroutine w takes
// the items w, w+conns, …), until ctx is done. late is how far behind its
// time the goroutine reached the beat; it is not positive when the
// goroutine waited for it.
func spread(ctx context.Context, t0 time.Time, period time.Duration, n, conns int, beat func(i, k int, at time.Time, late time.Duration)) {
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			for k := 0; ; k++ {
				for i := w; i < n; i += conns {
					at := t0.Add(time.Duration(k)*period + time.Duration(int64(period)*int64(i)/int64(n)))
					d := time.Until(at)
					if d > 0 {
						select {
						case <-ctx.Done():
							return
						case <-time.After(d):
						}
					}
					if ctx.Err() != nil {
						return
					}
					beat(i, k, at, -d)
				}
			}
		})
	}
	wg.Wait()
}

// beat sends instance i's heartbeat due at at, and counts it in the phase
// it was due in: a heartbeat that a restart made late counts against the
// restart, not against the phase in which the generator got to it.
func (r *renewers) beat(ctx context.Context, i int, at time.Time) {
	st := r.phases.at(at)
	st.scheduled.Add(1)
	base := r.base
	told := ""
	if len(r.others) > 0 && r.othersOK[i].Load() && !r.inRound[i].Load() {
		told = r.told
	}
	d, code, err := renewWith(ctx, r.c, base, r.f, i, told)
	if ctx.Err() != nil {
		return
	}
	switch {
	case err != nil:
		st.renewErrors.Add(1)
		return
	case code == http.StatusNotFound:
		st.notFound.Add(1)
		_, code, err = register(ctx, r.c, base, r.f, i)
		if err != nil || code != http.StatusNoContent {
			st.renewErrors.Add(1)
			return
		}
		st.reregistered.Add(1)
	case code != http.StatusOK:
		st.renewErrors.Add(1)
		return
	default:
		st.renews.observe(d)
	}
	now := time.Now()
	if now.Sub(at) <= r.period {
		st.kept.Add(1)
	}
	if last := r.lastOK[i].Swap(now.UnixNano()); last != 0 {
		st.silences.observe(time.Duration(now.UnixNano() - last))
	}
	if len(r.others) > 0 {
		r.round(ctx, st, i)
	}
	if r.restarted.Load() {
		r.okAfter[i].Store(true)
	}
}

// round sends instance i's heartbeat to the other peers, beside the
// renewals, unless its last round is still out or othersInFlight rounds
// are; a round not sent makes the next renewal to the first peer unmarked.
func (r *renewers) round(ctx context.Context, st *phaseStats, i int) {
	if !r.inRound[i].CompareAndSwap(false, true) {
		r.skipped.Add(1)
		r.othersOK[i].Store(false) // as the agent: replicate the next renewal instead
		return
	}
	select {
	case r.busy <- struct{}{}:
		r.othersW.Go(func() {
			defer func() { <-r.busy }()
			defer r.inRound[i].Store(false)
			var wg sync.WaitGroup
			var failed atomic.Bool
			for _, o := range r.others {
				wg.Go(func() {
					if err := renewOther(ctx, r.c, o, r.told, r.f, i); err != nil {
						failed.Store(true)
						if ctx.Err() == nil {
							st.renewErrors.Add(1)
						}
					}
				})
			}
			wg.Wait()
			r.othersOK[i].Store(!failed.Load())
		})
	default:
		r.inRound[i].Store(false)
		r.skipped.Add(1)
		r.othersOK[i].Store(false) // as the agent: replicate the next renewal instead
	}
}

// recovered counts the instances that renewed or registered successfully
// since the restart mark.
func (r *renewers) recovered() int {
	n := 0
	for i := range r.okAfter {
		if r.okAfter[i].Load() {
			n++
		}
	}
	return n
}

// diskUsed is where a registration body's disk_used figure starts.
var diskUsed = []byte(`"disk_used":"`)

// pushBody is instance i's registration for its k-th push (k ≥ 0): its
// body with the last digit of disk_used moved by k+1, so each push stores
// a figure that differs from the one before, as an agent's push does.
func (f *fleet) pushBody(i, k int) ([]byte, error) {
	b := bytes.Clone(f.bodies[i])
	at := bytes.Index(b, diskUsed)
	if at < 0 {
		return nil, fmt.Errorf("instance %s: no disk_used in its registration", f.ids[i])
	}
	end := at + len(diskUsed) + bytes.IndexByte(b[at+len(diskUsed):], '"') - 1
	if end < at+len(diskUsed) || b[end] < '0' || b[end] > '9' {
		return nil, fmt.Errorf("instance %s: disk_used is not a number", f.ids[i])
	}
	b[end] = '0' + byte((int(b[end]-'0')+k+1)%10)
	return b, nil
}

// pushers has every instance register again with a changed figure once per
// period, spread evenly as the renewals are, from conns connections; a push
// a whole period late is dropped, as a renewal is. While paused is set
// they send nothing.
func pushers(ctx context.Context, c *http.Client, base string, f *fleet, period time.Duration, conns int, ph *phases, paused *atomic.Bool) {
	spread(ctx, time.Now(), period, len(f.ids), conns, func(i, k int, _ time.Time, late time.Duration) {
		if late > period || paused.Load() {
			return
		}
		st := ph.current()
		body, err := f.pushBody(i, k)
		if err != nil {
			st.pushErrors.Add(1)
			return
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/apps/"+f.apps[i], bytes.NewReader(body))
		if err != nil {
			st.pushErrors.Add(1)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		d, code, err := do(c, req)
		switch {
		case ctx.Err() != nil:
		case err != nil || code != http.StatusNoContent:
			st.pushErrors.Add(1)
		default:
			st.pushes.observe(d)
		}
	})
}

var hashRE = regexp.MustCompile(`"apps__hashcode":"([A-Z_0-9]*)"`)

// reader polls one server's delta every period and fetches the whole
// registry when the delta's hash code differs from the last one it saw.
// The hash code counts instances by status, so figures pushed with -push
// do not change it.
func reader(ctx context.Context, c *http.Client, base string, period, offset time.Duration, ph *phases, paused *atomic.Bool) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(offset):
	}
	last := ""
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if !paused.Load() {
			st := ph.current()
			d, hash, err := fetch(ctx, c, base+"/apps/delta")
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				st.readErrors.Add(1)
			} else {
				st.deltas.observe(d)
				if hash != last {
					d, hash, err = fetch(ctx, c, base+"/apps/")
					if err != nil {
						st.readErrors.Add(1)
					} else {
						st.fulls.observe(d)
						last = hash
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fetch reads a listing as a gzip-accepting JSON client, inflating only the
// first bytes (where the hash code is) and discarding the rest.
func fetch(ctx context.Context, c *http.Client, url string) (time.Duration, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return 0, "", fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	var head []byte
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return 0, "", fmt.Errorf("GET %s: %w", url, err)
		}
		head = make([]byte, 256)
		k, _ := io.ReadFull(zr, head)
		head = head[:k]
	} else {
		head = make([]byte, 256)
		k, _ := io.ReadFull(resp.Body, head)
		head = head[:k]
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	d := time.Since(t0)
	m := hashRE.FindSubmatch(head)
	if m == nil {
		return d, "", fmt.Errorf("GET %s: no apps__hashcode in the first %d bytes", url, len(head))
	}
	return d, string(m[1]), nil
}

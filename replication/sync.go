package replication

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// startupSync copies the registry from the first peer that answers, trying
// them in turn until SyncTimeout. A peer that answers with an empty registry
// counts (a cluster starting cold). The leases it copies start now: nobody
// is evicted before a full lease period of renewals has had a chance to
// arrive here.
func (rp *Replicator) startupSync(ctx context.Context) {
	deadline := rp.clock.Now().Add(rp.cfg.SyncTimeout)
	for attempt := 0; ; attempt++ {
		others := 0
		for _, p := range rp.peers {
			if !p.isSelf() {
				others++
			}
		}
		if others == 0 {
			rp.synced.Store("no peers: standalone")
			return
		}
		for _, p := range rp.peers {
			if p.isSelf() {
				continue
			}
			n, err := p.copyRegistry(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				rp.log.Debug("start-up sync: peer did not answer", "peer", p.url, "err", err)
				continue
			}
			if p.isSelf() {
				continue
			}
			msg := fmt.Sprintf("copied %d instances from %s", n, p.url)
			rp.log.Info("start-up sync done", "peer", p.url, "instances", n)
			rp.synced.Store(msg)
			return
		}
		if rp.clock.Now().After(deadline) {
			msg := fmt.Sprintf("no peer answered within %s: started empty", rp.cfg.SyncTimeout)
			rp.log.Warn("start-up sync gave up; serving an empty registry until clients and peers fill it", "timeout", rp.cfg.SyncTimeout)
			rp.synced.Store(msg)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-rp.clock.After(min(time.Duration(attempt+1)*200*time.Millisecond, 2*time.Second)):
		}
	}
}

// copyRegistry fetches the peer's whole registry and adopts it.
func (p *peer) copyRegistry(ctx context.Context) (int, error) {
	body, err := p.get(ctx, p.url+"/apps/")
	if err != nil || body == nil {
		return 0, err
	}
	apps, err := eureka.DecodeApplications(body, eureka.JSON)
	if err != nil {
		return 0, fmt.Errorf("registry from %s: %w", p.url, err)
	}
	n := 0
	for _, a := range apps.Apps {
		for _, in := range a.Instances {
			if ok, err := p.rp.reg.Adopt(in, time.Time{}); err != nil {
				p.rp.log.Warn("start-up sync: skipping an instance", "peer", p.url, "instance", in.String(), "err", err)
			} else if ok {
				n++
			}
		}
	}
	p.markUp()
	return n, nil
}

// get fetches u as JSON; a nil body with a nil error means the URL is our
// own server, or the resource does not exist (404).
func (p *peer) get(ctx context.Context, u string) ([]byte, error) {
	req, err := p.rp.newRequest(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.rp.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if p.checkSelf(resp) {
		return nil, nil
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", u, resp.Status, body)
	}
	return body, nil
}

// Digest is what GET /v1/replication/digest answers: per-application
// digests and the recent cancels.
type Digest struct {
	Node       string            `json:"node"`
	Apps       map[string]string `json:"apps"`
	Tombstones []TombstoneJSON   `json:"tombstones"`
}

// TombstoneJSON is a cancel on the wire; Time is in milliseconds.
type TombstoneJSON struct {
	App  string `json:"app"`
	ID   string `json:"id"`
	Time int64  `json:"time"`
}

// FormatDigest renders a digest value.
func FormatDigest(d uint64) string { return strconv.FormatUint(d, 16) }

func (rp *Replicator) antiEntropyLoop(ctx context.Context) {
	repair := func(p *peer) {
		if p.isSelf() {
			return
		}
		if err := p.repair(ctx); err != nil && ctx.Err() == nil {
			rp.log.Debug("anti-entropy: peer did not answer", "peer", p.url, "err", err)
		}
	}
	round := rp.clock.After(rp.cfg.AntiEntropyInterval)
	// A repair asked for (repairNow) is picked up at the next look, at
	// most repairPoll later: repairs are not latency-critical.
	look := rp.clock.After(repairPoll)
	for {
		select {
		case <-ctx.Done():
			return
		case <-round:
			round = rp.clock.After(rp.cfg.AntiEntropyInterval)
			for _, p := range rp.peers {
				repair(p)
			}
		case <-look:
			look = rp.clock.After(repairPoll)
			for _, p := range rp.peers {
				select {
				case <-p.repairNow:
					repair(p)
				default:
				}
			}
		}
	}
}

// repairPoll is how often the anti-entropy loop looks for repairs asked
// for between its rounds.
const repairPoll = 100 * time.Millisecond

// repair compares digests with the peer and pulls what differs: the
// peer's cancels, and its copies of instances that are missing here or
// older here. The peer pulls from us in its own round.
func (p *peer) repair(ctx context.Context) error {
	body, err := p.get(ctx, p.origin+"/v1/replication/digest")
	// The digest is a call like any other: it says whether the peer is
	// reachable, also for a peer this server has had no write to send
	// (one whose clients all use other peers).
	switch {
	case err != nil && ctx.Err() == nil:
		p.markDown(err)
	case err == nil && body != nil:
		p.markUp()
	}
	if err != nil || body == nil {
		return err
	}
	var d Digest
	if err := json.Unmarshal(body, &d); err != nil {
		return fmt.Errorf("digest from %s: %w", p.url, err)
	}
	reg := p.rp.reg
	cancelled := 0
	for _, t := range d.Tombstones {
		if reg.CancelIfRegisteredBefore(t.App, t.ID, time.UnixMilli(t.Time)) {
			cancelled++
		}
	}
	local := reg.Snapshot().Digests()
	adopted, pushed := 0, 0
	for app, remote := range d.Apps {
		if FormatDigest(local[app]) == remote {
			continue
		}
		a, s, err := p.repairApp(ctx, app)
		if err != nil {
			return err
		}
		adopted, pushed = adopted+a, pushed+s
	}
	if cancelled+adopted+pushed > 0 {
		p.rp.log.Info("anti-entropy repaired differences", "peer", p.url, "adopted", adopted, "sent", pushed, "cancelled", cancelled)
	}
	if adopted > 0 {
		// A copy that was older here may be older on the other peers too:
		// compare with them now rather than at the next round. An adoption
		// makes the copy here the same as the peer's, so adoptions cannot
		// chase each other for ever; copies sent to the peer ask for no
		// more comparisons, so a difference the peer cannot take (a server
		// of another make, say) costs one comparison a round, never a loop.
		for _, o := range p.rp.peers {
			if o != p {
				o.repairSoon()
			}
		}
	}
	return nil
}

// maxPulledIDs is how many differing instances of one application a repair
// asks for by ID, and maxPulledQuery how long their query may be; past
// either, it pulls the whole application. Every ID is in the request's
// URL, which a server reads as part of the header (heureka's takes 64 KiB).
const (
	maxPulledIDs   = 64
	maxPulledQuery = 16 << 10
)

// repairApp compares the peer's copies of app with ours. It first compares
// the peer's digest of each instance with its own, so that it pulls only
// those that differ: while writes go on, an application's digest differs at
// most rounds for the few instances whose replication is in flight, and a
// pull of the whole application, encoded there and decoded here, cost
// three peers sharing a core a third of it (docs/benchmarks.md). A peer
// without per-instance digests (404) is asked for the whole application.
//
// Of the copies pulled, one the peer has newer, or that is missing here, is
// adopted; a copy of ours that is newer than the peer's is sent to it, as a
// registration and, when the overrides differ, the override or its removal
// (sent ahead of it, so that the registration's status is judged with the
// override in force). So one comparison leaves both with the newer copy,
// whichever side makes it. A copy the peer lacks is left to the peer's own
// round: sent as a registration it would start a fresh lease there, for a
// node that may be dead.
func (p *peer) repairApp(ctx context.Context, app string) (adopted, sent int, err error) {
	base := p.origin + "/v1/replication/apps/" + url.PathEscape(app)
	body, err := p.get(ctx, base+"/digests")
	if err != nil {
		return 0, 0, err
	}
	query := ""
	if body != nil {
		var remote map[string]string
		if err := json.Unmarshal(body, &remote); err != nil {
			return 0, 0, fmt.Errorf("instance digests of %s from %s: %w", app, p.url, err)
		}
		ids := p.differing(app, remote)
		if len(ids) == 0 {
			return 0, 0, nil
		}
		q := (url.Values{"id": ids}).Encode()
		if len(ids) <= maxPulledIDs && len(q) <= maxPulledQuery {
			query = "?" + q
		}
	}
	body, err = p.get(ctx, base+query)
	if err != nil || body == nil {
		return 0, 0, err
	}
	remote, err := eureka.DecodeApplication(body, eureka.JSON)
	if err != nil {
		return 0, 0, fmt.Errorf("application %s from %s: %w", app, p.url, err)
	}
	snap := p.rp.reg.Snapshot()
	limit := p.rp.clock.Now().Add(p.rp.reg.MaxAhead()).UnixMilli()
	for _, r := range remote.Instances {
		l, ok := snap.Instance(r.App, r.ID)
		if ok && !newer(r, l, limit) {
			if newer(l, r, limit) {
				p.send(l, r)
				sent++
			}
			continue
		}
		ok, err := p.rp.reg.Adopt(r, time.UnixMilli(r.Lease.LastRenewalTimestamp))
		if err != nil {
			p.rp.log.Warn("anti-entropy: skipping an instance", "peer", p.url, "instance", r.String(), "err", err)
			continue
		}
		if ok {
			adopted++
		}
	}
	return adopted, sent, nil
}

// send queues our copy l of an instance for the peer, whose copy r is
// older.
func (p *peer) send(l, r *heureka.Instance) {
	if override(l) != override(r) {
		if override(l) == heureka.StatusUnknown {
			p.enqueue(registry.Op{Action: registry.ActionDeleteStatusOverride, App: l.App, ID: l.ID, Status: l.Status, LastDirtyTimestamp: l.LastDirtyTimestamp})
		} else {
			p.enqueue(registry.Op{Action: registry.ActionStatusUpdate, App: l.App, ID: l.ID, Status: l.OverriddenStatus, LastDirtyTimestamp: l.LastDirtyTimestamp})
		}
	}
	p.enqueue(registry.Op{Action: registry.ActionRegister, App: l.App, ID: l.ID, Instance: l, Status: l.Status, LastDirtyTimestamp: l.LastDirtyTimestamp})
}

// differing returns, sorted, the IDs in remote (a peer's digests of app's
// instances) whose instance is missing here or has another digest.
func (p *peer) differing(app string, remote map[string]string) []string {
	local, _ := p.rp.reg.Snapshot().InstanceDigests(app)
	var ids []string
	for id, d := range remote {
		if v, ok := local[id]; !ok || FormatDigest(v) != d {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// newer reports whether a peer's copy r should replace the local l: a later
// lastDirtyTimestamp (the instance's own clock), else a later change on its
// server (an operator's override, which does not touch lastDirtyTimestamp).
// A change dated after limit (unix milliseconds: this server's clock plus
// the registry's MaxAhead) is not taken as later: a peer whose clock runs
// far ahead would otherwise win every tie.
func newer(r, l *heureka.Instance, limit int64) bool {
	if r.LastDirtyTimestamp != l.LastDirtyTimestamp {
		return r.LastDirtyTimestamp > l.LastDirtyTimestamp
	}
	if registry_equal(r, l) || r.LastUpdatedTimestamp > limit {
		return false
	}
	return r.LastUpdatedTimestamp > l.LastUpdatedTimestamp
}

// override is the instance's status override, UNKNOWN for none.
func override(in *heureka.Instance) heureka.Status {
	if in.OverriddenStatus == "" {
		return heureka.StatusUnknown
	}
	return in.OverriddenStatus
}

func registry_equal(a, b *heureka.Instance) bool {
	if a.Status != b.Status || a.OverriddenStatus != b.OverriddenStatus || a.Metadata.Len() != b.Metadata.Len() {
		return false
	}
	for k, v := range a.Metadata.All() {
		if b.Metadata.Get(k) != v {
			return false
		}
	}
	return true
}

package replication

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
)

// Receiver is the side of replication that peers call: it applies the
// batches they send (POST /peerreplication/batch) and answers what
// anti-entropy asks (GET /v1/replication/digest, GET
// /v1/replication/apps/{APP} and GET /v1/replication/apps/{APP}/digests).
// It does the protocol only; the HTTP layer routes to it, checks the peer
// role, bounds and inflates the body, sets NodeHeader and renders a
// returned error (a heureka.Error) with its status.
type Receiver struct {
	reg    *registry.Registry
	nodeID string
	log    *slog.Logger

	mu      sync.Mutex
	senders map[string]*sender // by the sender's node ID, for BatchInOrder
	uses    uint64             // numbered batches received, to order senders by use

	itemsRefused atomic.Uint64 // items answered 400
}

// ItemsRefused counts the batch items refused as invalid (answered 400)
// since start: unknown actions, missing fields, instances that fail
// validation, timestamps from the future.
func (rc *Receiver) ItemsRefused() uint64 { return rc.itemsRefused.Load() }

// sender is what a Receiver remembers of one heureka peer that sends it
// numbered batches: the highest number applied. mu is held while a batch
// from it is applied, so that a late batch and a newer one never
// interleave item by item.
type sender struct {
	mu   sync.Mutex
	last uint64
	used uint64 // Receiver.uses when a batch from it last came; under Receiver.mu
}

// maxSenders bounds the senders a Receiver remembers. A server's node ID
// is new at every start, so a long-lived receiver sees many; past the
// bound the one heard from least recently is forgotten.
const maxSenders = 1024

// NewReceiver returns a Receiver that writes into reg and names itself
// nodeID in its digest.
func NewReceiver(reg *registry.Registry, nodeID string, log *slog.Logger) *Receiver {
	return &Receiver{reg: reg, nodeID: nodeID, log: log, senders: map[string]*sender{}}
}

// BatchInOrder applies a batch that the heureka server node numbered seq
// (BatchSeqHeader), as Batch does, unless a batch from node with a number
// as high or higher has been applied already. That one is late: its sender
// gave up waiting for the answer (a timeout, a cut), and everything it
// carried was sent again in a later batch, which has been applied since.
// Applying it now would put older writes over newer ones (an override
// back over its clear), so it is refused with ECONFLICT and nothing in it
// is applied. last is the highest number applied from node, for the
// answer: a sender that restarted with a lower number goes on above it.
func (rc *Receiver) BatchInOrder(node string, seq uint64, body []byte) (out []byte, last uint64, err error) {
	if seq == 0 || seq > math.MaxInt64 {
		return nil, 0, heureka.Errorf(heureka.EINVALID, "batch number %d from %s: want 1 to 2^63-1", seq, node)
	}
	rc.mu.Lock()
	s := rc.senders[node]
	if s == nil {
		if len(rc.senders) >= maxSenders {
			rc.forgetOldestSender()
		}
		s = &sender{}
		rc.senders[node] = s
	}
	rc.uses++
	s.used = rc.uses
	rc.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.last {
		return nil, s.last, heureka.Errorf(heureka.ECONFLICT,
			"batch %d from %s is late: batch %d from it was applied already; nothing in this one was applied", seq, node, s.last)
	}
	out, err = rc.Batch(body)
	if err == nil {
		s.last = seq
	}
	return out, s.last, err
}

// Batch applies a batch body (Eureka's JSON replication list) and returns
// the answer to send with 200: one result per item, in position, as
// Netflix's servers answer, so Java peers can send to us too. Every item is
// applied as a replicated write, never forwarded again. A bad item gets its
// own status; only a body that is not a replication list is an error.
func (rc *Receiver) Batch(body []byte) ([]byte, error) {
	if !utf8.Valid(body) {
		// encoding/json would accept it with U+FFFD in place of the bytes.
		return nil, heureka.Errorf(heureka.EINVALID, "request body is not valid UTF-8, as JSON must be")
	}
	items, itemErrs, err := eureka.DecodeReplicationList(body)
	if err != nil {
		return nil, err
	}
	results := make([]eureka.ReplicationResult, len(items))
	refused, first := 0, ""
	for i, it := range items {
		err := itemErrs[i]
		if err == nil {
			results[i], err = rc.apply(it)
		} else {
			results[i].StatusCode = http.StatusBadRequest
		}
		if results[i].StatusCode == http.StatusBadRequest {
			if refused == 0 {
				first = fmt.Sprintf("item %d (%s %s/%s): %v", i, it.Action, it.AppName, it.ID, err)
			}
			refused++
		}
	}
	if refused > 0 {
		// One line per batch: a hostile batch must not flood the log.
		rc.itemsRefused.Add(uint64(refused))
		rc.log.Warn("replication: refused items of a batch", "refused", refused, "items", len(items), "first", first)
	}
	return eureka.EncodeReplicationResults(results), nil
}

// apply applies one item and returns its answer, and the error behind a
// refusal.
func (rc *Receiver) apply(it eureka.ReplicationItem) (eureka.ReplicationResult, error) {
	var err error
	var res eureka.ReplicationResult
	app := strings.ToUpper(it.AppName)
	switch registry.Action(it.Action) {
	case registry.ActionRegister:
		if it.Instance == nil {
			err = heureka.Errorf(heureka.EINVALID, "Register without instanceInfo")
			break
		}
		// The batch was decoded for this request and nothing reads the
		// instance after this, so the registry may keep it without a copy,
		// as the HTTP handler's registration does.
		err = rc.reg.RegisterOwned(registry.RegisterRequest{Instance: it.Instance, Replication: true})
	case registry.ActionHeartbeat:
		var in *heureka.Instance
		in, err = rc.reg.Renew(registry.RenewRequest{App: app, ID: it.ID,
			LastDirtyTimestamp: it.LastDirtyTimestamp, OverriddenStatus: it.OverriddenStatus, Replication: true})
		if heureka.ErrorCode(err) == heureka.ECONFLICT {
			res.Instance = in
		}
	case registry.ActionCancel:
		err = rc.reg.Cancel(registry.CancelRequest{App: app, ID: it.ID, Replication: true})
	case registry.ActionStatusUpdate:
		if it.Status == "" {
			// Would store an empty status as the instance's override.
			err = heureka.Errorf(heureka.EINVALID, "StatusUpdate without a status")
			break
		}
		err = rc.reg.SetStatus(app, it.ID, it.Status, it.LastDirtyTimestamp, true)
	case registry.ActionDeleteStatusOverride:
		err = rc.reg.DeleteStatusOverride(app, it.ID, it.Status, it.LastDirtyTimestamp, true)
	default:
		err = heureka.Errorf(heureka.EINVALID, "unknown replication action %q", it.Action)
	}
	res.StatusCode = http.StatusOK
	if err != nil {
		res.StatusCode = heureka.HTTPStatus(err) // as the Eureka resource the item stands for would answer
		if res.StatusCode >= 500 {
			rc.log.Error("replication: item failed", "action", it.Action, "app", it.AppName, "id", it.ID, "err", err)
		}
	}
	if registry.Action(it.Action) == registry.ActionRegister && res.StatusCode != http.StatusBadRequest {
		res.StatusCode = http.StatusOK // Eureka answers 200 to every replicated register
	}
	return res, err
}

// Digest returns what GET /v1/replication/digest answers, as JSON: the
// per-application digests anti-entropy compares, and the recent cancels.
func (rc *Receiver) Digest() ([]byte, error) {
	d := Digest{Node: rc.nodeID, Apps: map[string]string{}, Tombstones: []TombstoneJSON{}}
	for app, v := range rc.reg.Snapshot().Digests() {
		d.Apps[app] = FormatDigest(v)
	}
	for _, t := range rc.reg.Tombstones() {
		d.Tombstones = append(d.Tombstones, TombstoneJSON{App: t.App, ID: t.ID, Time: t.Time.UnixMilli()})
	}
	return json.Marshal(d)
}

// App returns what GET /v1/replication/apps/{APP} answers: the live
// application app (upper case) in Eureka JSON, with each lease's real last
// renewal time; ENOTFOUND when it has no instances. Given ids (the query's
// id values), only the instances with those IDs are in it.
func (rc *Receiver) App(app string, ids ...string) ([]byte, error) {
	a, ok := rc.reg.LiveApp(app)
	if !ok {
		return nil, heureka.Errorf(heureka.ENOTFOUND, "application %s has no instances", app)
	}
	if len(ids) > 0 {
		want := make(map[string]bool, len(ids))
		for _, id := range ids {
			want[id] = true
		}
		a.Instances = slices.DeleteFunc(a.Instances, func(in *heureka.Instance) bool { return !want[in.ID] })
	}
	return eureka.EncodeApplication(eureka.JSON, a), nil
}

// AppDigests returns what GET /v1/replication/apps/{APP}/digests answers:
// the digest of each instance of app by ID, as JSON; ENOTFOUND when it has
// no instances. A peer whose digest of app differs compares these with its
// own and pulls only the instances that differ (App with ids).
func (rc *Receiver) AppDigests(app string) ([]byte, error) {
	d, ok := rc.reg.Snapshot().InstanceDigests(app)
	if !ok {
		return nil, heureka.Errorf(heureka.ENOTFOUND, "application %s has no instances", app)
	}
	out := make(map[string]string, len(d))
	for id, v := range d {
		out[id] = FormatDigest(v)
	}
	return json.Marshal(out)
}

// forgetOldestSender drops the sender heard from least recently; rc.mu
// must be held.
func (rc *Receiver) forgetOldestSender() {
	var oldest string
	for node, s := range rc.senders {
		if oldest == "" || s.used < rc.senders[oldest].used {
			oldest = node
		}
	}
	delete(rc.senders, oldest)
}

package registry

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
)

// Registry is the lease table: it owns every registration, its lease and
// status override, and the change log. Writers take the lock; readers take
// an immutable Snapshot.
type Registry struct {
	cfg Config
	log *slog.Logger

	mu        sync.RWMutex
	apps      map[string]*appEntry      // by upper-case app name
	overrides map[string]heureka.Status // status overrides by instance ID, as Eureka keys them
	changes   []Change                  // oldest first; entries are never modified in place
	seq       uint64                    // Seq of the newest change
	changed   chan struct{}             // closed and replaced on every change
	tombs     map[tombKey]time.Time     // recent explicit cancels
	tombQ     tombQueue                 // the same by time, to prune (tombs.go)
	forward   func(Op)                  // forwards client writes to peers
	gen       atomic.Uint64             // bumped on every visible write

	buildMu sync.Mutex // serialises snapshot builds
	snap    atomic.Pointer[Snapshot]

	registrations, renewals, cancels, evictions atomic.Uint64
	adoptions                                   atomic.Uint64 // copies taken from peers (Adopt)

	// Expiry (see expiry.go): the queue of live leases by when they would
	// fall silent, the silent leases and the counts self-preservation
	// decides on, guarded by
	// mu held for writing or for reading with tickMu; grace is what pauses
	// granted every lease, in nanoseconds.
	tickMu sync.Mutex
	grace  atomic.Int64
	expiry expiryQueue
	silent []*lease
	census census

	strs  interner  // canonical copies of repeated strings; guarded by mu
	hosts hostIndex // instances by host name and IP (hosts.go); guarded by mu

	// Self-preservation: renewals are counted in fixed one-minute windows
	// (Eureka's MeasuredRate). Guarded by spMu except renewsThisMin
	// (atomic).
	renewsThisMin atomic.Int64
	spMu          sync.Mutex
	windowStart   time.Time
	renewsLastMin int64
	// renewsMeasured: a window has closed since start.
	renewsMeasured bool
	lastTick       time.Time
	lastElapsed    time.Duration // Config.Elapsed at lastTick
	storm          storm         // the registration storm (Config.StormRate)
	storming       atomic.Bool   // the last tick's rate was a storm's (Storming)
	protection     Protection
	peers          struct{ reachable, total int }
}

type appEntry struct {
	leases map[string]*lease
	// view is the last published, ID-sorted application, as blocks (see
	// Block); dirty holds the IDs changed since, so a rebuild copies only
	// the blocks they fall in instead of sorting the whole application
	// again. view and counts are the builder's alone (buildMu); writers add
	// to dirty under Registry.mu, and the builder reads and clears it under
	// the read lock (capture).
	view   *lazyApp
	counts heureka.StatusCounts // of view
	dirty  map[string]struct{}
}

// lease is one registration. inst and duration are guarded by Registry.mu;
// renewed is atomic, so that a renewal needs only the read lock; the rest
// is expiry's bookkeeping (see expiry.go).
type lease struct {
	inst     *stored      // replaced, never mutated
	renewed  atomic.Int64 // the last renewal, virtual unix nanoseconds (Registry.virtual)
	duration time.Duration
	quiet    time.Duration // silentAfter, kept as inst and duration change (expiry.go)
	idx      int32         // position in Registry.expiry, or in Registry.silent when silent
	silent   bool          // had missed a renewal at the last tick (see expiry.go)
	// status and lastDirty are inst's, copied by track and setInst: they
	// are all a renewal reads of an instance, and in the lease it reads
	// anyway they spare it a load of the record, a cache miss per renewal
	// in a large registry.
	status    code
	lastDirty int64
	rack      string // the failure domain it is counted in
}

// virtual returns t as lease times are kept: less the grace pauses granted.
func (r *Registry) virtual(t time.Time) int64 { return t.UnixNano() - r.grace.Load() }

// lastRenewal returns when l last renewed, grace included, in unix
// nanoseconds.
func (r *Registry) lastRenewal(l *lease) int64 { return l.renewed.Load() + r.grace.Load() }

// expired reports whether l has run out at now.
func (r *Registry) expired(l *lease, now time.Time) bool { return r.virtual(now) > l.deadline() }

// renewAt sets l's last renewal to t; r.mu must be held for writing.
func (r *Registry) renewAt(l *lease, t time.Time) {
	l.renewed.Store(r.virtual(t))
	r.reschedule(l)
}

// Change is one entry of the change log: the state of an instance after a
// change, with its ActionType set.
type Change struct {
	Seq  uint64
	Time time.Time
	rec  *stored // the state after the change; nil for a notice (see Instance)
	// What the change replaced: the status before it ("" for a new
	// registration) and the metadata keys it set, changed or removed.
	// Not the replaced instance itself, which the log would keep alive.
	PrevStatus heureka.Status
	Changed    []string
	Cause      heureka.Cause // why the instance changed; unset for a notice
	Notice     *Notice       // set, instead of an instance, for an event about the registry itself
}

// Instance returns the state of the instance after the change, as a new
// copy made at each call; nil for a notice.
func (c Change) Instance() *heureka.Instance {
	if c.rec == nil {
		return nil
	}
	return c.rec.instance()
}

// App returns the changed instance's application; "" for a notice.
func (c Change) App() string {
	if c.rec == nil {
		return ""
	}
	return c.rec.app()
}

// Notice is an event about the registry rather than an instance: it enters
// or leaves self-preservation, a peer is lost or found. Notices take their
// place in the change log so that every reader sees them in order with the
// instance changes.
type Notice struct {
	Kind   heureka.EventType // self_preservation_entered, self_preservation_left, peer_lost, peer_found
	Peer   string            // the peer's URL, for peer_lost and peer_found
	Detail string            // why: the reason, or the error that lost the peer
}

// Note records a notice about the registry itself in the change log.
func (r *Registry) Note(kind heureka.EventType, detail string) {
	r.notice(Notice{Kind: kind, Detail: detail})
}

// NotePeer records that the peer at url was lost (with the error why) or
// found again.
func (r *Registry) NotePeer(kind heureka.EventType, url, detail string) {
	r.notice(Notice{Kind: kind, Peer: url, Detail: detail})
}

func (r *Registry) notice(n Notice) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	r.appendChange(Change{Seq: r.seq, Time: now, Notice: &n})
}

// New returns a registry with cfg, or the error of cfg.Validate; it starts
// nothing. Start from DefaultConfig: every field means what it says, and a
// nil Logger means slog.Default.
func New(cfg Config) (*Registry, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Registry{
		cfg:         cfg,
		log:         cfg.Logger.With("subsystem", "registry"),
		apps:        map[string]*appEntry{},
		overrides:   map[string]heureka.Status{},
		changed:     make(chan struct{}),
		tombs:       map[tombKey]time.Time{},
		windowStart: cfg.Clock(),
		protection:  Protection{Mode: cfg.SelfPreservation},
	}
	return r, nil
}

// Run evicts expired leases every EvictionInterval until ctx is done.
func (r *Registry) Run(ctx context.Context) error {
	t := time.NewTicker(r.cfg.EvictionInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			r.Tick()
		}
	}
}

// Tick does one round of housekeeping: it gives leases grace if the
// process was paused or is taking a registration storm, closes the renewal window when a minute has passed,
// and evicts what has expired unless self-preservation holds it back. Run
// calls it; tests call it after moving their clock. It returns the number
// of instances evicted.
func (r *Registry) Tick() int {
	now := r.cfg.Clock()
	gap, paused := r.graceAfterPause(now)
	r.graceForStorm(now, gap, paused)
	r.rollWindow(now)
	r.mu.RLock()
	due := r.tombsDue(now)
	r.mu.RUnlock()
	if due {
		r.mu.Lock()
		r.pruneTombstones(now)
		r.mu.Unlock()
	}
	return r.evict(now)
}

func (r *Registry) now() time.Time { return r.cfg.Clock() }

// Now returns the time on the registry's clock (Config.Clock), which its
// snapshots' and changes' times are on.
func (r *Registry) Now() time.Time { return r.now() }

// MaxAhead is how far ahead of the registry's clock a timestamp it takes
// may be (Config.MaxAhead).
func (r *Registry) MaxAhead() time.Duration { return r.cfg.MaxAhead }

// Register adds an instance or replaces its earlier registration, following
// Eureka's rules: a stored copy with a newer lastDirtyTimestamp wins, status
// overrides are kept, and a client cannot talk its way out of an operator's
// UP or OUT_OF_SERVICE. in must be normalised; Register validates it and
// keeps its own copy.
func (r *Registry) Register(in *heureka.Instance, replication bool) error {
	return r.RegisterOwned(RegisterRequest{Instance: in.Clone(), Replication: replication})
}

// RegisterOwned is Register of an instance the caller gives up
// (RegisterRequest.Instance), as the HTTP layer does with one it has just
// decoded: the registry sets its fields on the instance itself, instead
// of on a copy. The copy it saves is about a tenth of what a registration
// over HTTP allocates. A client's registration (not a replication) is
// forwarded, with req.Told.
func (r *Registry) RegisterOwned(req RegisterRequest) error {
	in, replication, told := req.Instance, req.Replication, req.Told
	if err := in.Validate(r.cfg.Limits); err != nil {
		return err
	}
	now := r.now()
	nowMs := now.UnixMilli()
	if err := r.checkTimestamp(in.App, in.ID, "lastDirtyTimestamp", in.LastDirtyTimestamp, now); err != nil {
		return err
	}
	if in.LastDirtyTimestamp == 0 {
		in.LastDirtyTimestamp = nowMs
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	app := r.apps[in.App]
	var old *lease
	if app != nil {
		old = app.leases[in.ID]
	}
	if replication && old == nil && in.Lease.RegistrationTimestamp > 0 {
		if t, ok := r.tombs[tombKey{in.App, in.ID}]; ok && in.Lease.RegistrationTimestamp <= t.UnixMilli() {
			// A peer's copy from before a cancel this registry has seen:
			// the peer renewed it before the cancel reached it, and sends
			// it back when its heartbeat finds nothing here. The cancel
			// stands.
			return heureka.Errorf(heureka.ECONFLICT,
				"instance %s/%s: the peer registered it at %d, before it was cancelled here at %d: the cancel stands",
				in.App, in.ID, in.Lease.RegistrationTimestamp, t.UnixMilli())
		}
	}
	if old != nil && old.inst.lastDirty > in.LastDirtyTimestamp {
		r.log.Debug("register: keeping the stored copy, its lastDirtyTimestamp is newer",
			"instance", in.String(), "stored", old.inst.lastDirty, "incoming", in.LastDirtyTimestamp)
		in = old.inst.instance()
	}
	if in.OverriddenStatus != heureka.StatusUnknown {
		if _, ok := r.overrides[in.ID]; !ok {
			r.overrides[strings.Clone(in.ID)] = in.OverriddenStatus // not a slice of the request
		}
	}
	if ov, ok := r.overrides[in.ID]; ok {
		in.OverriddenStatus = ov
	}
	in.Status = r.effectiveStatus(in.ID, in.Status, old, replication)

	in.Lease.RegistrationTimestamp = nowMs
	in.Lease.LastRenewalTimestamp = nowMs
	in.Lease.EvictionTimestamp = 0
	if old != nil {
		in.Lease.ServiceUpTimestamp = old.inst.lease.ServiceUpTimestamp
	} else {
		in.Lease.ServiceUpTimestamp = 0
	}
	if in.Status == heureka.StatusUp && in.Lease.ServiceUpTimestamp == 0 {
		in.Lease.ServiceUpTimestamp = nowMs
	}
	in.ActionType = heureka.ActionAdded
	in.LastUpdatedTimestamp = nowMs
	in.IsCoordinatingDiscoveryServer = false

	if app == nil {
		app = &appEntry{leases: map[string]*lease{}, dirty: map[string]struct{}{}}
		r.apps[strings.Clone(in.App)] = app
	}
	var prev *stored
	duration := time.Duration(in.Lease.DurationSecs) * time.Second
	l := old
	if l != nil {
		// A registration starts a fresh lease: the stored one takes the new
		// value, renewal time and duration.
		prev = l.inst
		l.duration = duration
		r.setInst(l, store(in, prev))
		r.renewAt(l, now)
	} else {
		l = &lease{inst: store(in, nil), duration: duration}
		l.renewed.Store(r.virtual(now))
		app.leases[l.inst.id()] = l
		r.track(l)
	}
	r.record(now, app, l, prev, l.inst, heureka.CauseRegister)
	delete(r.tombs, tombKey{in.App, in.ID})
	r.registrations.Add(1)
	if !replication {
		r.forwardLocked(Op{Action: ActionRegister, App: in.App, ID: in.ID, Instance: in,
			Status: in.Status, LastDirtyTimestamp: in.LastDirtyTimestamp, Told: told})
	}
	return nil
}

// effectiveStatus is Eureka's override rule chain: believe an instance that
// says it is not OK; else an operator's override; else keep what the server
// already decided (UP or OUT_OF_SERVICE) unless this is a replication; else
// the instance's own word. id and st are the instance's ID and status.
func (r *Registry) effectiveStatus(id string, st heureka.Status, existing *lease, replication bool) heureka.Status {
	if st != heureka.StatusUp && st != heureka.StatusOutOfService {
		return st
	}
	if ov, ok := r.overrides[id]; ok {
		return ov
	}
	if !replication && existing != nil {
		if cur := existing.status.status(); cur == heureka.StatusUp || cur == heureka.StatusOutOfService {
			return cur
		}
	}
	return st
}

// Renew renews a lease. It answers ENOTFOUND when the client must register
// again: the instance is unknown, its status became UNKNOWN (an override was
// deleted), or the client holds a newer copy (lastDirtyTimestamp). For a
// replication whose copy is older it answers ECONFLICT together with the
// stored instance, for the peer to adopt; it returns no instance otherwise.
func (r *Registry) Renew(req RenewRequest) (*heureka.Instance, error) {
	now := r.now()
	if err := r.checkTimestamp(req.App, req.ID, "lastDirtyTimestamp", req.LastDirtyTimestamp, now); err != nil {
		return nil, err
	}
	r.mu.RLock()
	l := r.lookup(req.App, req.ID)
	if l == nil {
		r.mu.RUnlock()
		return nil, notFound(req.App, req.ID)
	}
	st := r.effectiveStatus(req.ID, l.status.status(), l, req.Replication)
	if st != l.status.status() {
		r.mu.RUnlock()
		return r.renewChangingStatus(req, now)
	}
	if st == heureka.StatusUnknown {
		r.mu.RUnlock()
		return nil, heureka.Errorf(heureka.ENOTFOUND, "instance %s/%s has status UNKNOWN: register again", req.App, req.ID)
	}
	if !renewForward(l, r.virtual(now)) {
		// The clock stepped back (or a later renewal of the same lease got
		// in first): the deadline moves back, which only a writer may do.
		r.mu.RUnlock()
		return r.renewChangingStatus(req, now)
	}
	r.forwardHeartbeat(req, l)
	inst, dirty := l.inst, l.lastDirty
	r.mu.RUnlock()
	r.renewals.Add(1)
	r.renewsThisMin.Add(1)
	return r.checkDirty(req, inst, dirty)
}

// renewForward moves l's renewal time forward to v, reporting false when
// it is already later.
func renewForward(l *lease, v int64) bool {
	for {
		cur := l.renewed.Load()
		if v < cur {
			return false
		}
		if l.renewed.CompareAndSwap(cur, v) {
			return true
		}
	}
}

// renewChangingStatus is the rare renewal that needs the write lock: its
// rule chain changes the stored status (say an override set on a peer), or
// it moves the deadline back.
func (r *Registry) renewChangingStatus(req RenewRequest, now time.Time) (*heureka.Instance, error) {
	r.mu.Lock()
	app := r.apps[req.App]
	var l *lease
	if app != nil {
		l = app.leases[req.ID]
	}
	if l == nil {
		r.mu.Unlock()
		return nil, notFound(req.App, req.ID)
	}
	st := r.effectiveStatus(req.ID, l.inst.status.status(), l, req.Replication)
	if st == heureka.StatusUnknown {
		r.mu.Unlock()
		return nil, heureka.Errorf(heureka.ENOTFOUND, "instance %s/%s has status UNKNOWN: register again", req.App, req.ID)
	}
	if st != l.inst.status.status() {
		in := l.inst.instance()
		in.Status = st
		r.replace(now, app, l, in, heureka.ActionModified, heureka.CauseRenewStatus)
	}
	r.renewAt(l, now)
	r.forwardHeartbeat(req, l)
	inst, dirty := l.inst, l.lastDirty
	r.mu.Unlock()
	r.renewals.Add(1)
	r.renewsThisMin.Add(1)
	return r.checkDirty(req, inst, dirty)
}

// forwardHeartbeat forwards a client's renewal of l, with the peers its
// sender tells itself (req.Told); r.mu must be held.
func (r *Registry) forwardHeartbeat(req RenewRequest, l *lease) {
	if req.Replication || r.forward == nil {
		return
	}
	s := l.inst
	id := s.id()
	op := Op{Action: ActionHeartbeat, App: s.app(), ID: id, Status: l.status.status(), LastDirtyTimestamp: l.lastDirty, Told: req.Told}
	if ov, ok := r.overrides[id]; ok {
		op.OverriddenStatus = ov
	}
	r.forward(op)
}

// checkDirty compares the renewal's lastDirtyTimestamp with lastDirty, the
// stored record s's; only a conflict returns the instance.
func (r *Registry) checkDirty(req RenewRequest, s *stored, lastDirty int64) (*heureka.Instance, error) {
	if req.LastDirtyTimestamp == 0 {
		return nil, nil
	}
	switch {
	case req.LastDirtyTimestamp > lastDirty:
		if req.Replication && req.OverriddenStatus != "" && req.OverriddenStatus != heureka.StatusUnknown {
			r.mu.Lock()
			r.overrides[req.ID] = req.OverriddenStatus
			r.gen.Add(1)
			r.mu.Unlock()
		}
		return nil, heureka.Errorf(heureka.ENOTFOUND,
			"instance %s/%s: the caller's copy (lastDirtyTimestamp %d) is newer than the registry's (%d): register again",
			req.App, req.ID, req.LastDirtyTimestamp, lastDirty)
	case req.LastDirtyTimestamp < lastDirty && req.Replication:
		return s.instance(), heureka.Errorf(heureka.ECONFLICT,
			"instance %s/%s: the registry's copy (lastDirtyTimestamp %d) is newer than the peer's (%d)",
			req.App, req.ID, lastDirty, req.LastDirtyTimestamp)
	}
	return nil, nil
}

// Cancel removes an instance and its status override.
func (r *Registry) Cancel(req CancelRequest) error {
	app, id := req.App, req.ID
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.remove(now, app, id, heureka.CauseCancel) {
		return notFound(app, id)
	}
	r.tombstone(tombKey{app, id}, now)
	if len(r.tombs) > 2*r.cfg.ChangeLogSize {
		r.pruneTombstones(now)
	}
	r.cancels.Add(1)
	if !req.Replication {
		r.forwardLocked(Op{Action: ActionCancel, App: app, ID: id})
	}
	return nil
}

// SetStatus sets an operator's status override (OUT_OF_SERVICE to drain,
// UP to bring back) and renews the lease, as Eureka does. Setting the status
// the instance already has stores no override.
func (r *Registry) SetStatus(app, id string, st heureka.Status, lastDirty int64, replication bool) error {
	return r.writeStatus(app, id, ActionStatusUpdate, st, lastDirty, replication, func(now time.Time, cur *heureka.Instance) (*heureka.Instance, heureka.Cause) {
		if cur.Status == st {
			return nil, ""
		}
		r.overrides[id] = st
		cur.OverriddenStatus = st
		cur.Status = st
		if st == heureka.StatusUp && cur.Lease.ServiceUpTimestamp == 0 {
			cur.Lease.ServiceUpTimestamp = now.UnixMilli()
		}
		return cur, heureka.CauseStatus
	})
}

// DeleteStatusOverride removes an override and sets the status to value
// (UNKNOWN when empty, which makes the instance's next renewal re-register).
func (r *Registry) DeleteStatusOverride(app, id string, value heureka.Status, lastDirty int64, replication bool) error {
	if value == "" {
		value = heureka.StatusUnknown
	}
	return r.writeStatus(app, id, ActionDeleteStatusOverride, value, lastDirty, replication, func(_ time.Time, cur *heureka.Instance) (*heureka.Instance, heureka.Cause) {
		if _, ok := r.overrides[id]; !ok {
			return nil, ""
		}
		delete(r.overrides, id)
		cur.OverriddenStatus = heureka.StatusUnknown
		cur.Status = value
		return cur, heureka.CauseOverrideDeleted
	})
}

// writeStatus is what SetStatus and DeleteStatusOverride share: like
// Eureka, it renews the lease and, unless the write is replication,
// forwards it to the peers with the instance's lastDirtyTimestamp after
// the change. change runs with r.mu held, is given a copy of the instance
// to change, and returns it with the cause of the change, or nil when
// nothing changes.
func (r *Registry) writeStatus(app, id string, action Action, st heureka.Status, lastDirty int64, replication bool,
	change func(now time.Time, cur *heureka.Instance) (*heureka.Instance, heureka.Cause)) error {
	now := r.now()
	if err := r.checkTimestamp(app, id, "lastDirtyTimestamp", lastDirty, now); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	a, l := r.lookupEntry(app, id)
	if l == nil {
		return notFound(app, id)
	}
	r.renewAt(l, now)
	if !replication {
		defer func() {
			r.forwardLocked(Op{Action: action, App: app, ID: id, Status: st, LastDirtyTimestamp: l.inst.lastDirty})
		}()
	}
	in, why := change(now, l.inst.instance())
	if in == nil {
		return nil
	}
	in.LastDirtyTimestamp = max(in.LastDirtyTimestamp, lastDirty)
	r.replace(now, a, l, in, heureka.ActionModified, why)
	return nil
}

// UpdateMetadata merges md into an instance's metadata. The merged map must
// stay within the limits; otherwise nothing changes. Like Eureka, it leaves
// lastDirtyTimestamp alone, so the instance's next full registration wins.
func (r *Registry) UpdateMetadata(app, id string, md map[string]string) error {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	a, l := r.lookupEntry(app, id)
	if l == nil {
		return notFound(app, id)
	}
	in := l.inst.instance()
	kv := make([]string, 0, 2*len(md))
	for k, v := range md {
		if k != "@class" { // Java's type hint, never metadata
			kv = append(kv, k, v)
		}
	}
	in.Metadata = in.Metadata.With(kv...)
	if err := heureka.ValidateMetadata(in.Metadata, r.cfg.Limits); err != nil {
		return err
	}
	r.replace(now, a, l, in, heureka.ActionModified, heureka.CauseMetadata)
	// Eureka forwards a metadata update as a full registration.
	r.forwardLocked(Op{Action: ActionRegister, App: app, ID: id, Instance: in, Status: in.Status, LastDirtyTimestamp: in.LastDirtyTimestamp})
	return nil
}

// lookup finds a lease; r.mu must be held.
func (r *Registry) lookup(app, id string) *lease {
	_, l := r.lookupEntry(app, id)
	return l
}

func (r *Registry) lookupEntry(app, id string) (*appEntry, *lease) {
	a := r.apps[app]
	if a == nil {
		return nil, nil
	}
	return a, a.leases[id]
}

// replace publishes a new value for an existing lease; r.mu must be held.
func (r *Registry) replace(now time.Time, a *appEntry, l *lease, in *heureka.Instance, action heureka.ActionType, cause heureka.Cause) {
	in.ActionType = action
	in.LastUpdatedTimestamp = now.UnixMilli()
	in.Lease.LastRenewalTimestamp = r.lastRenewal(l) / int64(time.Millisecond)
	prev := l.inst
	r.setInst(l, store(in, prev))
	r.record(now, a, l, prev, l.inst, cause)
}

// remove deletes a lease and its override and records the deletion; r.mu
// must be held.
func (r *Registry) remove(now time.Time, app, id string, cause heureka.Cause) bool {
	a, l := r.lookupEntry(app, id)
	if l == nil {
		return false
	}
	delete(a.leases, id)
	delete(r.overrides, id)
	r.untrack(l)
	gone := *l.inst
	gone.action = codeOf(string(heureka.ActionDeleted))
	gone.lastUpdated = now.UnixMilli()
	gone.lease.EvictionTimestamp = now.UnixMilli()
	r.record(now, a, l, l.inst, &gone, cause)
	if len(a.leases) == 0 {
		delete(r.apps, app)
	}
	return true
}

// record appends a change and invalidates the snapshot; r.mu must be held.
func (r *Registry) record(now time.Time, a *appEntry, l *lease, prev, in *stored, cause heureka.Cause) {
	if a.dirty == nil {
		a.dirty = map[string]struct{}{}
	}
	a.dirty[in.id()] = struct{}{}
	if in.action.action() == heureka.ActionDeleted {
		r.hosts.update(l, prev, nil)
	} else {
		r.hosts.update(l, prev, in)
	}
	r.seq++
	r.gen.Add(1)
	c := Change{Seq: r.seq, Time: now, rec: in, Cause: cause}
	if prev != nil {
		c.PrevStatus, c.Changed = prev.status.status(), prev.md.ChangedKeys(in.md)
	}
	r.appendChange(c)
}

// changeLogFloor is how many changes the log keeps however old they are,
// so that on a quiet registry a watcher away for longer than the delta
// window still resumes from the log rather than a full listing. Each entry
// can keep one replaced version of an instance alive (~1 KiB for a
// DataNode), so the floor costs at most ~10 MiB.
const changeLogFloor = 10_000

// appendChange adds c to the bounded log and wakes the watchers; r.mu must
// be held for writing.
//
// The log keeps the changes of the last DeltaRetention, which a delta or a
// watcher back within the delta window may ask for, the newest
// changeLogFloor whatever their age, and never more than ChangeLogSize.
// Every entry points at the version of an instance its change made, so
// each one an instance has since replaced stays in memory while its entry
// does: bounding the log by count alone let a fleet whose agents push
// metadata every few minutes keep one or two old versions of every
// instance. Dropped entries are cut off by copying the rest once they are
// a quarter of the log, so the copy costs O(1) a change and at most a
// third more than the bound is held.
func (r *Registry) appendChange(c Change) {
	if drop := r.staleChanges(c.Time); drop > 0 && drop >= len(r.changes)/4 {
		r.changes = slices.Clone(r.changes[drop:])
	}
	r.changes = append(r.changes, c)
	close(r.changed)
	r.changed = make(chan struct{})
}

// staleChanges is how many of the oldest changes the log no longer needs at
// now; r.mu must be held.
func (r *Registry) staleChanges(now time.Time) int {
	n := len(r.changes)
	drop := min(firstAfter(r.changes, now.Add(-r.cfg.DeltaRetention)), n-min(changeLogFloor, r.cfg.ChangeLogSize))
	return max(drop, n-r.cfg.ChangeLogSize, 0)
}

// Changed returns a channel that is closed at the next change. Take it
// before reading what is there (ChangesSince), then wait on it: no change
// can slip between the two.
func (r *Registry) Changed() <-chan struct{} {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.changed
}

// ChangesSince returns the changes after version since, oldest first, and
// the newest version. ok is false when the log no longer reaches back that
// far (the caller must resynchronise from a full listing). The returned
// slice is shared and must not be modified.
func (r *Registry) ChangesSince(since uint64) (changes []Change, latest uint64, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return changesSince(r.changes, r.seq, since)
}

func changesSince(log []Change, latest, since uint64) ([]Change, uint64, bool) {
	if since >= latest {
		return nil, latest, since == latest
	}
	if len(log) == 0 || log[0].Seq > since+1 {
		return nil, latest, false
	}
	i := since + 1 - log[0].Seq
	return log[i:len(log):len(log)], latest, true
}

func notFound(app, id string) error {
	// Not Errorf: a restarted registry answers every agent's first
	// renewal with this, and fmt costs more than the rest of the answer.
	return &heureka.Error{Code: heureka.ENOTFOUND, Message: "instance " + app + "/" + id + " is not registered"}
}

// checkTimestamp refuses a timestamp (unix milliseconds) of instance app/id
// that is negative or more than MaxAhead ahead of now; zero means not given.
func (r *Registry) checkTimestamp(app, id, field string, ms int64, now time.Time) error {
	// The name is made only for an error: this runs on every renewal.
	switch {
	case ms < 0:
		return heureka.Errorf(heureka.EINVALID, "%s/%s: %s %d is negative: want unix milliseconds", app, id, field, ms)
	case ms > now.Add(r.cfg.MaxAhead).UnixMilli():
		return heureka.Errorf(heureka.EINVALID,
			"%s/%s: %s %d (%s) is %s ahead of this server's clock (%s), more than the %s allowed: newer wins, so it would override every real update until then; fix the sender's clock",
			app, id, field, ms, time.UnixMilli(ms).UTC().Format(time.RFC3339), time.UnixMilli(ms).Sub(now).Round(time.Second),
			now.UTC().Format(time.RFC3339), r.cfg.MaxAhead)
	}
	return nil
}

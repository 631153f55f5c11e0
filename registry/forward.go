package registry

import (
	"slices"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
)

// Action names a write forwarded to peers, as Eureka's batch replication
// spells it.
type Action string

const (
	ActionRegister             Action = "Register"
	ActionHeartbeat            Action = "Heartbeat"
	ActionCancel               Action = "Cancel"
	ActionStatusUpdate         Action = "StatusUpdate"
	ActionDeleteStatusOverride Action = "DeleteStatusOverride"
)

// Op is one write a client made here, to be forwarded to the peers. The
// fields are those Eureka's replication carries for the action.
type Op struct {
	Action             Action
	App, ID            string
	Instance           *heureka.Instance // Register only
	Status             heureka.Status
	OverriddenStatus   heureka.Status // the override in force, if any
	LastDirtyTimestamp int64
	// Told is the client's heureka.ToldPeersHeader on a heartbeat or a
	// registration ("" for none, and on every other write): the peers its
	// sender tells itself, to which the forwarder need not send it. The
	// registry passes it on as it came; matching it to peers is the
	// forwarder's.
	Told string
}

// SetForwarder installs f, which is called with every write accepted from a
// client (never with a replicated one, so nothing is forwarded twice). It
// is called with the registry's lock held and must not block: queue and
// return. Set it before serving.
func (r *Registry) SetForwarder(f func(Op)) {
	r.mu.Lock()
	r.forward = f
	r.mu.Unlock()
}

// forwardLocked calls the forwarder; r.mu must be held (read or write).
func (r *Registry) forwardLocked(op Op) {
	if r.forward != nil {
		r.forward(op)
	}
}

// Tombstone records an explicit cancel, kept for TombstoneTTL so that a peer
// that missed it (partitioned at the time) is not handed the instance back.
// Evictions leave none: every peer evicts on its own, and a peer that
// evicted what others still hear from must be corrected, not obeyed.
type Tombstone struct {
	App, ID string
	Time    time.Time
}

type tombKey struct{ app, id string }

// Tombstones returns the cancels of the last TombstoneTTL.
func (r *Registry) Tombstones() []Tombstone {
	now := r.now()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tombstone, 0, len(r.tombs))
	for k, t := range r.tombs {
		if now.Sub(t) < r.cfg.TombstoneTTL {
			out = append(out, Tombstone{App: k.app, ID: k.id, Time: t})
		}
	}
	return out
}

// Adopt makes a peer's copy of an instance the local one, status override
// included, without forwarding it: the start-up sync's and anti-entropy's
// repair. lastRenewal is when the peer last heard from the instance (zero:
// now, a fresh lease); the local lease keeps the later of its own and that.
// Adopt refuses, reporting false, a copy registered before a local
// tombstone for it (it was cancelled after that registration) and a new
// instance whose lease has already run out (the peer has not evicted it
// yet, but it is dead).
func (r *Registry) Adopt(in *heureka.Instance, lastRenewal time.Time) (bool, error) {
	if err := in.Validate(r.cfg.Limits); err != nil {
		return false, err
	}
	now := r.now()
	if err := r.checkTimestamp(in.App, in.ID, "lastDirtyTimestamp", in.LastDirtyTimestamp, now); err != nil {
		return false, err
	}
	// A registration time from the future would outlive every tombstone.
	if err := r.checkTimestamp(in.App, in.ID, "registrationTimestamp", in.Lease.RegistrationTimestamp, now); err != nil {
		return false, err
	}
	if lastRenewal.IsZero() || lastRenewal.After(now) {
		lastRenewal = now
	}
	in = in.Clone()
	r.mu.Lock()
	defer r.mu.Unlock()
	a, l := r.lookupEntry(in.App, in.ID)
	if l == nil {
		if t, ok := r.tombs[tombKey{in.App, in.ID}]; ok && in.Lease.RegistrationTimestamp <= t.UnixMilli() {
			return false, nil
		}
		if now.Sub(lastRenewal) > time.Duration(in.Lease.DurationSecs)*time.Second {
			return false, nil
		}
	}
	if in.OverriddenStatus == heureka.StatusUnknown || in.OverriddenStatus == "" {
		delete(r.overrides, in.ID)
		in.OverriddenStatus = heureka.StatusUnknown
	} else {
		r.overrides[strings.Clone(in.ID)] = in.OverriddenStatus // not a slice of the request
	}
	var prev *stored
	duration := time.Duration(in.Lease.DurationSecs) * time.Second
	in.LastUpdatedTimestamp = now.UnixMilli()
	if l == nil {
		if a == nil {
			a = &appEntry{leases: map[string]*lease{}, dirty: map[string]struct{}{}}
			r.apps[strings.Clone(in.App)] = a
		}
		in.ActionType = heureka.ActionAdded
		l = &lease{inst: store(in, nil), duration: duration}
		l.renewed.Store(r.virtual(lastRenewal))
		a.leases[l.inst.id()] = l
		r.track(l)
	} else {
		prev = l.inst
		in.ActionType = heureka.ActionModified
		l.duration = duration
		r.setInst(l, store(in, prev))
		if v := r.virtual(lastRenewal); v > l.renewed.Load() {
			l.renewed.Store(v)
		}
		r.reschedule(l)
	}
	delete(r.tombs, tombKey{in.App, in.ID})
	r.record(now, a, l, prev, l.inst, heureka.CauseSync)
	return true, nil
}

// CancelIfRegisteredBefore removes an instance that a peer cancelled at t,
// unless its local registration is newer than t (it came back since). It
// does not forward the cancel.
func (r *Registry) CancelIfRegisteredBefore(app, id string, t time.Time) bool {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	_, l := r.lookupEntry(app, id)
	if l == nil || l.inst.lease.RegistrationTimestamp > t.UnixMilli() {
		return false
	}
	r.remove(now, app, id, heureka.CauseCancel)
	r.tombstone(tombKey{app, id}, t)
	r.cancels.Add(1)
	return true
}

// LiveApp returns copies of an application's instances whose
// lastRenewalTimestamp is the real time of their last renewal, for
// anti-entropy between peers (listings carry the time of the last change).
// Under the lock it reads each instance and its renewal time; the copies
// and the sort come after it, as in a snapshot build, so that writers, and
// the renewals behind them, do not wait for them.
func (r *Registry) LiveApp(name string) (*heureka.Application, bool) {
	type live struct {
		in      *stored
		renewed int64 // unix nanoseconds
	}
	r.mu.RLock()
	a := r.apps[name]
	if a == nil || len(a.leases) == 0 {
		r.mu.RUnlock()
		return nil, false
	}
	lives := make([]live, 0, len(a.leases))
	for _, l := range a.leases {
		lives = append(lives, live{l.inst, r.lastRenewal(l)})
	}
	r.mu.RUnlock()
	app := &heureka.Application{Name: name, Instances: make([]*heureka.Instance, len(lives))}
	copies := make([]heureka.Instance, len(lives))
	for i, lv := range lives {
		lv.in.load(&copies[i])
		copies[i].Lease.LastRenewalTimestamp = lv.renewed / int64(time.Millisecond)
		app.Instances[i] = &copies[i]
	}
	slices.SortFunc(app.Instances, func(x, y *heureka.Instance) int { return strings.Compare(x.ID, y.ID) })
	return app, true
}

// LastRenewal returns when an instance last renewed its lease, for reads
// that report it live (Eureka's single-instance GET is uncached).
func (r *Registry) LastRenewal(app, id string) (time.Time, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	l := r.lookup(app, id)
	if l == nil {
		return time.Time{}, false
	}
	return time.Unix(0, r.lastRenewal(l)), true
}

// Current returns a copy of instance app/id as it is stored now, not as of
// the last snapshot, for a sender that replicates a registration: it sends
// the copy it holds when it sends, which may be newer than the one it
// queued. ok is false when the instance is not registered here.
func (r *Registry) Current(app, id string) (in *heureka.Instance, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	l := r.lookup(app, id)
	if l == nil {
		return nil, false
	}
	return l.inst.instance(), true
}

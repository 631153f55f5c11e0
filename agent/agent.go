package agent

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/tick"
)

// Registry is the part of a registry client the agent uses. The client
// package's *Client implements it. An error whose heureka.ErrorCode is
// ENOTFOUND means the registry does not know the instance.
type Registry interface {
	Register(ctx context.Context, in *heureka.Instance) error
	Renew(ctx context.Context, app, id string) error
	SetStatus(ctx context.Context, app, id string, status heureka.Status) error
	Cancel(ctx context.Context, app, id string) error
}

// OtherPeers is a Registry that can also reach the other peers of its
// cluster directly, once each and without failover: *client.Client
// implements it. An agent whose Registry is an OtherPeers sends every
// heartbeat to those peers as well (RenewOthers), registering in at a
// peer that answers 404, and sends its first heartbeat with RenewTold,
// naming the peers that answered the last round, which hear this one
// directly too: the peer it reaches replicates it only to the others (see
// doc.go, "Every peer hears every heartbeat"). With a single registry URL
// RenewOthers does nothing, and the first heartbeat is replicated to
// every peer.
type OtherPeers interface {
	// RenewOthers returns the peers that answered, as RenewTold takes them.
	RenewOthers(ctx context.Context, app, id string, in *heureka.Instance) (answered []string, err error)
	RenewTold(ctx context.Context, app, id string, told []string) error
}

// Phase is where the agent stands with the registry.
type Phase string

const (
	PhaseIdle        Phase = "idle"        // Run has not started
	PhaseRegistering Phase = "registering" // not registered, or the registry forgot us
	PhaseRegistered  Phase = "registered"  // the registry holds our instance
	PhaseDraining    Phase = "draining"    // shutting down: OUT_OF_SERVICE, then deregister
	PhaseStopped     Phase = "stopped"     // Run has returned
)

// Status is a snapshot of an agent, for logs, health endpoints and tests.
type Status struct {
	Phase Phase
	// Health is the agent's verdict on the daemon: STARTING until the
	// first probe answers, then UP or DOWN.
	Health heureka.Status
	// Reported is the status the registry last accepted from the agent,
	// "" before the first registration.
	Reported heureka.Status
	// Figures is the daemon's latest figures, as they are (or will be)
	// registered, and State its role state ("" when its role has none).
	Figures Figures
	State   string
	// Failures counts consecutive failed probes.
	Failures int
	// Pending says a change is waiting to reach the registry.
	Pending bool
	// LastError is the last failed registry call, "" after a success.
	LastError string
	// Cause is why the daemon is DOWN (a Cause constant), "" otherwise.
	Cause string
	// Hung says the daemon accepts connections but has not answered since
	// HungSince; its status is held for Config.HangAfter.
	Hung      bool
	HungSince time.Time
	// Pauses counts the pauses seen since Run started.
	Pauses uint64
	// RecentDowns counts the DOWN reports within Config.FlapWindow, and
	// Hold is how long the daemon must now answer to be UP again.
	RecentDowns int
	Hold        time.Duration
	// PID is the daemon's process being watched, 0 when none.
	PID int
}

// Agent registers one daemon, of any Role, and keeps its registration
// true. Build it with New and call Run once. See the package documentation for the state
// machine.
type Agent struct {
	cfg     Config
	reg     Registry
	role    Role
	log     *slog.Logger
	app, id string

	kick       chan struct{} // to the sync loop: something changed (capacity 1)
	collectNow chan struct{} // to the collector: read now (capacity 1)
	started    atomic.Bool
	// The heartbeats to the other peers run beside the sync loop, one
	// round at a time, so an unreachable peer never delays the first's.
	nextBusy atomic.Bool
	nextWG   sync.WaitGroup
	// told is the other peers that answered the last round (as
	// OtherPeers.RenewOthers returned them; nil for none), which the next
	// first heartbeat names, so that it is not replicated to them.
	told atomic.Pointer[[]string]

	mu sync.Mutex
	s  state
}

// state is guarded by Agent.mu.
type state struct {
	phase    Phase
	health   heureka.Status
	failures int
	figs     Figures
	probe    Health // what the last answered probe said
	answered bool   // a probe has been answered
	gen      uint64 // bumped for every change the registry must hear
	lastErr  string

	cause       string      // while DOWN: why (a Cause constant)
	hungSince   time.Time   // start of the first unanswered probe of a pause; zero when none
	markedHung  bool        // probe_state=hung is (to be) registered
	steadySince time.Time   // while DOWN: the first of an unbroken run of answers
	downs       []time.Time // DOWN reports within FlapWindow, oldest first
	pauses      uint64      // pauses seen (probes accepted but unanswered)
	pid         int         // the daemon's process being watched, 0 when none

	// What the registry holds.
	pushedGen    uint64
	pushed       Figures
	pushedStatus heureka.Status
	pushedAt     time.Time
	pushedIn     *heureka.Instance // the registration last accepted
	lastDirty    int64             // the lastDirtyTimestamp of the last push (ms)
}

// New returns an agent for cfg that registers through reg and watches the
// daemon through role. It has no side effects.
func New(cfg Config, reg Registry, role Role) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if reg == nil || role == nil {
		return nil, heureka.Errorf(heureka.EINVALID, "agent: the registry and the role must not be nil")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	cfg.StatusPageURL = statusPage(cfg.StatusPageURL)
	a := &Agent{
		cfg: cfg, reg: reg, role: role,
		app: cfg.App(), id: cfg.InstanceID(),
		kick:       make(chan struct{}, 1),
		collectNow: make(chan struct{}, 1),
	}
	a.log = logger.With("subsystem", "agent", "app", a.app, "id", a.id)
	a.s = state{phase: PhaseIdle, health: heureka.StatusStarting, figs: role.Static()}
	return a, nil
}

// Status returns a snapshot of the agent.
func (a *Agent) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Status{
		Phase: a.s.phase, Health: a.s.health, Reported: a.s.pushedStatus, Figures: a.s.figs, State: a.s.probe.State,
		Failures: a.s.failures, Pending: a.s.gen != a.s.pushedGen || a.s.phase == PhaseRegistering,
		LastError: a.s.lastErr, Cause: a.s.cause, Hung: !a.s.hungSince.IsZero(), HungSince: a.s.hungSince,
		Pauses: a.s.pauses, RecentDowns: len(recent(a.s.downs, time.Now(), a.cfg.FlapWindow)),
		Hold: a.holdFor(time.Now()), PID: a.s.pid,
	}
}

// Instance returns the instance as the agent would register it now.
func (a *Agent) Instance() *heureka.Instance {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.instance(a.s.health, a.s.lastDirty)
}

// Run registers the daemon and keeps the registration true until ctx is
// done; then it drains (OUT_OF_SERVICE for Config.DrainPeriod),
// deregisters and returns nil. Registry failures are retried, never
// returned. Run may be called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.started.CompareAndSwap(false, true) {
		return errors.New("agent: Run may be called only once")
	}
	a.setPhase(PhaseRegistering)
	a.log.Info("agent starting", "host", a.cfg.Host, "ip", a.cfg.IPAddr, "rack", heureka.NormalizeRack(a.cfg.Rack))
	a.firstLook(ctx)

	var wg sync.WaitGroup
	wg.Go(func() { a.probeLoop(ctx) })
	wg.Go(func() { a.collectLoop(ctx) })
	if a.cfg.PID != 0 || a.cfg.PIDFile != "" || a.cfg.SystemdUnit != "" {
		wg.Go(func() { a.processLoop(ctx) })
	}
	err := a.syncLoop(ctx)
	wg.Wait()
	a.setPhase(PhaseStopped)
	a.log.Info("agent stopped")
	return err
}

func (a *Agent) setPhase(p Phase) {
	a.mu.Lock()
	a.s.phase = p
	a.mu.Unlock()
}

func (a *Agent) poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// firstLook probes and reads the daemon once, so the first registration
// carries a verdict and figures.
func (a *Agent) firstLook(ctx context.Context) {
	began := time.Now()
	pctx, cancel := context.WithTimeout(ctx, a.cfg.ProbeTimeout)
	h, err := a.role.Probe(pctx)
	cancel()
	a.observe(h, err, began)
	if err != nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, a.cfg.CollectTimeout)
	figs, err := a.role.Collect(cctx)
	cancel()
	if err != nil {
		a.log.Warn("cannot read the daemon's figures yet", "err", err)
		return
	}
	a.absorb(figs)
}

// probeLoop probes the daemon until ctx is done.
func (a *Agent) probeLoop(ctx context.Context) {
	t := time.NewTimer(a.nextProbe())
	defer t.Stop()
	for tick.Wait(ctx, t, nil) {
		began := time.Now()
		pctx, cancel := context.WithTimeout(ctx, a.cfg.ProbeTimeout)
		h, err := a.role.Probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		t.Reset(a.observe(h, err, began))
	}
}

func (a *Agent) nextProbe() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.s.failures > 0 && a.s.failures < a.cfg.FailureThreshold {
		return a.cfg.RecheckInterval
	}
	return a.cfg.ProbeInterval
}

// The causes of DOWN the agent registers as heureka.MetaDownCause (a Role
// that finds its daemon unhealthy gives its own, Health.Unhealthy).
const (
	CauseProcessExited = "process exited" // the kernel said the daemon's process ended
	CausePortRefused   = "port refused"   // its port or web server refuses connections
	CauseNotAnswering  = "not answering"  // it accepts connections but has not answered for HangAfter
	CauseProbeFailed   = "probe failed"   // it answers, but not as a healthy daemon does
)

// observe applies one probe's outcome (the probe started at began) to the
// daemon state machine and returns when to probe next.
func (a *Agent) observe(h Health, err error, began time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &a.s
	now := time.Now()
	if err == nil {
		a.takeHealth(h)
	}
	switch {
	case err == nil && h.Unhealthy != "":
		return a.failure(now, h.Unhealthy)
	case errors.Is(err, ErrNoAnswer):
		return a.hung(began, now, err)
	case errors.Is(err, ErrRefused):
		return a.failure(now, CausePortRefused, "err", err)
	case err != nil:
		return a.failure(now, CauseProbeFailed, "err", err)
	}
	s.failures = 0
	a.unhang(now, "daemon answers again; status unchanged")
	next := a.cfg.ProbeInterval
	switch s.health {
	case heureka.StatusDown:
		hold := a.holdFor(now)
		if s.steadySince.IsZero() {
			s.steadySince = now
			if hold > a.cfg.UpAfter {
				a.log.Warn("daemon is flapping; holding it DOWN until it answers steadily", "downs", len(s.downs),
					"within", a.cfg.FlapWindow, "hold", hold)
			} else {
				a.log.Info("daemon answers again; reporting UP once it answers steadily", "for", hold)
			}
		}
		if left := hold - now.Sub(s.steadySince); left > 0 {
			return min(next, left)
		}
		a.log.Info("daemon answers steadily; reporting UP", "after", now.Sub(s.steadySince).Round(time.Millisecond))
		a.poke(a.collectNow)
		a.up()
	case heureka.StatusStarting:
		a.up()
	}
	return next
}

// failure counts one failed probe, and reports DOWN with cause once
// FailureThreshold of them have come in a row; logArgs say what failed.
// a.mu must be held.
func (a *Agent) failure(now time.Time, cause string, logArgs ...any) time.Duration {
	s := &a.s
	s.steadySince = time.Time{}
	a.unhang(now, "")
	s.failures++
	if s.failures >= a.cfg.FailureThreshold {
		a.down(now, cause, append([]any{"failures", s.failures}, logArgs...)...)
		return a.cfg.ProbeInterval
	}
	a.log.Debug("probe failed; checking again", append([]any{"failures", s.failures, "cause", cause}, logArgs...)...)
	return a.cfg.RecheckInterval
}

// takeHealth records what an answered probe said, and asks for a push at
// once when it differs from the last answer: a role state that changes
// (a failover, an election) must reach the registry the moment a probe
// sees it. a.mu must be held.
func (a *Agent) takeHealth(h Health) {
	s := &a.s
	h.Unhealthy = "" // a verdict, not a figure: it reaches the registry as DOWN
	answered := s.answered
	s.answered = true
	if h == s.probe {
		return
	}
	if answered && h.State != s.probe.State {
		a.log.Info("role state changed", "from", s.probe.State, "to", h.State)
	}
	s.probe = h
	s.gen++
	a.poke(a.kick)
}

// hung handles a probe whose connections were accepted but not answered:
// the status holds for HangAfter from the first such probe, with at most
// one mark (probe_state=hung) after HungMarkAfter. a.mu must be held.
func (a *Agent) hung(began, now time.Time, err error) time.Duration {
	s := &a.s
	s.failures, s.steadySince = 0, time.Time{}
	if s.health == heureka.StatusDown {
		return a.cfg.ProbeInterval // already DOWN: nothing to hold
	}
	if s.hungSince.IsZero() {
		s.hungSince = began
		s.pauses++
		a.log.Warn("daemon accepts connections but does not answer (paused, e.g. a full GC); holding its status",
			"for_up_to", a.cfg.HangAfter, "err", err)
	}
	paused := now.Sub(s.hungSince)
	switch {
	case paused >= a.cfg.HangAfter:
		a.down(now, CauseNotAnswering, "paused_for", paused.Round(time.Millisecond), "err", err)
	case paused >= a.cfg.HungMarkAfter && !s.markedHung:
		s.markedHung = true
		s.gen++
		a.poke(a.kick)
		a.log.Warn("daemon still paused; marking it probe_state=hung so placement takes it last",
			"paused_for", paused.Round(time.Millisecond))
	default:
		a.log.Debug("daemon still paused", "paused_for", paused.Round(time.Millisecond))
	}
	return a.cfg.ProbeInterval
}

// unhang ends a pause, if one was under way, and removes the hung mark;
// msg, if set, is logged. a.mu must be held.
func (a *Agent) unhang(now time.Time, msg string) {
	s := &a.s
	if s.hungSince.IsZero() {
		return
	}
	if msg != "" {
		a.log.Info(msg, "paused_for", now.Sub(s.hungSince).Round(time.Millisecond))
	}
	s.hungSince = time.Time{}
	if s.markedHung {
		s.markedHung = false
		s.gen++
		a.poke(a.kick)
	}
}

// down reports the daemon DOWN with cause, at once. A daemon already DOWN
// only has its cause updated. a.mu must be held.
func (a *Agent) down(now time.Time, cause string, logArgs ...any) {
	s := &a.s
	s.steadySince, s.hungSince, s.markedHung = time.Time{}, time.Time{}, false
	if s.health == heureka.StatusDown {
		// Only the kernel's word replaces a cause: probes refused after
		// an exit must not flip the cause back and forth.
		if cause == CauseProcessExited && s.cause != cause {
			s.cause = cause
			s.gen++
			a.poke(a.kick)
		}
		return
	}
	s.health, s.cause = heureka.StatusDown, cause
	s.downs = append(recent(s.downs, now, a.cfg.FlapWindow), now)
	s.gen++
	a.poke(a.kick)
	a.log.Warn("reporting the daemon DOWN", append([]any{"cause", cause}, logArgs...)...)
}

// up reports the daemon UP. a.mu must be held.
func (a *Agent) up() {
	s := &a.s
	s.health, s.cause, s.steadySince = heureka.StatusUp, "", time.Time{}
	s.gen++
	a.poke(a.kick)
}

// holdFor is how long a DOWN daemon must answer before it is UP:
// UpAfter, doubled for every other DOWN within FlapWindow, at most
// FlapHoldMax. a.mu must be held.
func (a *Agent) holdFor(now time.Time) time.Duration {
	a.s.downs = recent(a.s.downs, now, a.cfg.FlapWindow)
	hold := a.cfg.UpAfter
	for i := 1; i < len(a.s.downs) && hold < a.cfg.FlapHoldMax; i++ {
		hold *= 2
	}
	return min(hold, a.cfg.FlapHoldMax)
}

// recent drops the times older than window before now.
func recent(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) > window {
		i++
	}
	return ts[i:]
}

// exited is the process watcher's news: the daemon's process pid ended.
func (a *Agent) exited(pid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.s.failures = 0
	a.down(time.Now(), CauseProcessExited, "pid", pid)
}

// collectLoop reads the daemon's figures every MetadataInterval, and at
// once when the daemon comes back.
func (a *Agent) collectLoop(ctx context.Context) {
	t := time.NewTimer(a.cfg.MetadataInterval)
	defer t.Stop()
	for tick.Wait(ctx, t, a.collectNow) {
		a.mu.Lock()
		down := a.s.health == heureka.StatusDown
		a.mu.Unlock()
		if !down {
			cctx, cancel := context.WithTimeout(ctx, a.cfg.CollectTimeout)
			figs, err := a.role.Collect(cctx)
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				a.log.Debug("cannot read the daemon's figures", "err", err)
			} else {
				a.absorb(figs)
			}
		}
		t.Reset(a.cfg.MetadataInterval)
	}
}

// absorb takes a fresh read of the figures and asks for a push when the
// role calls the change from what the registry holds material, or when
// they differ at all and the registry's copy is older than MetadataMaxAge.
func (a *Agent) absorb(figs Figures) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &a.s
	s.figs = figs
	if s.pushedAt.IsZero() {
		return // the first registration will carry it
	}
	switch {
	case figs == s.pushed:
		return
	case a.role.Material(s.pushed, figs):
		a.log.Info("daemon figures changed materially; updating the registry", changed(s.pushed, figs)...)
	case time.Since(s.pushedAt) >= a.cfg.MetadataMaxAge:
		a.log.Debug("refreshing the registry's old figures")
	default:
		return
	}
	s.gen++
	a.poke(a.kick)
}

// changed lists, for a log line, what differs between old and new: each
// changed key with its new value ("" when gone), and the port.
func changed(old, new Figures) []any {
	var args []any
	for _, k := range old.Metadata.ChangedKeys(new.Metadata) {
		args = append(args, k, new.Metadata.Get(k))
	}
	if old.Port != new.Port {
		args = append(args, "port", new.Port)
	}
	return args
}

// syncLoop is the registration state machine (see doc.go). It returns
// after draining, once ctx is done.
func (a *Agent) syncLoop(ctx context.Context) error {
	var (
		renewAt   time.Time
		retryAt   time.Time // while set, wait: a registry call failed
		fails     int       // consecutive failed registry calls
		attempted bool      // a registration may have reached the registry
	)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if ctx.Err() != nil {
			// A registration still on its way to another peer must
			// land before the deregistration, or it could outlive it.
			a.nextWG.Wait()
			return a.drain(attempted)
		}
		now := time.Now()
		var wait time.Duration
		switch {
		case now.Before(retryAt):
			wait = retryAt.Sub(now)
		case a.needsPush():
			attempted = true
			if err := a.push(ctx); err != nil {
				if ctx.Err() == nil {
					fails++
					retryAt = time.Now().Add(a.backoff(fails))
					a.failed("register", err, fails, retryAt)
				}
				continue
			}
			fails, retryAt = 0, time.Time{}
			renewAt = time.Now().Add(a.cfg.RenewInterval)
			continue
		case !now.Before(renewAt):
			err := a.renew(ctx)
			switch {
			case ctx.Err() != nil:
			case err == nil:
				fails, retryAt = 0, time.Time{}
				renewAt = time.Now().Add(a.cfg.RenewInterval)
			case heureka.ErrorCode(err) == heureka.ENOTFOUND:
				// The lease expired or the registry restarted: register
				// again at once, with everything we know.
				a.log.Warn("the registry does not know this instance; registering again", "err", err)
				a.mu.Lock()
				a.s.phase = PhaseRegistering
				a.mu.Unlock()
			default:
				fails++
				retryAt = time.Now().Add(min(a.backoff(fails), a.cfg.RenewInterval))
				a.failed("renew", err, fails, retryAt)
			}
			continue
		default:
			wait = renewAt.Sub(now)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
		case <-a.kick:
		case <-timer.C:
		}
	}
}

func (a *Agent) needsPush() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.phase == PhaseRegistering || a.s.gen != a.s.pushedGen
}

func (a *Agent) failed(op string, err error, fails int, retryAt time.Time) {
	a.mu.Lock()
	a.s.lastErr = op + ": " + err.Error()
	a.mu.Unlock()
	lvl := slog.LevelWarn
	if fails > 1 && fails%10 != 0 {
		lvl = slog.LevelDebug // one warning per outage, then every tenth
	}
	a.log.Log(context.Background(), lvl, "registry call failed; retrying", "op", op, "failures", fails,
		"retry_in", time.Until(retryAt).Round(time.Millisecond), "err", err)
}

// push registers the instance as it stands: Eureka clients report their
// own status and metadata by registering again (see doc.go).
func (a *Agent) push(ctx context.Context) error {
	a.mu.Lock()
	gen, status, figs, state := a.s.gen, a.s.health, a.s.figs, a.s.probe.State
	prevStatus, first := a.s.pushedStatus, a.s.phase == PhaseRegistering
	dirty := max(time.Now().UnixMilli(), a.s.lastDirty+1)
	a.s.lastDirty = dirty
	in := a.instance(status, dirty)
	a.mu.Unlock()

	cctx, cancel := context.WithTimeout(ctx, a.cfg.CallTimeout)
	err := a.reg.Register(cctx, in)
	cancel()
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.s.phase = PhaseRegistered
	a.s.pushedGen, a.s.pushed, a.s.pushedStatus, a.s.pushedAt = gen, figs, status, time.Now()
	a.s.pushedIn = in
	a.s.lastErr = ""
	a.mu.Unlock()
	switch {
	case first:
		a.log.Info("registered", "status", string(status), "role_state", state)
	case status != prevStatus:
		a.log.Info("status reported", "status", string(status), "was", string(prevStatus), "cause", in.Metadata.Get(heureka.MetaDownCause))
	default:
		a.log.Debug("registration updated", "role_state", state)
	}
	return nil
}

func (a *Agent) renew(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, a.cfg.CallTimeout)
	defer cancel()
	renew := a.reg.Renew
	if op, ok := a.reg.(OtherPeers); ok && !a.nextBusy.Load() {
		// This beat's round can go out: the peers that answered the last
		// one will hear it directly and need no replicated copy.
		var told []string
		if p := a.told.Load(); p != nil {
			told = *p
		}
		renew = func(ctx context.Context, app, id string) error { return op.RenewTold(ctx, app, id, told) }
	}
	err := renew(cctx, a.app, a.id)
	if err == nil {
		a.mu.Lock()
		a.s.lastErr = ""
		a.mu.Unlock()
		if _, ok := a.reg.(OtherPeers); ok {
			if a.nextBusy.CompareAndSwap(false, true) {
				a.nextWG.Go(func() {
					defer a.nextBusy.Store(false)
					a.renewOthers(ctx)
				})
			} else {
				// The last round is still out: peers that slow may miss
				// the next round too, so name none until one has ended.
				a.told.Store(nil)
			}
		}
	}
	return err
}

// renewOthers sends the heartbeat that just succeeded to the other peers
// too, when the registry client can (OtherPeers), with the copy the
// registry last accepted for a peer that does not know the instance. Its
// failures are logged and change nothing: the first peer has the lease,
// and replication carries it everywhere when the peers can talk. It runs
// in its own goroutine (at most one at a time; a beat is skipped while the
// last is still out), waited for before the drain.
func (a *Agent) renewOthers(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, a.cfg.CallTimeout)
	defer cancel()
	a.mu.Lock()
	in := a.s.pushedIn
	a.mu.Unlock()
	answered, err := a.reg.(OtherPeers).RenewOthers(cctx, a.app, a.id, in)
	a.told.Store(&answered)
	if err != nil && ctx.Err() == nil {
		a.log.Debug("heartbeat to another registry peer failed", "err", err)
	}
}

// backoff is the pause after the n-th consecutive failure: BackoffMin
// doubling up to BackoffMax, jittered down to half of that.
func (a *Agent) backoff(n int) time.Duration {
	d := a.cfg.BackoffMin
	for i := 1; i < n && d < a.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, a.cfg.BackoffMax)
	return d/2 + rand.N(d/2+1)
}

// drain takes the instance out of service, waits DrainPeriod, and
// deregisters. Its calls do not use the run context, which is done.
func (a *Agent) drain(attempted bool) error {
	a.setPhase(PhaseDraining)
	if !attempted {
		a.log.Info("stopping before any registration; nothing to drain")
		return nil
	}
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, a.cfg.CallTimeout)
	err := a.reg.SetStatus(cctx, a.app, a.id, heureka.StatusOutOfService)
	cancel()
	switch {
	case err == nil:
		a.mu.Lock()
		a.s.pushedStatus = heureka.StatusOutOfService
		a.mu.Unlock()
		a.log.Info("draining: OUT_OF_SERVICE", "for", a.cfg.DrainPeriod)
		if a.cfg.DrainPeriod > 0 {
			t := time.NewTimer(a.cfg.DrainPeriod)
			<-t.C
		}
	case heureka.ErrorCode(err) == heureka.ENOTFOUND:
		a.log.Info("the registry does not know this instance; nothing to drain")
		return nil
	default:
		a.log.Warn("cannot set OUT_OF_SERVICE; deregistering without a drain", "err", err)
	}
	cctx, cancel = context.WithTimeout(ctx, a.cfg.CallTimeout)
	err = a.reg.Cancel(cctx, a.app, a.id)
	cancel()
	switch {
	case err == nil:
		a.log.Info("deregistered")
	case heureka.ErrorCode(err) == heureka.ENOTFOUND:
		a.log.Info("already deregistered")
	default:
		a.log.Warn("cannot deregister; the lease will expire", "in", a.cfg.LeaseDuration, "err", err)
	}
	return nil
}

// metadata is what the instance registers: the figures' keys, the last
// answered probe's over them, then the keys the agent owns: rack, role
// state, and its verdict (down_cause while DOWN, probe_state while marked
// hung). a.mu must be held.
func (a *Agent) metadata(status heureka.Status) heureka.Metadata {
	s := &a.s
	md := s.figs.Metadata
	if !s.probe.Metadata.IsZero() {
		kv := make([]string, 0, 2*s.probe.Metadata.Len())
		for k, v := range s.probe.Metadata.All() {
			kv = append(kv, k, v)
		}
		md = md.With(kv...)
	}
	md = md.Without(heureka.MetaRoleState, heureka.MetaDownCause, heureka.MetaProbeState)
	own := []string{heureka.MetaRack, heureka.NormalizeRack(a.cfg.Rack)}
	if s.probe.State != "" {
		own = append(own, heureka.MetaRoleState, s.probe.State)
	}
	if status == heureka.StatusDown && s.cause != "" {
		own = append(own, heureka.MetaDownCause, s.cause)
	}
	if status != heureka.StatusDown && s.markedHung {
		own = append(own, heureka.MetaProbeState, heureka.ProbeStateHung)
	}
	return md.With(own...)
}

// instance builds the registration record. a.mu must be held.
func (a *Agent) instance(status heureka.Status, dirty int64) *heureka.Instance {
	port := a.s.figs.Port
	secs := func(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }
	return &heureka.Instance{
		ID:                 a.id,
		App:                strings.ToUpper(a.app),
		HostName:           a.cfg.Host,
		IPAddr:             a.cfg.IPAddr,
		Status:             status,
		Port:               heureka.Port{Number: port, Enabled: port > 0},
		VIPAddress:         a.app,
		DataCenter:         heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Lease:              heureka.LeaseInfo{RenewalIntervalSecs: secs(a.cfg.RenewInterval), DurationSecs: secs(a.cfg.LeaseDuration)},
		Metadata:           a.metadata(status),
		HomePageURL:        a.cfg.StatusPageURL,
		StatusPageURL:      a.cfg.StatusPageURL,
		LastDirtyTimestamp: dirty,
	}
}

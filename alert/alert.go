package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/atomicfile"
	"github.com/heureka-project/heureka/internal/rungroup"
	"github.com/heureka-project/heureka/internal/tick"
	"github.com/heureka-project/heureka/roles"
	"github.com/heureka-project/heureka/urlcheck"
)

// Alert names, the alertname label.
const (
	InstanceDown     = "HeurekaInstanceDown"
	InstanceExpired  = "HeurekaInstanceExpired"
	SelfPreservation = "HeurekaSelfPreservation"
)

// Config is what a Forwarder is told. Start from DefaultConfig; zero is a
// value (Validate says which zeros cannot work).
type Config struct {
	// Registry is how to reach the registry cluster: its URLs (each also
	// polled for its own self-preservation state), TLS and credentials.
	Registry client.Config

	Alertmanager   string        // base URL, e.g. http://127.0.0.1:9093
	Webhook        string        // URL to POST plain JSON to
	Apps           []string      // only these applications; nil means all
	StatusInterval time.Duration // how often /v1/status is polled
	Resend         time.Duration // how often firing alerts are re-sent to Alertmanager
	StateFile      string        // where the position and firing alerts are kept
	Timeout        time.Duration // one HTTP call
	MaxQueue       int           // undelivered alerts kept per destination
	// For holds an alert back until its condition has held this long, by
	// alert name, as a Prometheus rule's "for" does; a condition that ends
	// sooner sends nothing. An alert not named fires at once.
	For map[string]time.Duration
	// Clock is the time source; tests inject one.
	Clock func() time.Time
}

// DefaultConfig returns the defaults, each with its reason.
func DefaultConfig() Config {
	c := Config{
		Registry: client.DefaultConfig(),
		// Self-preservation is a state, not an event; 5 s is well within
		// any paging delay and costs a tiny GET.
		StatusInterval: 5 * time.Second,
		// Alertmanager's resolve_timeout is 5 m: an alert not re-sent within
		// it resolves on its own. Prometheus re-sends every minute too.
		Resend:  time.Minute,
		Timeout: 10 * time.Second,
		// A whole large cluster going down twice over.
		MaxQueue: 10_000,
		// A cluster without its lead for a moment is a failover under way
		// (the old active steps down before the new one takes over): as
		// the Prometheus rules, only a minute of it is worth a page.
		For:   map[string]time.Duration{},
		Clock: time.Now,
	}
	for _, r := range roles.All() {
		if r.Alert != "" {
			c.For[r.Alert] = time.Minute
		}
	}
	return c
}

// Validate reports the first setting that cannot work, as a
// *heureka.ConfigError naming its field (the registry's as Registry.X).
func (c Config) Validate() error {
	if err := heureka.ConfigIn("Registry", c.Registry.Validate()); err != nil {
		return err
	}
	if c.Alertmanager == "" && c.Webhook == "" {
		return heureka.InvalidConfig("Alertmanager", nil, "and Webhook are both empty; give either or both")
	}
	for _, u := range []struct{ field, v string }{{"Alertmanager", c.Alertmanager}, {"Webhook", c.Webhook}} {
		if u.v == "" {
			continue
		}
		if _, err := urlcheck.Parse(u.v); err != nil {
			return heureka.InvalidConfig(u.field, u.v, "is not an http(s) URL")
		}
	}
	if err := heureka.Positive(
		heureka.NamedDuration{Field: "StatusInterval", Value: c.StatusInterval},
		heureka.NamedDuration{Field: "Resend", Value: c.Resend},
		heureka.NamedDuration{Field: "Timeout", Value: c.Timeout},
	); err != nil {
		return err
	}
	switch {
	case c.MaxQueue <= 0:
		return heureka.InvalidConfig("MaxQueue", c.MaxQueue, "want at least 1")
	case c.Clock == nil:
		return heureka.InvalidConfig("Clock", nil, "is nil; start from DefaultConfig")
	}
	for _, name := range slices.Sorted(maps.Keys(c.For)) {
		field, d := fmt.Sprintf("For[%q]", name), c.For[name]
		value := fmt.Sprintf("%s=%v", name, d) // the entry as NAME=DURATION
		switch name {
		case InstanceDown, InstanceExpired, SelfPreservation:
		default:
			if !isClusterAlert(name) {
				return heureka.InvalidConfig(field, value, "no such alert; want %s, %s, %s or a role's (%s)", InstanceDown, InstanceExpired, SelfPreservation,
					strings.Join(clusterAlerts(), ", "))
			}
		}
		if d < 0 {
			return heureka.InvalidConfig(field, value, "must not be negative")
		}
	}
	return nil
}

// Alert is an alert as Alertmanager's v2 API takes it (postableAlert).
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// WebhookAlert is an alert as the webhook gets it: a JSON array of these per POST.
type WebhookAlert struct {
	Status string `json:"status"` // firing or resolved
	Alert
}

func (a Alert) key() string {
	return a.Labels["alertname"] + "\x00" + a.Labels["app"] + "\x00" + a.Labels["instance"]
}

// state is what the forwarder remembers, and what --state keeps.
type state struct {
	Node    string            `json:"node"`    // the server process LastSeq belongs to
	LastSeq uint64            `json:"lastSeq"` // the last event handled
	Firing  map[string]*Alert `json:"firing"`  // by key
	// Pending are alerts whose condition holds but not yet for their
	// Config.For, by key, with when the condition began.
	Pending map[string]*pendingAlert `json:"pending,omitempty"`
	// Members are the members of every application whose clusters have
	// an alert (cluster.go), by application and ID, as of LastSeq. A
	// state file without them (from an older forwarder) is not resumed
	// from: the registry is read again.
	Members map[string]map[string]roles.Member `json:"members"`
}

// pendingAlert is an alert waiting out its Config.For.
type pendingAlert struct {
	Alert Alert     `json:"alert"`
	Since time.Time `json:"since"`
}

// Forwarder turns registry events into alert state changes and hands
// them to its destinations.
type Forwarder struct {
	cfg   Config
	reg   *client.Client   // the registry cluster: events and listings
	peers []*client.Client // one per registry URL: its /v1/status
	urls  []string         // the registry URLs, passwords redacted
	log   *slog.Logger
	sinks []*sink
	now   func() time.Time

	mu        sync.Mutex
	state     state
	lastSaved time.Time

	// kicks make the status pollers look at once: the event stream says
	// when self-preservation starts or ends on the server it comes from.
	kicks []chan struct{}
}

// New returns a Forwarder for cfg that logs to logger, after reading the
// state file if there is one. It starts nothing; Close releases its
// connections.
func New(cfg Config, logger *slog.Logger) (*Forwarder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	f := &Forwarder{cfg: cfg, log: logger.With("subsystem", "alert"), now: cfg.Clock,
		state: state{Firing: map[string]*Alert{}, Pending: map[string]*pendingAlert{}, Members: map[string]map[string]roles.Member{}}}
	reg, err := client.New(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("--registry: %w", err)
	}
	f.reg = reg
	for _, u := range cfg.Registry.URLs {
		pc := cfg.Registry
		pc.URLs = []string{u}
		c, err := client.New(pc)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("--registry: %w", err)
		}
		f.peers = append(f.peers, c)
		shown := u
		if p, err := url.Parse(u); err == nil {
			shown = p.Redacted()
		}
		f.urls = append(f.urls, shown)
	}
	client := &http.Client{Timeout: cfg.Timeout}
	if cfg.Alertmanager != "" {
		u := strings.TrimRight(cfg.Alertmanager, "/")
		if !strings.HasSuffix(u, "/api/v2/alerts") {
			u += "/api/v2/alerts"
		}
		f.sinks = append(f.sinks, newAlertSink("alertmanager", u, false, client, cfg.MaxQueue, f.log))
	}
	if cfg.Webhook != "" {
		f.sinks = append(f.sinks, newAlertSink("webhook", cfg.Webhook, true, client, cfg.MaxQueue, f.log))
	}
	if cfg.StateFile != "" {
		b, err := os.ReadFile(cfg.StateFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("--state: %w", err)
		default:
			var st state
			if err := json.Unmarshal(b, &st); err != nil {
				f.Close()
				return nil, fmt.Errorf("--state %s: not a state file heureka wrote (%v); move it away to start afresh", cfg.StateFile, err)
			}
			if st.Firing == nil {
				st.Firing = map[string]*Alert{}
			}
			if st.Pending == nil {
				st.Pending = map[string]*pendingAlert{}
			}
			if st.Members == nil {
				st.Node = "" // nothing to judge the clusters on: read the registry
				st.Members = map[string]map[string]roles.Member{}
			}
			f.state = st
			f.log.Info("resuming from the state file", "file", cfg.StateFile, "last_seq", st.LastSeq, "firing", len(st.Firing))
		}
	}
	return f, nil
}

// Close releases the registry connections.
func (f *Forwarder) Close() {
	if f.reg != nil {
		_ = f.reg.Close()
	}
	for _, c := range f.peers {
		_ = c.Close()
	}
}

// Run forwards until ctx ends, then gives undelivered alerts a few
// seconds. It fails if the registry cannot be followed at all.
func (f *Forwarder) Run(ctx context.Context) error {
	fc := client.DefaultFollowConfig()
	fc.Stream, fc.Apps = client.EventsStream, f.cfg.Apps
	fc.Sync, fc.Handle = f.reconcile, f.handle
	fc.Note = func(format string, args ...any) { f.log.Warn(fmt.Sprintf(format, args...)) }
	f.mu.Lock()
	if f.state.Node != "" {
		fc.From = &client.Position{Version: f.state.LastSeq, Node: f.state.Node}
	}
	f.mu.Unlock()

	f.kicks = make([]chan struct{}, len(f.peers))
	for i := range f.kicks {
		f.kicks[i] = make(chan struct{}, 1)
	}
	// The first actor to return stops the others.
	g := rungroup.New(ctx)
	g.Go("events", func(ctx context.Context) error {
		if err := f.reg.Follow(ctx, fc); err != nil {
			return err
		}
		<-ctx.Done() // keep the others running until the stop
		return nil
	})
	for i, c := range f.peers {
		g.Go("status", func(ctx context.Context) error { f.pollStatus(ctx, c, f.cfg.Registry.URLs[i], f.kicks[i]); return nil })
	}
	sinkCtx, stopSinks := context.WithCancel(context.Background())
	var sinks sync.WaitGroup
	for _, s := range f.sinks {
		sinks.Go(func() { s.run(sinkCtx) })
	}
	g.Go("resend", every(f.cfg.Resend, f.resend))
	if len(f.cfg.For) > 0 {
		g.Go("pending", every(f.pendingInterval(), f.promotePending))
	}
	f.log.Info("forwarding alerts", "registry", strings.Join(f.urls, ","), "alertmanager", f.cfg.Alertmanager, "webhook", f.cfg.Webhook)
	err := g.Wait()

	// Give what is queued a last chance, then stop the senders.
	deadline := time.Now().Add(5 * time.Second)
	for _, s := range f.sinks {
		s.drain(deadline)
	}
	stopSinks()
	sinks.Wait()
	f.mu.Lock()
	f.saveLocked(true)
	f.mu.Unlock()
	return err
}

// handle applies one event of /v1/events.
func (f *Forwarder) handle(ev client.Event) error {
	var e heureka.Event
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		// Reading it again would not help: skip it, and say so.
		f.log.Error("skipping an event that is not JSON", "type", ev.Type, "id", ev.ID, "err", err)
		return nil
	}
	if e.Type == "" {
		e.Type = heureka.EventType(ev.Type)
	}
	t := time.UnixMilli(e.Time)
	f.mu.Lock()
	defer f.mu.Unlock()
	changed := false
	switch e.Type {
	case heureka.EventRegistered:
		changed = f.resolveLocked(InstanceExpired, e.App, e.ID, t) || changed
		changed = f.statusLocked(e, t) || changed
	case heureka.EventStatusChanged:
		changed = f.statusLocked(e, t)
	case heureka.EventCancelled:
		changed = f.resolveLocked(InstanceDown, e.App, e.ID, t)
		changed = f.resolveLocked(InstanceExpired, e.App, e.ID, t) || changed
	case heureka.EventSelfPreservationEntered, heureka.EventSelfPreservationLeft:
		for _, k := range f.kicks {
			select {
			case k <- struct{}{}:
			default:
			}
		}
	case heureka.EventExpired:
		// The expiry says more than an earlier DOWN: one alert at a time.
		changed = f.resolveLocked(InstanceDown, e.App, e.ID, t)
		changed = f.fireLocked(f.instanceAlert(InstanceExpired, e.App, e.ID, t,
			fmt.Sprintf("%s %s stopped renewing its lease and was removed from the registry", roleName(e.App), e.ID),
			fmt.Sprintf("Lease expired (%s). Host %s. Its agent or host is gone; clients no longer see it.", e.Cause, dash(e.HostName)))) || changed
	}
	changed = f.memberLocked(e, t) || changed
	f.state.LastSeq = e.Seq
	f.saveLocked(changed)
	return nil
}

// statusLocked applies an instance's new status to its DOWN alert.
func (f *Forwarder) statusLocked(e heureka.Event, t time.Time) bool {
	switch e.Status {
	case heureka.StatusDown:
		desc := fmt.Sprintf("Status DOWN (was %s, set by %s). Host %s.", dash(string(e.Old)), dash(e.By), dash(e.HostName))
		if e.Type == heureka.EventRegistered {
			desc = fmt.Sprintf("Registered with status DOWN. Host %s.", dash(e.HostName))
		}
		return f.fireLocked(f.instanceAlert(InstanceDown, e.App, e.ID, t,
			fmt.Sprintf("%s %s is DOWN", roleName(e.App), e.ID), desc))
	case heureka.StatusUp, heureka.StatusOutOfService:
		return f.resolveLocked(InstanceDown, e.App, e.ID, t)
	}
	return false // STARTING, UNKNOWN: not back yet
}

// roleName names an instance's role for people: "DataNode", "NameNode" or
// "Instance".
func roleName(app string) string {
	switch role, _, ok := hdfs.ParseAppName(app); {
	case ok && role == hdfs.RoleDataNode:
		return "DataNode"
	case ok && role == hdfs.RoleNameNode:
		return "NameNode"
	}
	return "Instance"
}

func (f *Forwarder) generatorURL() string {
	return urlcheck.Public(urlcheck.Root(f.cfg.Registry.URLs[0])) + "/"
}

func (f *Forwarder) instanceAlert(name, app, id string, t time.Time, summary, desc string) *Alert {
	severity := "warning"
	if role, _, ok := hdfs.ParseAppName(app); ok && role == hdfs.RoleNameNode {
		severity = "critical" // the cluster stops without them
	}
	return &Alert{
		Labels:       map[string]string{"alertname": name, "app": app, "instance": id, "severity": severity},
		Annotations:  map[string]string{"summary": summary, "description": desc, "dashboard": f.generatorURL()},
		StartsAt:     t.UTC(),
		GeneratorURL: f.generatorURL(),
	}
}

// fireLocked starts a (not yet firing) alert and sends it, or, when its
// Config.For is set, holds it as pending until the condition has lasted
// that long (promotePending). It reports whether the state changed.
func (f *Forwarder) fireLocked(a *Alert) bool {
	k := a.key()
	if _, ok := f.state.Firing[k]; ok {
		return false
	}
	if _, ok := f.state.Pending[k]; ok {
		return false
	}
	if f.cfg.For[a.Labels["alertname"]] > 0 {
		f.state.Pending[k] = &pendingAlert{Alert: *a, Since: f.now()}
		f.log.Debug("alert pending", "alert", a.Labels["alertname"], "app", a.Labels["app"], "instance", a.Labels["instance"])
		return true
	}
	f.sendFiringLocked(k, a)
	return true
}

func (f *Forwarder) sendFiringLocked(k string, a *Alert) {
	f.state.Firing[k] = a
	f.log.Info("alert firing", "alert", a.Labels["alertname"], "app", a.Labels["app"], "instance", a.Labels["instance"])
	for _, s := range f.sinks {
		s.enqueue(*a, "firing")
	}
}

// promotePending fires every pending alert whose condition has held for
// its Config.For.
func (f *Forwarder) promotePending() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	changed := false
	for _, k := range slices.Sorted(maps.Keys(f.state.Pending)) {
		p := f.state.Pending[k]
		if now.Sub(p.Since) < f.cfg.For[p.Alert.Labels["alertname"]] {
			continue
		}
		delete(f.state.Pending, k)
		a := p.Alert
		f.sendFiringLocked(k, &a)
		changed = true
	}
	if changed {
		f.saveLocked(true)
	}
}

// pendingInterval is how often pending alerts are looked at: a tenth of
// the shortest For, between 100 ms and 5 s.
func (f *Forwarder) pendingInterval() time.Duration {
	d := 5 * time.Second
	for _, v := range f.cfg.For {
		if v > 0 {
			d = min(d, v/10)
		}
	}
	return max(d, 100*time.Millisecond)
}

// resolveLocked ends a firing alert at t and sends it; a pending one is
// dropped without a word, as its condition did not last.
func (f *Forwarder) resolveLocked(name, app, instance string, t time.Time) bool {
	k := name + "\x00" + app + "\x00" + instance
	if _, ok := f.state.Pending[k]; ok {
		delete(f.state.Pending, k)
		return true
	}
	a, ok := f.state.Firing[k]
	if !ok {
		return false
	}
	delete(f.state.Firing, k)
	r := *a
	r.EndsAt = t.UTC()
	if !r.EndsAt.After(r.StartsAt) { // Alertmanager wants endsAt after startsAt
		r.EndsAt = r.StartsAt.Add(time.Millisecond)
	}
	f.log.Info("alert resolved", "alert", name, "app", app, "instance", instance)
	for _, s := range f.sinks {
		s.enqueue(r, "resolved")
	}
	return true
}

// reconcile re-reads the registry (at start, and when the stream cannot be
// resumed) and brings the instance alerts in line with it: DOWN instances
// fire, instances that are back or gone resolve.
func (f *Forwarder) reconcile(ctx context.Context, reason string) (client.Position, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	apps, pos, err := f.reg.Listing(ctx)
	if errors.Is(err, client.ErrNotHeureka) {
		return pos, fmt.Errorf("%w; alert needs a heureka server", err)
	}
	if err != nil {
		return pos, err
	}
	version, node := pos.Version, pos.Node
	if reason != "" {
		f.log.Warn("re-reading the registry", "reason", reason, "version", version)
	}
	now := f.now()
	wanted := func(app string) bool { return len(f.cfg.Apps) == 0 || slices.Contains(f.cfg.Apps, app) }
	members := membersOf(apps, wanted)
	present := map[string]*heureka.Instance{}
	for _, a := range apps.Apps {
		if !wanted(a.Name) {
			continue
		}
		for _, in := range a.Instances {
			present[a.Name+"\x00"+in.ID] = in
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	held := maps.Clone(f.state.Firing)
	for k, p := range f.state.Pending {
		held[k] = &p.Alert
	}
	for _, k := range slices.Sorted(maps.Keys(held)) {
		a := held[k]
		name, app, id := a.Labels["alertname"], a.Labels["app"], a.Labels["instance"]
		in, ok := present[app+"\x00"+id]
		switch {
		case name == InstanceDown && (!ok || in.Status == heureka.StatusUp || in.Status == heureka.StatusOutOfService):
			f.resolveLocked(name, app, id, now)
		case name == InstanceExpired && ok:
			f.resolveLocked(name, app, id, now)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(present)) {
		in := present[k]
		if in.Status != heureka.StatusDown {
			continue
		}
		t := now
		if in.LastUpdatedTimestamp > 0 {
			t = time.UnixMilli(in.LastUpdatedTimestamp)
		}
		f.fireLocked(f.instanceAlert(InstanceDown, in.App, in.ID, t,
			fmt.Sprintf("%s %s is DOWN", roleName(in.App), in.ID),
			fmt.Sprintf("Status DOWN (found on reading the registry). Host %s.", dash(in.HostName))))
	}
	f.reconcileClustersLocked(members, now)
	f.state.Node, f.state.LastSeq = node, version
	f.saveLocked(true)
	return pos, nil
}

// pollStatus fires and resolves the self-preservation alert of the server
// at base: every StatusInterval, and at once when kicked.
func (f *Forwarder) pollStatus(ctx context.Context, c *client.Client, base string, kick <-chan struct{}) {
	root := urlcheck.Root(base)
	public := urlcheck.Public(root) // no password in alerts or logs
	host := public
	if u, err := url.Parse(root); err == nil {
		host = u.Host
	}
	check := func() {
		ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
		defer cancel()
		st, err := c.Status(ctx)
		if err != nil {
			f.log.Debug("cannot read the registry's status", "url", public, "err", err)
			return
		}
		sp := st.SelfPreservation
		now := f.now()
		f.mu.Lock()
		defer f.mu.Unlock()
		changed := false
		if sp.Active {
			changed = f.fireLocked(&Alert{
				Labels: map[string]string{"alertname": SelfPreservation, "app": "heureka", "instance": host, "severity": "critical"},
				Annotations: map[string]string{
					"summary": fmt.Sprintf("Registry %s is in self-preservation: expired instances are not evicted", host),
					"description": fmt.Sprintf("%s. %d of %d instances have expired leases that are kept (mode %s; %d renewals in the last minute, %.1f expected). Dead nodes may still be handed to clients.",
						strings.TrimSuffix(sp.Reason, "."), sp.Expired, sp.Instances, sp.Mode, sp.RenewsLastMinute, sp.ExpectedRenewsPerMinute),
					"dashboard": public + "/",
				},
				StartsAt:     now.UTC(),
				GeneratorURL: public + "/",
			})
		} else {
			changed = f.resolveLocked(SelfPreservation, "heureka", host, now)
		}
		if changed {
			f.saveLocked(true)
		}
	}
	check()
	tick.Every(ctx, f.cfg.StatusInterval, kick, check)
}

// resend re-sends every firing alert to Alertmanager, which would
// otherwise resolve it after its resolve_timeout.
func (f *Forwarder) resend() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sinks {
		s.mu.Lock()
		behind := len(s.queue) > 0
		s.mu.Unlock()
		if s.webhook || behind { // what is queued goes out first anyway
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(f.state.Firing)) {
			s.enqueue(*f.state.Firing[k], "firing")
		}
	}
}

// saveLocked writes the state file: at once after an alert changed state
// (so a restart never repeats a change), otherwise at most every two
// seconds (replaying events that changed nothing changes nothing).
func (f *Forwarder) saveLocked(now bool) {
	if f.cfg.StateFile == "" {
		return
	}
	if !now && f.now().Sub(f.lastSaved) < 2*time.Second {
		return
	}
	b, err := json.MarshalIndent(f.state, "", "  ")
	if err != nil {
		f.log.Error("cannot encode the state", "err", err)
		return
	}
	err = atomicfile.Write(f.cfg.StateFile, b, 0o600)
	if err != nil {
		f.log.Error("cannot write the state file", "file", f.cfg.StateFile, "err", err)
		return
	}
	f.lastSaved = f.now()
}

// dash renders an empty field.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// every is an actor that calls fn every d until its context ends.
func every(d time.Duration, fn func()) func(context.Context) error {
	return func(ctx context.Context) error {
		tick.Every(ctx, d, nil, fn)
		return nil
	}
}

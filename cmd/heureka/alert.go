package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"golang.org/x/sync/errgroup"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
)

func init() {
	addCommand(&command{name: "alert", summary: "forward node failures and self-preservation to Alertmanager or a webhook", run: withExitCodes(runAlert)})
}

// Alert names, the alertname label.
const (
	alertInstanceDown     = "HeurekaInstanceDown"
	alertInstanceExpired  = "HeurekaInstanceExpired"
	alertSelfPreservation = "HeurekaSelfPreservation"
)

const alertHelp = `
Follows the registry's event stream (GET /v1/events) and turns it into alerts
for Prometheus Alertmanager (POST /api/v2/alerts) and/or a webhook:

  HeurekaInstanceDown      fires when an instance's status becomes DOWN;
                           resolves when it is UP or OUT_OF_SERVICE again,
                           re-registers so, or is deregistered.
  HeurekaInstanceExpired   fires when an instance's lease expires (it stopped
                           renewing); resolves when it registers again or is
                           deregistered.
  HeurekaSelfPreservation  fires while a registry peer protects expired
                           leases (read from GET /v1/status every
                           --status-interval, for every --registry URL).

Labels: alertname, app, instance, severity (critical for NameNodes and
self-preservation, warning otherwise); annotations: summary, description,
dashboard. Alerts carry startsAt, and endsAt once resolved.

Each state change is sent once (and retried until delivered). Firing alerts
are re-sent to Alertmanager every --resend so that they do not time out; the
webhook gets each change once, as the same JSON array with a "status" field
("firing" or "resolved") in each alert. After a disconnect the stream resumes
from the last event handled (Last-Event-ID), so nothing is missed or repeated;
when the server cannot resume (its change log moved on, or it restarted) the
registry is read again and the alerts are reconciled with it. --state keeps
the position and the firing alerts in a file, so a restarted forwarder
continues where it stopped.
`

// alertConfig is what `heureka alert` is told on its command line.
type alertConfig struct {
	Alertmanager   string        // base URL, e.g. http://127.0.0.1:9093
	Webhook        string        // URL to POST plain JSON to
	Apps           []string      // only these applications; nil means all
	StatusInterval time.Duration // how often /v1/status is polled
	Resend         time.Duration // how often firing alerts are re-sent to Alertmanager
	StateFile      string        // where the position and firing alerts are kept
	Timeout        time.Duration // one HTTP call
	MaxQueue       int           // undelivered alerts kept per destination
}

func defaultAlertConfig() alertConfig {
	return alertConfig{
		// Self-preservation is a state, not an event; 5 s is well within
		// any paging delay and costs a tiny GET.
		StatusInterval: 5 * time.Second,
		// Alertmanager's resolve_timeout is 5 m: an alert not re-sent within
		// it resolves on its own. Prometheus re-sends every minute too.
		Resend:  time.Minute,
		Timeout: 10 * time.Second,
		// A whole large cluster going down twice over.
		MaxQueue: 10_000,
	}
}

func (c alertConfig) validate() error {
	if c.Alertmanager == "" && c.Webhook == "" {
		return errors.New("give --alertmanager URL, --webhook URL, or both")
	}
	for _, u := range []struct{ flag, v string }{{"alertmanager", c.Alertmanager}, {"webhook", c.Webhook}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("--%s %q is not an http(s) URL", u.flag, u.v)
		}
	}
	switch {
	case c.StatusInterval <= 0:
		return fmt.Errorf("--status-interval %v must be positive", c.StatusInterval)
	case c.Resend <= 0:
		return fmt.Errorf("--resend %v must be positive", c.Resend)
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout %v must be positive", c.Timeout)
	case c.MaxQueue <= 0:
		return fmt.Errorf("max queue %d must be positive", c.MaxQueue)
	}
	return nil
}

func runAlert(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg := defaultAlertConfig()
	var o cliOptions
	var apps appsFlag
	fs := newFlagSet("alert", "alert --alertmanager URL [--webhook URL] [flags]", alertHelp, stderr)
	o.addFlags(fs, false)
	fs.StringVar(&cfg.Alertmanager, "alertmanager", "", "Alertmanager base `URL`, e.g. http://127.0.0.1:9093")
	fs.StringVar(&cfg.Webhook, "webhook", "", "also POST every alert change, as JSON, to this `URL`")
	fs.Var(&apps, "app", "only alert on this `APP` (repeatable, or comma-separated)")
	fs.DurationVar(&cfg.StatusInterval, "status-interval", cfg.StatusInterval, "how often to read each registry's self-preservation state")
	fs.DurationVar(&cfg.Resend, "resend", cfg.Resend, "how often to re-send firing alerts to Alertmanager")
	fs.StringVar(&cfg.StateFile, "state", "", "keep the stream position and firing alerts in this `file`, to resume after a restart")
	logFormat := fs.String("log-format", "text", "log format: text or json (logs go to stderr)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{fmt.Sprintf("alert: unexpected argument %q", pos[0])}
	}
	if err := o.validate(); err != nil {
		return err
	}
	cfg.Apps, cfg.Timeout = apps, o.timeout
	if err := cfg.validate(); err != nil {
		return &usageError{"alert: " + err.Error()}
	}
	logger, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		return &usageError{"alert: " + err.Error()}
	}
	rc, err := o.connect()
	if err != nil {
		return err
	}
	defer rc.close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := newAlertForwarder(cfg, rc, logger)
	if err != nil {
		return err
	}
	return f.run(ctx)
}

// amAlert is an alert as Alertmanager's v2 API takes it (postableAlert).
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// webhookAlert is an alert as the webhook gets it.
type webhookAlert struct {
	Status string `json:"status"` // firing or resolved
	amAlert
}

func (a amAlert) key() string {
	return a.Labels["alertname"] + "\x00" + a.Labels["app"] + "\x00" + a.Labels["instance"]
}

// alertState is what the forwarder remembers, and what --state keeps.
type alertState struct {
	Node    string              `json:"node"`    // the server process LastSeq belongs to
	LastSeq uint64              `json:"lastSeq"` // the last event handled
	Firing  map[string]*amAlert `json:"firing"`  // by key
}

// alertForwarder turns registry events into alert state changes and hands
// them to its destinations.
type alertForwarder struct {
	cfg   alertConfig
	rc    *registryConn
	log   *slog.Logger
	sinks []*alertSink
	now   func() time.Time

	mu        sync.Mutex
	state     alertState
	lastSaved time.Time

	// kicks make the status pollers look at once: the event stream says
	// when self-preservation starts or ends on the server it comes from.
	kicks []chan struct{}
}

func newAlertForwarder(cfg alertConfig, rc *registryConn, logger *slog.Logger) (*alertForwarder, error) {
	f := &alertForwarder{cfg: cfg, rc: rc, log: logger.With("subsystem", "alert"), now: time.Now,
		state: alertState{Firing: map[string]*amAlert{}}}
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
			return nil, fmt.Errorf("--state: %w", err)
		default:
			var st alertState
			if err := json.Unmarshal(b, &st); err != nil {
				return nil, fmt.Errorf("--state %s: not a state file heureka wrote (%v); move it away to start afresh", cfg.StateFile, err)
			}
			if st.Firing == nil {
				st.Firing = map[string]*amAlert{}
			}
			f.state = st
			f.log.Info("resuming from the state file", "file", cfg.StateFile, "last_seq", st.LastSeq, "firing", len(st.Firing))
		}
	}
	return f, nil
}

// run forwards until ctx ends, then gives undelivered alerts a few seconds.
func (f *alertForwarder) run(ctx context.Context) error {
	follower := &streamFollower{
		rc: f.rc, path: "/v1/events", apps: f.cfg.Apps,
		sync:   f.reconcile,
		handle: f.handle,
		note:   func(format string, args ...any) { f.log.Warn(fmt.Sprintf(format, args...)) },
	}
	f.mu.Lock()
	if f.state.Node != "" {
		follower.since, follower.hasSince, follower.node = f.state.LastSeq, true, f.state.Node
	}
	f.mu.Unlock()

	f.kicks = make([]chan struct{}, len(f.rc.urls))
	for i := range f.kicks {
		f.kicks[i] = make(chan struct{}, 1)
	}
	// The first actor to return stops the others.
	gctx, stop := context.WithCancel(ctx)
	defer stop()
	g, gctx := errgroup.WithContext(gctx)
	actor := func(name string, fn func(context.Context) error) {
		g.Go(func() error {
			defer stop()
			if err := fn(gctx); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	actor("events", func(ctx context.Context) error {
		if err := follower.run(ctx); err != nil {
			return err
		}
		<-ctx.Done() // keep the others running until the stop
		return nil
	})
	for i, base := range f.rc.urls {
		actor("status", func(ctx context.Context) error { f.pollStatus(ctx, base, f.kicks[i]); return nil })
	}
	sinkCtx, stopSinks := context.WithCancel(context.Background())
	var sinks sync.WaitGroup
	for _, s := range f.sinks {
		sinks.Go(func() { s.run(sinkCtx) })
	}
	actor("resend", func(ctx context.Context) error {
		t := time.NewTicker(f.cfg.Resend)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				f.resend()
			}
		}
	})
	f.log.Info("forwarding alerts", "registry", strings.Join(f.rc.shown, ","), "alertmanager", f.cfg.Alertmanager, "webhook", f.cfg.Webhook)
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
func (f *alertForwarder) handle(ev sseEvent) error {
	var e heureka.Event
	if err := json.Unmarshal(ev.data, &e); err != nil {
		// Reading it again would not help: skip it, and say so.
		f.log.Error("skipping an event that is not JSON", "type", ev.typ, "id", ev.id, "err", err)
		return nil
	}
	if e.Type == "" {
		e.Type = heureka.EventType(ev.typ)
	}
	t := time.UnixMilli(e.Time)
	f.mu.Lock()
	defer f.mu.Unlock()
	changed := false
	switch e.Type {
	case heureka.EventRegistered:
		changed = f.resolveLocked(alertInstanceExpired, e.App, e.ID, t) || changed
		changed = f.statusLocked(e, t) || changed
	case heureka.EventStatusChanged:
		changed = f.statusLocked(e, t)
	case heureka.EventCancelled:
		changed = f.resolveLocked(alertInstanceDown, e.App, e.ID, t)
		changed = f.resolveLocked(alertInstanceExpired, e.App, e.ID, t) || changed
	case heureka.EventSelfPreservationEntered, heureka.EventSelfPreservationLeft:
		for _, k := range f.kicks {
			select {
			case k <- struct{}{}:
			default:
			}
		}
	case heureka.EventExpired:
		// The expiry says more than an earlier DOWN: one alert at a time.
		changed = f.resolveLocked(alertInstanceDown, e.App, e.ID, t)
		changed = f.fireLocked(f.instanceAlert(alertInstanceExpired, e.App, e.ID, t,
			fmt.Sprintf("%s %s stopped renewing its lease and was removed from the registry", roleName(e.App), e.ID),
			fmt.Sprintf("Lease expired (%s). Host %s. Its agent or host is gone; clients no longer see it.", e.Cause, dash(e.HostName)))) || changed
	}
	f.state.LastSeq = e.Seq
	f.saveLocked(changed)
	return nil
}

// statusLocked applies an instance's new status to its DOWN alert.
func (f *alertForwarder) statusLocked(e heureka.Event, t time.Time) bool {
	switch e.Status {
	case heureka.StatusDown:
		desc := fmt.Sprintf("Status DOWN (was %s, set by %s). Host %s.", dash(string(e.Old)), dash(e.By), dash(e.HostName))
		if e.Type == "registered" {
			desc = fmt.Sprintf("Registered with status DOWN. Host %s.", dash(e.HostName))
		}
		return f.fireLocked(f.instanceAlert(alertInstanceDown, e.App, e.ID, t,
			fmt.Sprintf("%s %s is DOWN", roleName(e.App), e.ID), desc))
	case heureka.StatusUp, heureka.StatusOutOfService:
		return f.resolveLocked(alertInstanceDown, e.App, e.ID, t)
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

func (f *alertForwarder) generatorURL() string {
	return publicURL(rootOf(f.rc.urls[0])) + "/"
}

func (f *alertForwarder) instanceAlert(name, app, id string, t time.Time, summary, desc string) *amAlert {
	severity := "warning"
	if role, _, ok := hdfs.ParseAppName(app); ok && role == hdfs.RoleNameNode {
		severity = "critical" // the cluster stops without them
	}
	return &amAlert{
		Labels:       map[string]string{"alertname": name, "app": app, "instance": id, "severity": severity},
		Annotations:  map[string]string{"summary": summary, "description": desc, "dashboard": f.generatorURL()},
		StartsAt:     t.UTC(),
		GeneratorURL: f.generatorURL(),
	}
}

// fireLocked starts a (not yet firing) alert and sends it.
func (f *alertForwarder) fireLocked(a *amAlert) bool {
	k := a.key()
	if _, ok := f.state.Firing[k]; ok {
		return false
	}
	f.state.Firing[k] = a
	f.log.Info("alert firing", "alert", a.Labels["alertname"], "app", a.Labels["app"], "instance", a.Labels["instance"])
	for _, s := range f.sinks {
		s.enqueue(*a, "firing")
	}
	return true
}

// resolveLocked ends a firing alert at t and sends it.
func (f *alertForwarder) resolveLocked(name, app, instance string, t time.Time) bool {
	k := name + "\x00" + app + "\x00" + instance
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
func (f *alertForwarder) reconcile(ctx context.Context, reason string) (uint64, string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	apps, version, node, err := f.rc.listing(ctx)
	if err != nil {
		return 0, "", err
	}
	if version == 0 && node == "" {
		return 0, "", fmt.Errorf("%w: the registry at %s sends no X-Heureka-Version; alert needs a heureka server", errNotHeureka, strings.Join(f.rc.shown, ", "))
	}
	if reason != "" {
		f.log.Warn("re-reading the registry", "reason", reason, "version", version)
	}
	now := f.now()
	present := map[string]*heureka.Instance{}
	for _, a := range apps.Apps {
		if len(f.cfg.Apps) > 0 && !slices.Contains(f.cfg.Apps, a.Name) {
			continue
		}
		for _, in := range a.Instances {
			present[a.Name+"\x00"+in.ID] = in
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(f.state.Firing)) {
		a := f.state.Firing[k]
		name, app, id := a.Labels["alertname"], a.Labels["app"], a.Labels["instance"]
		in, ok := present[app+"\x00"+id]
		switch {
		case name == alertInstanceDown && (!ok || in.Status == heureka.StatusUp || in.Status == heureka.StatusOutOfService):
			f.resolveLocked(name, app, id, now)
		case name == alertInstanceExpired && ok:
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
		f.fireLocked(f.instanceAlert(alertInstanceDown, in.App, in.ID, t,
			fmt.Sprintf("%s %s is DOWN", roleName(in.App), in.ID),
			fmt.Sprintf("Status DOWN (found on reading the registry). Host %s.", dash(in.HostName))))
	}
	f.state.Node, f.state.LastSeq = node, version
	f.saveLocked(true)
	return version, node, nil
}

// pollStatus fires and resolves the self-preservation alert of the server
// at base: every StatusInterval, and at once when kicked.
func (f *alertForwarder) pollStatus(ctx context.Context, base string, kick <-chan struct{}) {
	root := rootOf(base)
	public := publicURL(root) // no password in alerts or logs
	host := public
	if u, err := url.Parse(root); err == nil {
		host = u.Host
	}
	check := func() {
		ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/v1/status", nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "application/json")
		resp, err := f.rc.http.Do(req)
		if err != nil {
			f.log.Debug("cannot read the registry's status", "url", public, "err", err)
			return
		}
		defer resp.Body.Close()
		var st struct {
			SelfPreservation struct {
				Mode                    string  `json:"mode"`
				Active                  bool    `json:"active"`
				Reason                  string  `json:"reason"`
				Instances               int     `json:"instances"`
				Expired                 int     `json:"expired"`
				RenewsLastMinute        int64   `json:"renewsLastMinute"`
				ExpectedRenewsPerMinute float64 `json:"expectedRenewsPerMinute"`
			} `json:"selfPreservation"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st) != nil {
			f.log.Debug("unreadable status", "url", public, "status", resp.Status)
			return
		}
		sp := st.SelfPreservation
		now := f.now()
		f.mu.Lock()
		defer f.mu.Unlock()
		changed := false
		if sp.Active {
			changed = f.fireLocked(&amAlert{
				Labels: map[string]string{"alertname": alertSelfPreservation, "app": "heureka", "instance": host, "severity": "critical"},
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
			changed = f.resolveLocked(alertSelfPreservation, "heureka", host, now)
		}
		if changed {
			f.saveLocked(true)
		}
	}
	check()
	t := time.NewTicker(f.cfg.StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			check()
		case <-kick:
			check()
		}
	}
}

// resend re-sends every firing alert to Alertmanager, which would
// otherwise resolve it after its resolve_timeout.
func (f *alertForwarder) resend() {
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
func (f *alertForwarder) saveLocked(now bool) {
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
	tmp, err := os.CreateTemp(filepath.Dir(f.cfg.StateFile), filepath.Base(f.cfg.StateFile)+".tmp*")
	if err == nil {
		_, err = tmp.Write(b)
		if serr := tmp.Sync(); err == nil {
			err = serr
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), f.cfg.StateFile)
		}
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}
	if err != nil {
		f.log.Error("cannot write the state file", "file", f.cfg.StateFile, "err", err)
		return
	}
	f.lastSaved = f.now()
}

// alertSink delivers alert changes to one destination, in order, retrying
// until each is delivered (or refused as invalid).
type alertSink struct {
	name     string
	url      string
	webhook  bool
	client   *http.Client
	maxQueue int
	log      *slog.Logger

	mu    sync.Mutex
	queue []queuedAlert
	next  uint64 // number of the next queued alert
	wake  chan struct{}
	busy  bool
}

// queuedAlert is an alert change waiting for delivery; n orders them.
type queuedAlert struct {
	n uint64
	webhookAlert
}

func newAlertSink(name, u string, webhook bool, client *http.Client, maxQueue int, log *slog.Logger) *alertSink {
	return &alertSink{name: name, url: u, webhook: webhook, client: client, maxQueue: maxQueue,
		log: log.With("destination", name), wake: make(chan struct{}, 1)}
}

func (s *alertSink) enqueue(a amAlert, status string) {
	s.mu.Lock()
	a.Labels, a.Annotations = maps.Clone(a.Labels), maps.Clone(a.Annotations)
	s.next++
	s.queue = append(s.queue, queuedAlert{n: s.next, webhookAlert: webhookAlert{Status: status, amAlert: a}})
	if over := len(s.queue) - s.maxQueue; over > 0 {
		s.log.Error("too many undelivered alerts; dropping the oldest", "dropped", over)
		s.queue = slices.Delete(s.queue, 0, over)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run sends batches until ctx ends.
func (s *alertSink) run(ctx context.Context) {
	backoff := 500 * time.Millisecond
	for {
		if s.sendBatch(ctx) {
			backoff = 500 * time.Millisecond
			continue
		}
		s.mu.Lock()
		pending := len(s.queue) > 0
		s.mu.Unlock()
		wait := time.Duration(1<<62 - 1)
		if pending {
			wait = backoff
			backoff = min(backoff*2, 30*time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-time.After(wait):
		}
	}
}

// sendBatch posts what is queued; it reports whether it made progress.
func (s *alertSink) sendBatch(ctx context.Context) bool {
	s.mu.Lock()
	if len(s.queue) == 0 || s.busy {
		s.mu.Unlock()
		return false
	}
	s.busy = true
	batch := slices.Clone(s.queue[:min(len(s.queue), 500)])
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()

	var body []byte
	if s.webhook {
		hooks := make([]webhookAlert, len(batch))
		for i, a := range batch {
			hooks[i] = a.webhookAlert
		}
		body, _ = json.Marshal(hooks)
	} else {
		plain := make([]amAlert, len(batch))
		for i, a := range batch {
			plain[i] = a.amAlert
		}
		body, _ = json.Marshal(plain)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		s.log.Error("bad destination URL", "err", err)
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cannot deliver alerts; will retry", "url", s.url, "alerts", len(batch), "err", err)
		}
		return false
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		s.log.Debug("alerts delivered", "alerts", len(batch))
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusRequestTimeout:
		// Sending the same again will not help.
		s.log.Error("destination refused the alerts; dropping them", "url", s.url, "status", resp.Status,
			"answer", strings.TrimSpace(string(msg)), "alerts", len(batch))
	default:
		s.log.Warn("destination failed; will retry", "url", s.url, "status", resp.Status, "alerts", len(batch))
		return false
	}
	// Drop what was sent; the oldest may have been dropped meanwhile.
	last := batch[len(batch)-1].n
	s.mu.Lock()
	i := 0
	for i < len(s.queue) && s.queue[i].n <= last {
		i++
	}
	s.queue = s.queue[i:]
	s.mu.Unlock()
	return true
}

// drain tries to deliver what is queued until deadline.
func (s *alertSink) drain(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for ctx.Err() == nil {
		s.mu.Lock()
		n, busy := len(s.queue), s.busy
		s.mu.Unlock()
		if n == 0 && !busy {
			return
		}
		if !busy && !s.sendBatch(ctx) {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		} else if busy {
			time.Sleep(20 * time.Millisecond)
		}
	}
	s.mu.Lock()
	if n := len(s.queue); n > 0 {
		s.log.Error("undelivered alerts at exit", "alerts", n)
	}
	s.mu.Unlock()
}

package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/heureka-project/heureka/alert"
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
  HeurekaNoActiveResourceManager, HeurekaNoActiveHBaseMaster,
  HeurekaZooKeeperNoLeader, HeurekaKafkaNoController
                           fire when a cluster of that role has members UP
                           and none active, leader or controller for a
                           minute (--for); resolve when one leads again.

Labels: alertname, app, instance (cluster for the cluster alerts), severity
(critical for NameNodes, self-preservation and the cluster alerts, warning
otherwise); annotations: summary, description, dashboard. Alerts carry
startsAt, and endsAt once resolved.

Each state change is sent once (and retried until delivered). Firing alerts
are re-sent to Alertmanager every --resend so that they do not time out; the
webhook gets each change once, as the same JSON array with a "status" field
("firing" or "resolved") in each alert. After a disconnect the stream resumes
from the last event handled (Last-Event-ID), so nothing is missed or repeated;
when the server cannot resume (its change log moved on, or it restarted) the
registry is read again and the alerts are reconciled with it. --state keeps
the position and the firing alerts in a file, so a restarted forwarder
continues where it stopped.

--for ALERT=DURATION holds an alert back until its condition has lasted that
long, as a Prometheus rule's "for" does (repeatable; e.g.
--for HeurekaInstanceDown=30s); a condition that ends sooner sends nothing.
`

func runAlert(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg := alert.DefaultConfig()
	forFlag := durationsFlag{}
	var c connFlags
	var apps appsFlag
	fs := newFlagSet("alert", "alert --alertmanager URL [--webhook URL] [flags]", alertHelp, exitsProgram, stderr)
	c.add(fs, 10*time.Second)
	fs.StringVar(&cfg.Alertmanager, "alertmanager", "", "Alertmanager base `URL`, e.g. http://127.0.0.1:9093")
	fs.StringVar(&cfg.Webhook, "webhook", "", "also POST every alert change, as JSON, to this `URL`")
	fs.Var(&apps, "app", "only alert on this `APP` (repeatable, or comma-separated)")
	fs.DurationVar(&cfg.StatusInterval, "status-interval", cfg.StatusInterval, "how often to read each registry's self-preservation state")
	fs.DurationVar(&cfg.Resend, "resend", cfg.Resend, "how often to re-send firing alerts to Alertmanager")
	fs.StringVar(&cfg.StateFile, "state", "", "keep the stream position and firing alerts in this `file`, to resume after a restart")
	fs.Var(forFlag, "for", "hold `ALERT=DURATION` back until its condition has lasted that long (repeatable)")
	newLog := logFlags(fs, stderr)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	conn, err := c.open() // for its error messages
	if err != nil {
		return err
	}
	defer conn.Close()
	rc := c.config()
	cfg.Apps, cfg.Timeout, cfg.Registry = apps, rc.Timeout, rc.ClientConfig()
	maps.Copy(cfg.For, forFlag)
	if err := cfg.Validate(); err != nil {
		return flagError(err, alertFields)
	}
	logger, err := newLog()
	if err != nil {
		return &usageError{"alert: " + err.Error()}
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	f, err := alert.New(cfg, logger)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Run(ctx); err != nil {
		return conn.Explain(err, "alert")
	}
	return nil
}

// alertFields maps alert.Config's fields to the flags that set them.
var alertFields = withFields(clientFields("Registry."), map[string]string{
	"Registry.ReadTimeout": "--timeout", "Registry.ConnectTimeout": "--timeout", "Timeout": "--timeout",
	"Alertmanager": "--alertmanager", "Webhook": "--webhook", "Apps": "--app", "StatusInterval": "--status-interval",
	"Resend": "--resend", "StateFile": "--state", "For": "--for",
})

// durationsFlag collects repeated NAME=DURATION flags.
type durationsFlag map[string]time.Duration

func (d durationsFlag) String() string {
	var parts []string
	for k, v := range d {
		parts = append(parts, k+"="+v.String())
	}
	return strings.Join(parts, ",")
}

func (d durationsFlag) Set(v string) error {
	name, dur, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want ALERT=DURATION, e.g. HeurekaInstanceDown=30s", v)
	}
	t, err := time.ParseDuration(strings.TrimSpace(dur))
	if err != nil {
		return fmt.Errorf("%q: %v", v, err)
	}
	d[strings.TrimSpace(name)] = t
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// appsFlag collects repeated or comma-separated --app flags, upper-cased
// as Eureka names applications.
type appsFlag []string

func (a *appsFlag) String() string { return strings.Join(*a, ",") }

func (a *appsFlag) Set(v string) error {
	for _, s := range commaList(v) {
		*a = append(*a, strings.ToUpper(s))
	}
	return nil
}

// watchLine is one line of `heureka watch -o json`.
type watchLine struct {
	Seq      uint64        `json:"seq"`
	Time     time.Time     `json:"time"`
	Action   string        `json:"action"` // ADDED, MODIFIED, DELETED
	Cause    heureka.Cause `json:"cause"`  // register, status, metadata, cancel, expired, …, or resync
	App      string        `json:"app"`
	ID       string        `json:"id"`
	Instance *instanceView `json:"instance,omitempty"`
}

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cliOptions
	var apps appsFlag
	fs := newFlagSet("watch", "watch [--app APP]... [flags]", `
Prints every change to the registry as it happens, one line each: time,
version, action (ADDED, MODIFIED, DELETED), instance, status, cause, rack
and disk. It reads the registry first, then follows the server's watch
stream (GET /v1/watch); a dropped connection is resumed where it stopped,
and when the server cannot resume (resync) the registry is read again and
the differences are printed with cause "resync". Ctrl-C stops it.`, stderr)
	o.addFlags(fs, true)
	fs.Var(&apps, "app", "watch only this `APP` (repeatable, or comma-separated)")
	pos, err := o.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{fmt.Sprintf("watch: unexpected argument %q (use --app APP)", pos[0])}
	}
	w := &watcher{out: stdout, json: o.json(), view: client.NewWatchView(apps...)}
	return o.follow(ctx, "watch", client.WatchStream, apps, stderr, func(rc *registryConn, fc *client.FollowConfig) {
		fc.Sync = func(ctx context.Context, reason string) (client.Position, error) {
			sctx, cancel := context.WithTimeout(ctx, o.timeout)
			defer cancel()
			return w.sync(sctx, rc, reason, stderr)
		}
		fc.Handle = w.handle
	})
}

// watcher prints changes; its view keeps what it printed, so that a
// resync can print what changed while it was not looking.
type watcher struct {
	out  io.Writer
	json bool
	view *client.WatchView
}

// sync reads the registry; after a resync it prints the differences from
// what was known.
func (w *watcher) sync(ctx context.Context, rc *registryConn, reason string, stderr io.Writer) (client.Position, error) {
	apps, pos, err := rc.listing(ctx)
	if errors.Is(err, client.ErrNotHeureka) {
		return pos, fmt.Errorf("%w; watch needs a heureka server", err)
	}
	if err != nil {
		return pos, err
	}
	if reason == "" {
		n := w.view.Reset(apps)
		fmt.Fprintf(stderr, "heureka watch: %d instances at version %d; following changes (Ctrl-C stops)\n", n, pos.Version)
		return pos, nil
	}
	fmt.Fprintf(stderr, "heureka watch: resync: %s; read the registry again at version %d\n", reason, pos.Version)
	t := time.Now()
	for _, c := range w.view.Resync(apps) {
		in := c.New
		if in == nil {
			in = c.Old
		}
		w.print(pos.Version, t, string(c.Action), heureka.CauseResync, in, c.Old)
	}
	return pos, nil
}

func (w *watcher) handle(ev client.Event) error {
	if ev.Type != heureka.StreamChange {
		return nil
	}
	c, in, old, err := w.view.Apply(ev.Data)
	if err != nil {
		return err
	}
	w.print(c.Seq, time.UnixMilli(c.Time), string(c.Action), c.Cause, in, old)
	return nil
}

func (w *watcher) print(seq uint64, t time.Time, action string, cause heureka.Cause, in, old *heureka.Instance) {
	v := viewOf(in)
	if w.json {
		line := watchLine{Seq: seq, Time: t.UTC(), Action: action, Cause: cause, App: in.App, ID: in.ID, Instance: &v}
		b, _ := json.Marshal(line)
		fmt.Fprintf(w.out, "%s\n", b)
		return
	}
	st := string(in.Status)
	if old != nil && old.Status != in.Status && action != string(heureka.ActionDeleted) {
		st = string(old.Status) + " → " + st // as `heureka events` writes a status change
	}
	var extra []string
	if v.Rack != "" {
		extra = append(extra, "rack="+v.Rack)
	}
	if v.DiskPercent != nil {
		extra = append(extra, "disk="+v.diskCell())
	}
	if v.HAState != "" {
		extra = append(extra, "ha="+v.HAState)
	}
	fmt.Fprintf(w.out, "%s  #%-6d %-8s %s/%s  %s  cause=%s  %s\n", t.Local().Format("15:04:05.000"), seq, action,
		cleanCell(in.App), cleanCell(in.ID), st, cause, cleanCell(strings.Join(extra, " ")))
}

var _ flag.Value = (*appsFlag)(nil)

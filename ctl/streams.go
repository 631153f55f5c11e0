package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

// Events prints the registry's typed events as they happen (GET
// /v1/events), one line each, or each as a line of JSON, until ctx ends.
// apps, when given, keeps only their events (upper case, as Eureka names
// them); since, when not nil, replays the events after that version first,
// as far as the server's change log reaches. A dropped connection is
// resumed where it stopped.
func Events(ctx context.Context, c *Conn, out Output, apps []string, since *uint64) error {
	return c.follow(ctx, "events", client.EventsStream, apps, out.Notes, func(fc *client.FollowConfig) {
		fc.Handle = func(ev client.Event) error { return printEvent(out.W, ev, out.JSON) }
		if since != nil {
			fc.From = &client.Position{Version: *since}
		}
	})
}

// printEvent prints one event of /v1/events.
func printEvent(w io.Writer, ev client.Event, asJSON bool) error {
	if ev.Type == heureka.StreamProgress { // position only: nothing happened
		return nil
	}
	if asJSON {
		var buf bytes.Buffer
		if err := json.Compact(&buf, ev.Data); err != nil {
			return fmt.Errorf("the event stream sent an event that is not JSON: %w", err)
		}
		buf.WriteByte('\n')
		_, err := w.Write(buf.Bytes())
		return err
	}
	var e heureka.Event
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("the event stream sent an event that is not JSON: %w", err)
	}
	if e.Type == "" {
		e.Type = heureka.EventType(ev.Type)
	}
	who := "registry"
	if e.ID != "" {
		who = e.App + "/" + e.ID
	}
	_, err := fmt.Fprintf(w, "%s  #%-6d %-16s %s  %s\n", time.UnixMilli(e.Time).Local().Format("15:04:05.000"),
		e.Seq, e.Type, cleanCell(who), cleanCell(eventDetail(e)))
	return err
}

// statusChange writes a change of status, as both streams print it.
func statusChange(old, now heureka.Status) string { return string(old) + " → " + string(now) }

// eventDetail says what an event means, in a few words.
func eventDetail(e heureka.Event) string {
	by := ""
	if e.By != "" {
		by = " by " + e.By
	}
	switch e.Type {
	case heureka.EventRegistered:
		s := "registered " + string(e.Status)
		if e.HostName != "" {
			s += " on " + e.HostName
		}
		return s
	case heureka.EventStatusChanged:
		return statusChange(e.Old, e.Status) + by
	case heureka.EventMetadataChanged:
		return "metadata " + strings.Join(e.Keys, ", ") + by
	case heureka.EventCancelled:
		return "deregistered" + by
	case heureka.EventExpired:
		return "lease expired: " + e.Cause
	case heureka.EventSelfPreservationEntered:
		return "self-preservation engaged: expired leases are kept: " + e.Cause
	case heureka.EventSelfPreservationLeft:
		return "self-preservation left: " + e.Cause
	case heureka.EventPeerFound:
		return "peer " + e.Peer + " is reachable"
	case heureka.EventPeerLost:
		return "peer " + e.Peer + " is unreachable: " + e.Cause
	}
	return strings.TrimSpace(string(e.Status) + " " + e.Cause)
}

// WatchLine is one line of `heureka watch -o json`.
type WatchLine struct {
	Seq      uint64             `json:"seq"`
	Time     time.Time          `json:"time"`
	Action   heureka.ActionType `json:"action"` // ADDED, MODIFIED, DELETED, as client.WatchView names them
	Cause    heureka.Cause      `json:"cause"`  // register, status, metadata, cancel, expired, …, or resync
	App      string             `json:"app"`
	ID       string             `json:"id"`
	Instance *View              `json:"instance,omitempty"`
}

// Watch prints every change to the registry as it happens, one line each
// (or each as a line of JSON), until ctx ends: it reads the registry, then
// follows the watch stream (GET /v1/watch); when the server cannot resume
// it (a resync), it reads the registry again and prints the differences
// with cause "resync". apps, when given, keeps only their instances (upper
// case).
func Watch(ctx context.Context, c *Conn, out Output, apps []string) error {
	w := &watcher{out: out, view: client.NewWatchView(apps...)}
	return c.follow(ctx, "watch", client.WatchStream, apps, out.Notes, func(fc *client.FollowConfig) {
		fc.Sync = func(ctx context.Context, reason string) (client.Position, error) {
			ctx, cancel := c.bound(ctx)
			defer cancel()
			return w.sync(ctx, c, reason)
		}
		fc.Handle = w.handle
	})
}

// watcher prints changes; its view keeps what it printed, so that a
// resync can print what changed while it was not looking.
type watcher struct {
	out  Output
	view *client.WatchView
}

// sync reads the registry; after a resync it prints the differences from
// what was known.
func (w *watcher) sync(ctx context.Context, c *Conn, reason string) (client.Position, error) {
	apps, pos, err := c.listing(ctx)
	if errors.Is(err, client.ErrNotHeureka) {
		return pos, fmt.Errorf("%w; watch needs a heureka server", err)
	}
	if err != nil {
		return pos, err
	}
	if reason == "" {
		n := w.view.Reset(apps)
		fmt.Fprintf(w.out.Notes, "heureka watch: %d instances at version %d; following changes (Ctrl-C stops)\n", n, pos.Version)
		return pos, nil
	}
	fmt.Fprintf(w.out.Notes, "heureka watch: resync: %s; read the registry again at version %d\n", reason, pos.Version)
	t := time.Now()
	for _, ch := range w.view.Resync(apps) {
		in := ch.New
		if in == nil {
			in = ch.Old
		}
		w.print(pos.Version, t, ch.Action, heureka.CauseResync, in, ch.Old)
	}
	return pos, nil
}

func (w *watcher) handle(ev client.Event) error {
	if ev.Type != heureka.StreamChange {
		return nil
	}
	ch, in, old, err := w.view.Apply(ev.Data)
	if err != nil {
		return err
	}
	w.print(ch.Seq, time.UnixMilli(ch.Time), ch.Action, ch.Cause, in, old)
	return nil
}

func (w *watcher) print(seq uint64, t time.Time, action heureka.ActionType, cause heureka.Cause, in, old *heureka.Instance) {
	v := ViewOf(in)
	if w.out.JSON {
		b, _ := json.Marshal(WatchLine{Seq: seq, Time: t.UTC(), Action: action, Cause: cause, App: in.App, ID: in.ID, Instance: &v})
		fmt.Fprintf(w.out.W, "%s\n", b)
		return
	}
	st := string(in.Status)
	if old != nil && old.Status != in.Status && action != heureka.ActionDeleted {
		st = statusChange(old.Status, in.Status)
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
	fmt.Fprintf(w.out.W, "%s  #%-6d %-8s %s/%s  %s  cause=%s  %s\n", t.Local().Format("15:04:05.000"), seq, action,
		cleanCell(in.App), cleanCell(in.ID), st, cause, cleanCell(strings.Join(extra, " ")))
}

// follow follows one of the server's streams for the command name until
// ctx ends: setup fills in fc's Handle (and Sync, From).
func (c *Conn) follow(ctx context.Context, name, stream string, apps []string, notes io.Writer, setup func(*client.FollowConfig)) error {
	fc := client.DefaultFollowConfig()
	fc.Stream, fc.Apps = stream, apps
	fc.Note = func(format string, args ...any) { fmt.Fprintf(notes, "heureka "+name+": "+format+"\n", args...) }
	setup(&fc)
	err := c.client.Follow(ctx, fc)
	// The registry's own errors are explained as for any command; a
	// stream refused, or a handler's error, are as they are.
	var ce *client.Error
	if err == nil || errors.Is(err, client.ErrNotHeureka) || !errors.As(err, &ce) {
		return err
	}
	return c.Explain(err, name)
}

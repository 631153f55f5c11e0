package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

func runEvents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cliOptions
	var apps appsFlag
	fs := newFlagSet("events", "events [--app APP]... [--since VERSION] [flags]", `
Prints the registry's typed events as they happen (GET /v1/events), one line
each: registered, status_changed (with the old status and who changed it),
metadata_changed (with the keys), cancelled and expired (with the cause).
--since replays the events after a version first, as far as the server's
change log reaches (--since 0: all of it). -o json prints each event as one
line of JSON. A dropped connection is resumed where it stopped. Ctrl-C stops
it.`, stderr)
	o.addFlags(fs, true)
	fs.Var(&apps, "app", "only events of this `APP` (repeatable, or comma-separated)")
	since := fs.Int64("since", -1, "replay the events after this registry `VERSION` first (default: only new events)")
	pos, err := o.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{fmt.Sprintf("events: unexpected argument %q (use --app APP)", pos[0])}
	}
	if *since < -1 {
		return &usageError{fmt.Sprintf("--since %d: want a registry version (0 or more)", *since)}
	}
	return o.follow(ctx, "events", client.EventsStream, apps, stderr, func(_ *registryConn, fc *client.FollowConfig) {
		fc.Handle = func(ev client.Event) error { return printEvent(stdout, ev, o.json()) }
		if *since >= 0 {
			fc.From = &client.Position{Version: uint64(*since)}
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
		return string(e.Old) + " → " + string(e.Status) + by
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

// follow follows one of the server's streams for the command name until
// Ctrl-C or SIGTERM: setup fills in fc's Handle (and Sync, From).
func (o *cliOptions) follow(ctx context.Context, name, stream string, apps []string, stderr io.Writer, setup func(*registryConn, *client.FollowConfig)) error {
	rc, err := o.connect()
	if err != nil {
		return err
	}
	defer rc.close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fc := client.DefaultFollowConfig()
	fc.Stream, fc.Apps = stream, apps
	fc.Note = func(format string, args ...any) { fmt.Fprintf(stderr, "heureka "+name+": "+format+"\n", args...) }
	setup(rc, &fc)
	return followError(rc, name, rc.client.Follow(ctx, fc))
}

// followError explains what ended a Follow: the registry's own errors as
// for any command; a stream refused, or a handler's error, as they are.
func followError(rc *registryConn, what string, err error) error {
	var ce *client.Error
	if err == nil || errors.Is(err, client.ErrNotHeureka) || !errors.As(err, &ce) {
		return err
	}
	return rc.explain(err, what)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/ctl"
)

// The operator commands: apps, instances, show, status, deregister,
// watch and events. Each turns its flags into ctl's options and
// calls the command there.

// opFlags are an operator command's flags: the connection's and, for a
// command that lists, -o.
type opFlags struct {
	conn   connFlags
	output string
}

func (o *opFlags) add(fs *flag.FlagSet, listing bool) {
	o.conn.add(fs, 10*time.Second)
	if listing {
		fs.StringVar(&o.output, "o", "table", "output `format`: table or json")
		fs.StringVar(&o.output, "output", "table", "output `format`: table or json (same as -o)")
	}
}

// run connects and calls fn with the connection and the output; a
// setting that cannot work is a usage error naming its flag (fields maps
// the command's own options to their flags).
func (o *opFlags) run(stdout, stderr io.Writer, fields map[string]string, fn func(*ctl.Conn, ctl.Output) error) error {
	if o.output != "" && o.output != "table" && o.output != "json" {
		return &usageError{fmt.Sprintf("-o %q: want table or json", o.output)}
	}
	conn, err := o.conn.open()
	if err != nil {
		return err
	}
	defer conn.Close()
	return flagError(fn(conn, ctl.Output{W: stdout, Notes: stderr, JSON: o.output == "json"}), fields)
}

// one parses fs and wants exactly one positional argument, naming what it
// is in the usage error.
func one(fs *flag.FlagSet, args []string, want string) (string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", &usageError{want}
	}
	return pos[0], nil
}

func runApps(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	fs := newFlagSet("apps", "apps [flags]", `
Lists the registered applications with their number of instances by status.`, exitsOperator, stderr)
	o.add(fs, true)
	if err := noArgs(fs, args); err != nil {
		return err
	}
	return o.run(stdout, stderr, nil, func(c *ctl.Conn, out ctl.Output) error { return ctl.Apps(ctx, c, out) })
}

func runInstances(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	fs := newFlagSet("instances", "instances APP [flags]", `
Lists an application's instances: ID, status, rack, disk fullness, block
count, version, last renewal and the role state (active, standby, leader,
controller, ...) where the role has one. APP is case-insensitive, e.g.
hdfs-datanode.prod. With --host, a heureka server looks the hosts up
itself, so the answer costs the hosts asked for, not the application.`, exitsOperator, stderr)
	o.add(fs, true)
	status := fs.String("status", "", "show only instances with this `STATUS` (UP, DOWN, OUT_OF_SERVICE, STARTING, UNKNOWN)")
	hosts := fs.String("host", "", "show only instances on these `hosts` (names or IP addresses, comma-separated)")
	app, err := one(fs, args, "instances: want exactly one application name, e.g. `heureka instances hdfs-datanode.prod` (see `heureka apps`)")
	if err != nil {
		return err
	}
	opts := ctl.InstancesOptions{App: app}
	if *status != "" {
		if opts.Status, err = heureka.ParseStatus(*status); err != nil {
			return &usageError{"--status: " + err.Error()}
		}
	}
	if *hosts != "" {
		if opts.Hosts = commaList(*hosts); len(opts.Hosts) == 0 {
			return &usageError{fmt.Sprintf("--host %q: want host names or IP addresses, comma-separated", *hosts)}
		}
	}
	return o.run(stdout, stderr, map[string]string{"Hosts": "--host", "Status": "--status"}, func(c *ctl.Conn, out ctl.Output) error {
		return ctl.Instances(ctx, c, out, opts)
	})
}

func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	fs := newFlagSet("show", "show ID [flags]", `
Shows one instance, found by its ID alone: addresses, status and override,
role state (and whether it leads its cluster), lease, HDFS metadata (rack,
disk, blocks, version) and all other metadata.`, exitsOperator, stderr)
	o.add(fs, true)
	id, err := one(fs, args, "show: want exactly one instance ID (see `heureka instances APP`)")
	if err != nil {
		return err
	}
	return o.run(stdout, stderr, nil, func(c *ctl.Conn, out ctl.Output) error { return ctl.Show(ctx, c, out, id) })
}

const statusHelp = `
set puts a status override on an instance, found by its ID alone: it keeps
that status, whatever its heartbeats say, until the override is cleared.
OUT_OF_SERVICE takes a node out of traffic (a drain); UP puts it back.
STATUS is one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN.

clear removes the override. The status becomes --value if given; otherwise
UNKNOWN, as in Eureka, until the instance's next heartbeat makes it register
again with its own status (within its renewal interval, 10 s for heureka
agents).`

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	fs := newFlagSet("status", "status set ID STATUS [flags]\n       heureka status clear ID [flags]", statusHelp, exitsOperator, stderr)
	o.add(fs, false)
	value := fs.String("value", "", "clear only: the `STATUS` the instance gets when the override is removed (default: UNKNOWN until it registers again)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{"status: want `status set ID STATUS` or `status clear ID`"}
	}
	switch pos[0] {
	case "set":
		if len(pos) != 3 {
			return &usageError{"status set: want an instance ID and a status, e.g. `heureka status set ID OUT_OF_SERVICE`"}
		}
		st, err := heureka.ParseStatus(pos[2])
		if err != nil {
			return &usageError{"status set: " + err.Error()}
		}
		if *value != "" {
			return &usageError{"status set: --value applies to `status clear` only"}
		}
		return o.run(stdout, stderr, nil, func(c *ctl.Conn, _ ctl.Output) error { return ctl.SetStatus(ctx, c, stdout, pos[1], st) })
	case "clear":
		if len(pos) != 2 {
			return &usageError{"status clear: want exactly one instance ID"}
		}
		var fallback heureka.Status
		if *value != "" {
			if fallback, err = heureka.ParseStatus(*value); err != nil {
				return &usageError{"status clear --value: " + err.Error()}
			}
		}
		return o.run(stdout, stderr, nil, func(c *ctl.Conn, _ ctl.Output) error { return ctl.ClearStatus(ctx, c, stdout, pos[1], fallback) })
	}
	return &usageError{fmt.Sprintf("status: unknown action %q; want set or clear", pos[0])}
}

func runDeregister(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	fs := newFlagSet("deregister", "deregister ID [flags]", `
Removes an instance, found by its ID alone, from the registry (Eureka's
cancel). An instance whose agent still runs registers again at its next
heartbeat: to take a live node out of traffic, use
`+"`heureka status set ID OUT_OF_SERVICE`"+` instead.`, exitsOperator, stderr)
	o.add(fs, false)
	id, err := one(fs, args, "deregister: want exactly one instance ID (see `heureka instances APP`)")
	if err != nil {
		return err
	}
	return o.run(stdout, stderr, nil, func(c *ctl.Conn, _ ctl.Output) error { return ctl.Deregister(ctx, c, stdout, id) })
}

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	var apps appsFlag
	fs := newFlagSet("watch", "watch [--app APP]... [flags]", `
Prints every change to the registry as it happens, one line each: time,
version, action (ADDED, MODIFIED, DELETED, for the instances this watch
has seen), instance, status (UP → DOWN for a change of it, as events
writes it), cause, rack and disk. It reads the registry first, then follows
the server's watch stream (GET /v1/watch); a dropped connection is resumed
where it stopped, and when the server cannot resume (resync) the registry
is read again and the differences are printed with cause "resync". Ctrl-C
stops it.`, exitsOperator, stderr)
	o.add(fs, true)
	fs.Var(&apps, "app", "watch only this `APP` (repeatable, or comma-separated)")
	if pos, err := parseArgs(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return &usageError{fmt.Sprintf("watch: unexpected argument %q (use --app APP)", pos[0])}
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	return o.run(stdout, stderr, nil, func(c *ctl.Conn, out ctl.Output) error { return ctl.Watch(ctx, c, out, apps) })
}

func runEvents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	var apps appsFlag
	fs := newFlagSet("events", "events [--app APP]... [--since VERSION] [flags]", `
Prints the registry's typed events as they happen (GET /v1/events), one line
each: registered, status_changed (with the old status and who changed it),
metadata_changed (with the keys), cancelled and expired (with the cause).
--since replays the events after a version first, as far as the server's
change log reaches (--since 0: all of it). -o json prints each event as one
line of JSON. A dropped connection is resumed where it stopped. Ctrl-C stops
it.`, exitsOperator, stderr)
	o.add(fs, true)
	fs.Var(&apps, "app", "only events of this `APP` (repeatable, or comma-separated)")
	since := fs.String("since", "", "replay the events after this registry `VERSION` first (0: all the server keeps); without it, only new events")
	if pos, err := parseArgs(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return &usageError{fmt.Sprintf("events: unexpected argument %q (use --app APP)", pos[0])}
	}
	var from *uint64
	if *since != "" {
		v, err := strconv.ParseUint(*since, 10, 64)
		if err != nil {
			return &usageError{fmt.Sprintf("--since %q: want a registry version (0 or more)", *since)}
		}
		from = &v
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	return o.run(stdout, stderr, nil, func(c *ctl.Conn, out ctl.Output) error { return ctl.Events(ctx, c, out, apps, from) })
}

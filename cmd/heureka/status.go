package main

import (
	"context"
	"fmt"
	"io"

	"github.com/heureka-project/heureka"
)

const statusSynopsis = "status set ID STATUS [flags]\n       heureka status clear ID [flags]"

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
	var o cliOptions
	fs := newFlagSet("status", statusSynopsis, statusHelp, stderr)
	o.addFlags(fs, false)
	value := fs.String("value", "", "clear only: the `STATUS` the instance gets when the override is removed (default: UNKNOWN until it registers again)")
	pos, err := o.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{"status: want `status set ID STATUS` or `status clear ID`"}
	}
	var st, fallback heureka.Status
	switch pos[0] {
	case "set":
		if len(pos) != 3 {
			return &usageError{"status set: want an instance ID and a status, e.g. `heureka status set ID OUT_OF_SERVICE`"}
		}
		if st, err = heureka.ParseStatus(pos[2]); err != nil {
			return &usageError{"status set: " + err.Error()}
		}
		if *value != "" {
			return &usageError{"status set: --value applies to `status clear` only"}
		}
	case "clear":
		if len(pos) != 2 {
			return &usageError{"status clear: want exactly one instance ID"}
		}
		if *value != "" {
			if fallback, err = heureka.ParseStatus(*value); err != nil {
				return &usageError{"status clear --value: " + err.Error()}
			}
		}
	default:
		return &usageError{fmt.Sprintf("status: unknown action %q; want set or clear", pos[0])}
	}
	id := pos[1]
	return o.withInstance(ctx, id, func(ctx context.Context, rc *registryConn, in *heureka.Instance) error {
		if pos[0] == "set" {
			if err := rc.client.SetStatus(ctx, in.App, in.ID, st); err != nil {
				return rc.explain(err, "set the status of "+in.String())
			}
			fmt.Fprintf(stdout, "%s: status %s (was %s), held by an override until `heureka status clear %s`\n", cleanCell(in.String()), st, in.Status, cleanCell(id))
			return nil
		}
		if in.OverriddenStatus == "" || in.OverriddenStatus == heureka.StatusUnknown {
			fmt.Fprintf(stdout, "%s: has no status override; status stays %s\n", cleanCell(in.String()), in.Status)
			return nil
		}
		if err := rc.client.ClearStatus(ctx, in.App, in.ID, fallback); err != nil {
			return rc.explain(err, "clear the status override of "+in.String())
		}
		if fallback == "" {
			fmt.Fprintf(stdout, "%s: override cleared; status UNKNOWN until the instance registers again with its own status\n", cleanCell(in.String()))
		} else {
			fmt.Fprintf(stdout, "%s: override cleared; status %s\n", cleanCell(in.String()), fallback)
		}
		return nil
	})
}

func runDeregister(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cliOptions
	fs := newFlagSet("deregister", "deregister ID [flags]", `
Removes an instance, found by its ID alone, from the registry (Eureka's
cancel). An instance whose agent still runs registers again at its next
heartbeat: to take a live node out of traffic, use
`+"`heureka status set ID OUT_OF_SERVICE`"+` instead.`, stderr)
	o.addFlags(fs, false)
	id, err := o.parseOne(fs, args, "deregister: want exactly one instance ID (see `heureka instances APP`)")
	if err != nil {
		return err
	}
	return o.withInstance(ctx, id, func(ctx context.Context, rc *registryConn, in *heureka.Instance) error {
		if err := rc.client.Cancel(ctx, in.App, in.ID); err != nil {
			return rc.explain(err, "deregister "+in.String())
		}
		fmt.Fprintf(stdout, "%s: deregistered (a running agent registers it again at its next heartbeat)\n", cleanCell(in.String()))
		return nil
	})
}

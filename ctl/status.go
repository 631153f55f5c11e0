package ctl

import (
	"context"
	"fmt"
	"io"

	"github.com/heureka-project/heureka"
)

// withInstance finds the instance with this ID and calls fn with it, all
// within the connection's Timeout.
func (c *Conn) withInstance(ctx context.Context, id string, fn func(context.Context, *heureka.Instance) error) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	in, err := c.instanceByID(ctx, id)
	if err != nil {
		return err
	}
	return fn(ctx, in)
}

// SetStatus puts a status override on the instance with this ID: it keeps
// st, whatever its heartbeats say, until ClearStatus.
func SetStatus(ctx context.Context, c *Conn, w io.Writer, id string, st heureka.Status) error {
	if _, err := heureka.ParseStatus(string(st)); err != nil {
		return heureka.InvalidConfig("Status", string(st), "%v", err)
	}
	return c.withInstance(ctx, id, func(ctx context.Context, in *heureka.Instance) error {
		if err := c.client.SetStatus(ctx, in.App, in.ID, st); err != nil {
			return c.Explain(err, "set the status of "+in.String())
		}
		_, err := fmt.Fprintf(w, "%s: status %s (was %s), held by an override until `heureka status clear %s`\n",
			cleanCell(in.String()), st, in.Status, cleanCell(id))
		return err
	})
}

// ClearStatus removes the instance's status override. Its status becomes
// fallback when given; otherwise UNKNOWN, as in Eureka, until its next
// heartbeat makes it register again with its own.
func ClearStatus(ctx context.Context, c *Conn, w io.Writer, id string, fallback heureka.Status) error {
	if fallback != "" {
		if _, err := heureka.ParseStatus(string(fallback)); err != nil {
			return heureka.InvalidConfig("Fallback", string(fallback), "%v", err)
		}
	}
	return c.withInstance(ctx, id, func(ctx context.Context, in *heureka.Instance) error {
		name := cleanCell(in.String())
		if in.OverriddenStatus == "" || in.OverriddenStatus == heureka.StatusUnknown {
			_, err := fmt.Fprintf(w, "%s: has no status override; status stays %s\n", name, in.Status)
			return err
		}
		if err := c.client.ClearStatus(ctx, in.App, in.ID, fallback); err != nil {
			return c.Explain(err, "clear the status override of "+in.String())
		}
		if fallback == "" {
			_, err := fmt.Fprintf(w, "%s: override cleared; status UNKNOWN until the instance registers again with its own status\n", name)
			return err
		}
		_, err := fmt.Fprintf(w, "%s: override cleared; status %s\n", name, fallback)
		return err
	})
}

// Deregister removes the instance with this ID from the registry
// (Eureka's cancel). A running agent registers it again at its next
// heartbeat.
func Deregister(ctx context.Context, c *Conn, w io.Writer, id string) error {
	return c.withInstance(ctx, id, func(ctx context.Context, in *heureka.Instance) error {
		if err := c.client.Cancel(ctx, in.App, in.ID); err != nil {
			return c.Explain(err, "deregister "+in.String())
		}
		_, err := fmt.Fprintf(w, "%s: deregistered (a running agent registers it again at its next heartbeat)\n", cleanCell(in.String()))
		return err
	})
}

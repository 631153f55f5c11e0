package ctl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/heureka-project/heureka"
)

// List writes, one a line, the registered applications' names in lower
// case (what "apps") or every instance's ID (what "ids"), for a shell's
// completion.
func List(ctx context.Context, c *Conn, w io.Writer, what string) error {
	if what != "apps" && what != "ids" {
		return heureka.InvalidConfig("What", what, "want apps or ids")
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	apps, _, err := c.listing(ctx)
	if err != nil {
		return err
	}
	for _, a := range apps.Apps {
		if what == "apps" {
			fmt.Fprintln(w, strings.ToLower(a.Name))
			continue
		}
		for _, in := range a.Instances {
			fmt.Fprintln(w, in.ID)
		}
	}
	return nil
}

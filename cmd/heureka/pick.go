package main

import (
	"context"
	"io"

	"github.com/heureka-project/heureka/ctl"
)

func runPick(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	opts := ctl.DefaultPickOptions()
	fs := newFlagSet("pick", "pick --cluster NAME [-n 3] [--writer HOST | --rack RACK] [--exclude HOST,...] [--probe] [-o json]", `
Prints the DataNodes a writer should use for a new block, chosen as HDFS's
default placement policy does (the writer's node or rack, then another rack,
then that rack again), skipping DataNodes that are not UP, draining, over 90%
full or excluded. --probe dials each chosen node's data port first and
replaces those that do not answer. When fewer than -n can be chosen it prints
those it has, says why on stderr and exits 3.`, `Exit codes: 0 ok, 1 failure (e.g. the registry cannot be reached), 2 usage error,
3 fewer DataNodes than -n could be chosen.`, stderr)
	o.add(fs, true)
	fs.StringVar(&opts.Cluster, "cluster", "", "HDFS cluster `name`, as the agents register it (hdfs-datanode.NAME)")
	fs.IntVar(&opts.N, "n", opts.N, "how many DataNodes to choose")
	fs.StringVar(&opts.Writer, "writer", "", "the writing client's `host` name or IP address")
	fs.StringVar(&opts.Rack, "rack", "", "the writer's `rack`, when the writer is not a DataNode")
	exclude := fs.String("exclude", "", "`hosts` (names, IPs or instance IDs), comma-separated, never to choose")
	fs.BoolVar(&opts.Probe, "probe", false, "dial each chosen DataNode's data port and replace those that do not answer")
	fs.DurationVar(&opts.ProbeTimeout, "probe-timeout", opts.ProbeTimeout, "how long one --probe dial may take")
	fs.Float64Var(&opts.Fullness, "fullness", opts.Fullness, "skip DataNodes more used than this fraction")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	opts.Exclude = commaList(*exclude)
	fields := map[string]string{"Cluster": "--cluster", "N": "-n", "Writer": "--writer", "Fullness": "--fullness", "ProbeTimeout": "--probe-timeout"}
	if err := opts.Validate(); err != nil {
		return flagError(err, fields)
	}
	return o.run(stdout, stderr, fields, func(c *ctl.Conn, out ctl.Output) error { return ctl.Pick(ctx, c, out, opts) })
}

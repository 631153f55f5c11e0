package main

import (
	"context"
	"io"

	"github.com/heureka-project/heureka/ctl"
)

func runPick(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opFlags
	opts := ctl.DefaultPickOptions()
	fs := newFlagSet("pick", "pick --cluster NAME [-n 3] [--writer HOST | --rack RACK | --role ROLE [--state S] [--list]] [--exclude HOST,...] [--probe] [-o json]", `
Prints the DataNodes a writer should use for a new block, chosen as HDFS's
default placement policy does (the writer's node or rack, then another rack,
then that rack again), skipping DataNodes that are not UP, draining, over 90%
full or excluded. --probe dials each chosen node's data port first and
replaces those that do not answer. When fewer than -n can be chosen it prints
those it has, says why on stderr and exits 3.
With --role ROLE (yarn-resourcemanager, hbase-master, kafka-broker, ...) it
prints that role's UP members instead, every one unless -n says: the lead
first (the active ResourceManager, the controller, ...), then one rack after
another; --state active keeps one role state, --list prints host:port,... for
bootstrap.servers or a ZooKeeper connect string.`, `Exit codes: 0 ok, 1 failure (e.g. the registry cannot be reached), 2 usage error,
3 fewer DataNodes or members than -n (or none) could be chosen.`, stderr)
	o.add(fs, true)
	fs.StringVar(&opts.Cluster, "cluster", "", "cluster `name`, as the agents register it (hdfs-datanode.NAME, ROLE.NAME)")
	fs.IntVar(&opts.N, "n", opts.N, "how many to choose (default 3 DataNodes, or every member of --role)")
	fs.StringVar(&opts.Writer, "writer", "", "the writing client's `host` name or IP address")
	fs.StringVar(&opts.Rack, "rack", "", "the writer's `rack`, when the writer is not a DataNode")
	fs.StringVar(&opts.Role, "role", "", "choose members of this `role` instead of DataNodes, the lead first")
	fs.StringVar(&opts.State, "state", "", "with --role: only members in this role `state` (active, leader, controller, ...)")
	fs.BoolVar(&opts.List, "list", false, "with --role: print only the addresses, host:port comma-separated")
	exclude := fs.String("exclude", "", "`hosts` (names, IPs or instance IDs), comma-separated, never to choose")
	fs.BoolVar(&opts.Probe, "probe", false, "dial each chosen DataNode's data port (a member's port) and replace those that do not answer")
	fs.DurationVar(&opts.ProbeTimeout, "probe-timeout", opts.ProbeTimeout, "how long one --probe dial may take")
	fs.Float64Var(&opts.Fullness, "fullness", opts.Fullness, "skip DataNodes more used than this fraction")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	opts.Exclude = commaList(*exclude)
	fields := map[string]string{"Cluster": "--cluster", "N": "-n", "Writer": "--writer", "Fullness": "--fullness", "ProbeTimeout": "--probe-timeout",
		"Role": "--role", "State": "--state"}
	if err := opts.Validate(); err != nil {
		return flagError(err, fields)
	}
	return o.run(stdout, stderr, fields, func(c *ctl.Conn, out ctl.Output) error { return ctl.Pick(ctx, c, out, opts) })
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/heureka-project/heureka/ctl"
	"github.com/heureka-project/heureka/hdfs"
)

// runTopology is `heureka topology HOST|IP ...`, Hadoop's topology script
// (ctl.Topology). Only a bad flag exits non-zero.
func runTopology(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c connFlags
	fs := newFlagSet("topology", "topology [flags] HOST|IP ...", fmt.Sprintf(`
Prints the rack of each argument on a line of its own, in argument order,
%[1]s for a host the registry does not know, as Hadoop's topology script
protocol requires. Racks come from the registered HDFS agents' rack metadata,
matched by IP address or host name. If the registry cannot be read, the cache
file answers (it keeps each node the registry answered for by both its name
and its address, as Hadoop asks with either); if that fails too, every
argument gets %[1]s. Problems go to stderr. A registry that answers but
knows none of the hosts as an HDFS node (it has just restarted) is not
believed over a cache file that knows some. The registry is asked once per
call for just these hosts (GET /v1/instances?host=...).

Hadoop runs the script with the addresses as its only arguments, so point
net.topology.script.file.name at a wrapper such as:

	#!/bin/sh
	exec heureka topology --registry http://reg1:8761/eureka,http://reg2:8761/eureka "$@"`, hdfs.DefaultRack),
		"Exit codes: 0 whatever the registry and the cache file answer, 2 for a bad flag.", stderr)
	c.add(fs, 3*time.Second)
	var o ctl.TopologyOptions
	fs.StringVar(&o.Cluster, "cluster", "", "only this HDFS cluster's nodes (hdfs-datanode.NAME); default: any cluster's")
	fs.StringVar(&o.CachePath, "cache", "", fmt.Sprintf("cache `file` of the racks the registry answered (at most %d entries), used when the registry cannot be read (default: heureka/topology.json under the user cache directory)", hdfs.DefaultRackMemorySize))
	logLevel := fs.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	hosts, err := parseArgs(fs, args)
	if err != nil || len(hosts) == 0 {
		return err
	}
	if o.Logger, err = newLogger(stderr, "text", *logLevel); err != nil {
		return &usageError{"topology: " + err.Error()}
	}
	o.Logger = o.Logger.With("subsystem", "topology")
	conn, err := c.open()
	if err != nil {
		return err
	}
	defer conn.Close()
	if o.CachePath == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			o.CachePath = filepath.Join(dir, "heureka", "topology.json")
		} else {
			o.Logger.Warn("no user cache directory; running without a cache file (give --cache)", "err", err)
		}
	}
	return ctl.Topology(ctx, conn, stdout, o, hosts)
}

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/heureka-project/heureka/demo"
)

const demoHelp = `
Starts, in this one process and on loopback only:

  - three registry servers, peers of each other (--base-port, +1, +2), each
    also serving DNS for the zone heureka. (--dns-port, +1, +2);
  - a SIMULATED HDFS cluster (not Hadoop: heureka's simulator serves /jmx in
    Hadoop's shape and holds a data/RPC port): two NameNodes, one active and
    one standby, and --datanodes DataNodes spread over three racks;
  - a heureka agent beside each simulated daemon, registering it with the
    registry and reporting it DOWN when it stops answering;
  - with --roles, SIMULATED YARN, HBase, Elasticsearch, ZooKeeper and Kafka
    clusters too (two ResourceManagers, two HBase masters and three
    RegionServers, three nodes, three servers, three kfake brokers), each
    member with an agent of its role.

It prints the dashboard's URL and commands to try: kill a DataNode, fail the
NameNode over, drain a node, fail each other system over. Ctrl-C drains the
agents and stops everything.
`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := demo.DefaultConfig()
	fs := newFlagSet("demo", "demo [flags]", demoHelp, exitsProgram, stderr)
	fs.IntVar(&cfg.BasePort, "base-port", cfg.BasePort, "`port` of the first registry server; the others use the next two (0: any free ports)")
	fs.IntVar(&cfg.DNSPort, "dns-port", cfg.DNSPort, "`port` of the first registry server's DNS (UDP and TCP); the others use the next two (free ports with --base-port 0)")
	fs.IntVar(&cfg.DataNodes, "datanodes", cfg.DataNodes, "how many simulated DataNodes to run (1-50)")
	fs.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "cluster `name` (applications hdfs-datanode.NAME, hdfs-namenode.NAME, ROLE.NAME)")
	fs.BoolVar(&cfg.Roles, "roles", false, "also run simulated YARN, HBase, Elasticsearch, ZooKeeper and Kafka clusters, an agent beside each member")
	logLevel := fs.String("log-level", "warn", "log level of the servers, simulators and agents: debug, info, warn or error")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return flagError(err, map[string]string{"BasePort": "--base-port", "DNSPort": "--dns-port", "DataNodes": "--datanodes", "Cluster": "--cluster"})
	}
	var err error
	if cfg.Logger, err = newLogger(stderr, "text", *logLevel); err != nil {
		return &usageError{"demo: " + err.Error()}
	}

	ctx, stop := untilSignal(ctx)
	defer stop()
	d := demo.New(cfg)
	if err := d.Open(ctx); err != nil {
		d.Close(context.Background())
		return err
	}
	d.WriteIntro(stdout)
	<-ctx.Done()
	stop() // a second Ctrl-C kills the process the default way
	fmt.Fprintln(stdout, "\nStopping: draining the agents (OUT_OF_SERVICE, then deregister), then the simulators and the registry servers…")
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Close(cctx); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Stopped; nothing is left running.")
	return nil
}

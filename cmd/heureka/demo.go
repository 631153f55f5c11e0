package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/heureka-project/heureka/demo"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/urlcheck"
)

const demoHelp = `
Starts, in this one process and on loopback only:

  - three registry servers, peers of each other (--base-port, +1, +2), each
    also serving DNS for the zone heureka. (--dns-port, +1, +2);
  - a SIMULATED HDFS cluster (not Hadoop: heureka's simulator serves /jmx in
    Hadoop's shape and holds a data/RPC port): two NameNodes, one active and
    one standby, and --datanodes DataNodes spread over three racks;
  - a heureka agent beside each simulated daemon, registering it with the
    registry and reporting it DOWN when it stops answering.

It prints the dashboard's URL and commands to try: kill a DataNode, fail the
NameNode over, drain a node. Ctrl-C drains the agents and stops everything.
`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := demo.DefaultConfig()
	fs := newFlagSet("demo", "demo [flags]", demoHelp, exitsProgram, stderr)
	fs.IntVar(&cfg.BasePort, "base-port", cfg.BasePort, "`port` of the first registry server; the others use the next two (0: any free ports)")
	fs.IntVar(&cfg.DNSPort, "dns-port", cfg.DNSPort, "`port` of the first registry server's DNS (UDP and TCP); the others use the next two (free ports with --base-port 0)")
	fs.IntVar(&cfg.DataNodes, "datanodes", cfg.DataNodes, "how many simulated DataNodes to run (1-50)")
	fs.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "HDFS cluster `name` (applications hdfs-datanode.NAME, hdfs-namenode.NAME)")
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
	printDemoIntro(stdout, d, cfg.Cluster)
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

// printDemoIntro says what runs and what to try.
func printDemoIntro(w io.Writer, d *demo.Cluster, cluster string) {
	root := func(i int) string { return urlcheck.Root(d.URLs()[i]) }
	ctl := func(n *demo.Node) string { return "http://" + n.Sim.ControlAddr() + "/sim" }
	fmt.Fprintf(w, "heureka demo: 3 registry peers and a SIMULATED HDFS cluster %q (not Hadoop), all on loopback.\n\n", cluster)
	fmt.Fprintf(w, "  Dashboard:  %s/   (every peer has one: %s/, %s/)\n", root(0), root(1), root(2))
	fmt.Fprintf(w, "  Registry:   export HEUREKA_REGISTRY=%s\n", strings.Join(d.URLs(), ","))
	dnsPort := func(i int) string { _, p, _ := net.SplitHostPort(d.DNSAddrs()[i]); return p }
	fmt.Fprintf(w, "  DNS:        dig @127.0.0.1 -p %s hdfs-namenode.%s.service.heureka   (every peer answers: ports %s, %s)\n\n",
		dnsPort(0), cluster, dnsPort(1), dnsPort(2))
	fmt.Fprintf(w, "  %-5s %-14s %-14s %-8s %s\n", "NODE", "RACK", "ROLE", "", "SIMULATOR CONTROL")
	for _, n := range d.Nodes() {
		st := n.Sim.State()
		role := "DataNode"
		if st.Role == hdfs.RoleNameNode {
			role = "NameNode"
		}
		fmt.Fprintf(w, "  %-5s %-14s %-14s %-8s %s\n", n.Name, n.Rack, role, string(st.HAState), ctl(n))
	}
	dn := d.Node("dn2")
	if dn == nil {
		dn = d.Node("dn1")
	}
	drain := d.Node("dn1")
	nn1, nn2 := d.Node("nn1"), d.Node("nn2")
	fmt.Fprintf(w, `
Try, in another terminal (with HEUREKA_REGISTRY exported as above):

  heureka apps
  heureka instances hdfs-datanode.%[1]s
  heureka watch                                   # live changes; or heureka events

  # Kill DataNode %[6]s: its agent reports it DOWN within about a second.
  curl -X POST %[2]s/stop
  # Bring it back: UP again at the next probe.
  curl -X POST %[2]s/start

  # Fail the NameNode over: nn1 steps down, nn2 becomes active. DNS, as
  # Hadoop and Kafka clients ask it, follows within a second.
  dig @127.0.0.1 -p %[7]s active.hdfs-namenode.%[1]s.service.heureka SRV +short
  curl -X POST '%[3]s/ha?state=standby'
  curl -X POST '%[4]s/ha?state=active'
  dig @127.0.0.1 -p %[7]s active.hdfs-namenode.%[1]s.service.heureka SRV +short

  # Drain a DataNode (clients stop choosing it), then put it back.
  heureka status set %[5]s OUT_OF_SERVICE
  heureka status clear %[5]s --value UP

  # Fill DataNode %[6]s past the 90%% placement threshold.
  curl -X POST '%[2]s/set?used=3.9T'

  # Choose DataNodes for a write, as HDFS would, from the registry.
  heureka pick --cluster %[1]s -n 3 --writer dn1.%[1]s

  # WebHDFS that follows the active NameNode (the simulators speak it too).
  heureka gateway --cluster %[1]s --listen 127.0.0.1:14000 &
  curl -i -X PUT 'http://127.0.0.1:14000/webhdfs/v1/tmp/a.txt?op=CREATE&user.name=me'

  # Forward failures to a webhook (or Alertmanager with --alertmanager URL).
  heureka alert --webhook http://127.0.0.1:9000/hook

Ctrl-C stops everything (agents drain and deregister first).
`, cluster, ctl(dn), ctl(nn1), ctl(nn2), drain.ID, dn.Name, dnsPort(0))
}

package demo

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/roles"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/urlcheck"
)

// WriteIntro writes what runs and what to try, for `heureka demo`: the
// dashboard, the line to export, the DNS port, every simulated daemon
// with its control URL, and commands to kill a DataNode, fail the
// NameNode over, drain a node and, with Config.Roles, fail each other
// system over. Its last line begins "Ctrl-C stops everything".
func (d *Cluster) WriteIntro(w io.Writer) {
	cluster := d.cfg.Cluster
	root := func(i int) string { return urlcheck.Root(d.URLs()[i]) }
	ctl := func(n *Node) string { return "http://" + n.Sim.ControlAddr() + "/sim" }
	what := "a SIMULATED HDFS cluster"
	if len(d.systems) > 0 {
		what = "SIMULATED HDFS, YARN, HBase, Elasticsearch, ZooKeeper and Kafka clusters"
	}
	fmt.Fprintf(w, "heureka demo: 3 registry peers and %s %q (heureka's simulators, not the real systems), all on loopback.\n\n", what, cluster)
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
`, cluster, ctl(dn), ctl(nn1), ctl(nn2), drain.ID, dn.Name, dnsPort(0))
	if len(d.systems) > 0 {
		d.writeSystems(w, dnsPort(0))
	}
	fmt.Fprintln(w, "\nCtrl-C stops everything (agents drain and deregister first).")
}

// writeSystems writes the other systems' members, and how to fail each
// system over: make another member the lead, or kill the lead.
func (d *Cluster) writeSystems(w io.Writer, dnsPort string) {
	cluster := d.cfg.Cluster
	fmt.Fprintf(w, "\nThe other systems (--roles), each SIMULATED (sim.Cluster: the real endpoints' shapes, not the real daemons; Kafka's is kfake):\n\n")
	fmt.Fprintf(w, "  %-14s %-9s %-21s %-13s %-16s %s\n", "SYSTEM", "MEMBER", "ROLE", "RACK", "STATE", "ADDRESS")
	for _, s := range d.systems {
		st := s.Sim.State()
		for i, m := range st.Members {
			fmt.Fprintf(w, "  %-14s %-9s %-21s %-13s %-16s %s\n", s.Name, m.Name, m.Role, s.Members[i].Rack, m.State, m.Addr)
		}
	}
	fmt.Fprintf(w, "\nFail each over (each POST answers with the cluster's new state; GET CONTROL/sim lists every action):\n")
	for _, s := range d.systems {
		st := s.Sim.State()
		lead, other, role := leadAndOther(st)
		if lead == "" {
			continue
		}
		ctl := "http://" + st.Control + "/sim"
		app := role.Name + "." + cluster
		fmt.Fprintf(w, "\n  # %s: fail over to %s (it becomes %s, %s steps down), or kill %s, now %s\n", role.System, other, role.Lead(), lead, lead, role.Lead())
		fmt.Fprintf(w, "  # (POST %s/start?member=%s brings it back). The STATE column follows within a second.\n", ctl, lead)
		fmt.Fprintf(w, "  curl -X POST '%s/role?member=%s&state=%s'\n", ctl, other, role.Lead())
		fmt.Fprintf(w, "  curl -X POST '%s/stop?member=%s'\n", ctl, lead)
		fmt.Fprintf(w, "  heureka instances %s\n", app)
		if s.Name == sim.SystemYARN {
			fmt.Fprintf(w, "  dig @127.0.0.1 -p %s %s.%s.service.heureka SRV +short\n", dnsPort, role.Lead(), app)
		}
	}
	fmt.Fprintf(w, `
  # A bootstrap list for Kafka clients (bootstrap.servers), from the registry:
  heureka pick --cluster %[1]s --role kafka-broker --list
  # The active ResourceManager:
  heureka pick --cluster %[1]s --role yarn-resourcemanager --state active
`, cluster)
}

// leadAndOther returns a simulated cluster's lead member, another member
// of the same role, and that role, from the role states its members
// report; "" when none leads.
func leadAndOther(st sim.ClusterState) (lead, other string, role roles.Role) {
	for _, m := range st.Members {
		r, ok := roles.Lookup(m.Role)
		if ok && r.IsLead(m.State) {
			lead, role = m.Name, r
			break
		}
	}
	for _, m := range st.Members {
		if lead != "" && m.Role == role.Name && m.Name != lead {
			return lead, m.Name, role
		}
	}
	return "", "", roles.Role{}
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/heureka-project/heureka/ctl"
)

const hadoopHelp = `Usage:

	heureka hadoop hdfs-site --cluster NAME --nameservice NS [flags]
	heureka hadoop hosts --cluster NAME [--format include|exclude|json] [flags]

hdfs-site prints the HA client properties (dfs.nameservices,
dfs.ha.namenodes.NS, dfs.namenode.rpc-address.NS.ID, the failover proxy
provider) for the cluster's registered NameNodes. Each NameNode keeps its
own ID across failovers: the one its agent learnt from Hadoop's
configuration, else the first label of its host name. Only the order of
dfs.ha.namenodes.NS follows the HA state, the active NameNode first.

hosts prints the DataNode host files for dfs.hosts / dfs.hosts.exclude, or the JSON
hosts file of CombinedHostFileManager. A DataNode whose registered status (metadata)
is DECOMMISSION_INPROGRESS or DECOMMISSIONED is excluded (JSON: DECOMMISSIONED);
ENTERING_MAINTENANCE or IN_MAINTENANCE is IN_MAINTENANCE in the JSON file and
included in the plain files. Eureka statuses (DOWN, OUT_OF_SERVICE) do not
decommission anything. After writing the files, run 'hdfs dfsadmin -refreshNodes'.

Both read the registry as every operator command does ('heureka hadoop
hdfs-site -h' lists the flags).

` + exitsTool + "\n"

func runHadoop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, hadoopHelp)
		return &usageError{"hadoop: name a subcommand: hdfs-site or hosts"}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, hadoopHelp)
		return flag.ErrHelp
	case "hdfs-site":
		return runHDFSSite(ctx, args[1:], stdout, stderr)
	case "hosts":
		return runHosts(ctx, args[1:], stdout, stderr)
	}
	return &usageError{fmt.Sprintf("hadoop: unknown subcommand %q: want hdfs-site or hosts; see 'heureka hadoop -h'", args[0])}
}

// hadoopFields maps the hadoop commands' options to their flags.
var hadoopFields = map[string]string{"Cluster": "--cluster", "Nameservice": "--nameservice", "Format": "--format"}

// hadoopFlags is the flag set of `heureka hadoop SUB`, with the connection
// flags and --cluster (of role, hdfs-ROLE.NAME) defined on it.
func hadoopFlags(sub, synopsis, description, role string, stderr io.Writer) (*flag.FlagSet, *opFlags, *string) {
	var o opFlags
	fs := newFlagSet("hadoop "+sub, "hadoop "+sub+" "+synopsis, description, exitsTool, stderr)
	o.add(fs, false)
	cluster := fs.String("cluster", "", "HDFS cluster `name`, as the agents register it (hdfs-"+role+".NAME)")
	return fs, &o, cluster
}

func runHDFSSite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o, cluster := hadoopFlags("hdfs-site", "--cluster NAME --nameservice NS [flags]",
		"Prints an hdfs-site.xml with the HA client properties of the cluster's NameNodes.", "namenode", stderr)
	ns := fs.String("nameservice", "", "the HDFS nameservice `ID`, e.g. ns1 (dfs.nameservices)")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	return o.run(stdout, stderr, hadoopFields, func(c *ctl.Conn, out ctl.Output) error { return ctl.HDFSSite(ctx, c, out, *cluster, *ns) })
}

func runHosts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o, cluster := hadoopFlags("hosts", "--cluster NAME [--format include|exclude|json] [flags]",
		"Prints the cluster's DataNode hosts file. See 'heureka hadoop -h' for the mapping.", "datanode", stderr)
	format := fs.String("format", "include", "`format` to print: include (dfs.hosts), exclude (dfs.hosts.exclude) or json (CombinedHostFileManager)")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	return o.run(stdout, stderr, hadoopFields, func(c *ctl.Conn, out ctl.Output) error { return ctl.Hosts(ctx, c, out, *cluster, *format) })
}

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

// registryEnvVar names the environment variable that gives the registry URLs
// when --registry is not set.
const registryEnvVar = "HEUREKA_REGISTRY"

func runHadoop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, `Usage:

	heureka hadoop hdfs-site --cluster NAME --nameservice NS [--registry URL[,URL]]
	heureka hadoop hosts --cluster NAME [--format include|exclude|json] [--registry URL[,URL]]

hdfs-site prints the HA client properties (dfs.nameservices, dfs.ha.namenodes.NS,
dfs.namenode.rpc-address.NS.nnN, the failover proxy provider) for the cluster's
registered NameNodes, the active one first.

hosts prints the DataNode host files for dfs.hosts / dfs.hosts.exclude, or the JSON
hosts file of CombinedHostFileManager. A DataNode whose registered status (metadata)
is DECOMMISSION_INPROGRESS or DECOMMISSIONED is excluded (JSON: DECOMMISSIONED);
ENTERING_MAINTENANCE or IN_MAINTENANCE is IN_MAINTENANCE in the JSON file and
included in the plain files. Eureka statuses (DOWN, OUT_OF_SERVICE) do not
decommission anything. After writing the files, run 'hdfs dfsadmin -refreshNodes'.

The registry URLs come from --registry or $%s.
`, registryEnvVar)
	}
	if len(args) == 0 {
		usage(stderr)
		return &usageError{"hadoop: name a subcommand: hdfs-site or hosts"}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stderr)
		return flag.ErrHelp
	case "hdfs-site":
		return runHDFSSite(ctx, args[1:], stdout, stderr)
	case "hosts":
		return runHosts(ctx, args[1:], stdout, stderr)
	}
	usage(stderr)
	return &usageError{fmt.Sprintf("hadoop: unknown subcommand %q", args[0])}
}

// hadoopRegistryFlags are the flags every registry-reading command shares.
type hadoopRegistryFlags struct {
	registry string
	timeout  time.Duration
	cluster  string
}

func (r *hadoopRegistryFlags) add(fs *flag.FlagSet, timeout time.Duration) {
	fs.StringVar(&r.registry, "registry", "", "comma-separated registry base `URLs`, e.g. http://127.0.0.1:8761/eureka (default $"+registryEnvVar+")")
	fs.DurationVar(&r.timeout, "timeout", timeout, "how long to wait for the registry")
	fs.StringVar(&r.cluster, "cluster", "", "HDFS cluster `name`, as the agents register it (hdfs-datanode.NAME)")
}

// hadoopFlags is the flag set of `heureka hadoop NAME`, with the registry
// flags on it.
func hadoopFlags(name, synopsis, description string, stderr io.Writer) (*flag.FlagSet, *hadoopRegistryFlags) {
	var rf hadoopRegistryFlags
	fs := commandFlags("hadoop "+name, stderr)
	rf.add(fs, 10*time.Second)
	setUsage(fs, "hadoop "+name+" "+synopsis, description)
	return fs, &rf
}

// urls returns the registry URLs from the flag, else the environment.
func (r *hadoopRegistryFlags) urls() []string {
	v := r.registry
	if v == "" {
		v = os.Getenv(registryEnvVar)
	}
	return commaList(v)
}

func commaList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// newOneShotClient builds a client for one-shot commands: short
// timeouts, one pass over the URLs, bounded by the caller's context.
func newOneShotClient(urls []string, timeout time.Duration, logger *slog.Logger) (*client.Client, error) {
	if len(urls) == 0 {
		return nil, &usageError{"no registry: give --registry URL[,URL] or set $" + registryEnvVar}
	}
	cfg := client.DefaultConfig()
	cfg.URLs = urls
	cfg.ConnectTimeout = min(cfg.ConnectTimeout, timeout)
	cfg.ReadTimeout = min(cfg.ReadTimeout, timeout)
	cfg.Rounds = 1
	cfg.Logger = logger
	c, err := client.New(cfg)
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	return c, nil
}

// hdfsNodes returns the registered instances of role in cluster, or of
// every role and cluster when role or cluster is empty.
func hdfsNodes(apps *heureka.Applications, role hdfs.Role, cluster string) []*heureka.Instance {
	var out []*heureka.Instance
	for _, a := range apps.Apps {
		r, c, ok := hdfs.ParseAppName(a.Name)
		if !ok || (role != "" && r != role) || (cluster != "" && c != strings.ToLower(cluster)) {
			continue
		}
		out = append(out, a.Instances...)
	}
	return out
}

// fetchHDFSNodes reads the registry once and returns role's instances in
// cluster.
func fetchHDFSNodes(ctx context.Context, rf *hadoopRegistryFlags, role hdfs.Role, stderr io.Writer) ([]*heureka.Instance, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	c, err := newOneShotClient(rf.urls(), rf.timeout, logger)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, rf.timeout)
	defer cancel()
	apps, err := c.Apps(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the registry: %w", err)
	}
	return hdfsNodes(apps, role, rf.cluster), nil
}

func runHDFSSite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, rf := hadoopFlags("hdfs-site", "--cluster NAME --nameservice NS [flags]", "Prints an hdfs-site.xml with the HA client properties of the cluster's NameNodes.", stderr)
	ns := fs.String("nameservice", "", "the HDFS nameservice `ID`, e.g. ns1 (dfs.nameservices)")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	if rf.cluster == "" || *ns == "" {
		return &usageError{"hadoop hdfs-site: --cluster and --nameservice are required"}
	}
	nns, err := fetchHDFSNodes(ctx, rf, hdfs.RoleNameNode, stderr)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := hdfs.HDFSSiteHA(&buf, *ns, nns); err != nil {
		if heureka.ErrorCode(err) == heureka.ENOTFOUND {
			return fmt.Errorf("no NameNode of cluster %q is registered (%s)", rf.cluster, hdfs.AppName(hdfs.RoleNameNode, rf.cluster))
		}
		return err
	}
	if res, _ := hdfs.ResolveNameNodes(nns); res.Conflict != "" {
		fmt.Fprintf(stderr, "heureka: warning: %s\n", res.Conflict)
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

func runHosts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, rf := hadoopFlags("hosts", "--cluster NAME [--format include|exclude|json] [flags]", "Prints the cluster's DataNode hosts file. See 'heureka hadoop -h' for the mapping.", stderr)
	format := fs.String("format", "include", "what to print: include (dfs.hosts), exclude (dfs.hosts.exclude) or json (CombinedHostFileManager)")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	render := map[string]func(io.Writer, []*heureka.Instance) error{
		"include": hdfs.HostsInclude, "exclude": hdfs.HostsExclude, "json": hdfs.HostsJSON,
	}[*format]
	switch {
	case rf.cluster == "":
		return &usageError{"hadoop hosts: --cluster is required"}
	case render == nil:
		return &usageError{fmt.Sprintf("hadoop hosts: --format %q is not one of include, exclude, json", *format)}
	}
	dns, err := fetchHDFSNodes(ctx, rf, hdfs.RoleDataNode, stderr)
	if err != nil {
		return err
	}
	if len(dns) == 0 && *format != "exclude" {
		// An empty include file makes the NameNode refuse every DataNode
		// after a refresh: never print one by accident.
		return fmt.Errorf("no DataNode of cluster %q is registered (%s)", rf.cluster, hdfs.AppName(hdfs.RoleDataNode, rf.cluster))
	}
	var buf bytes.Buffer
	if err := render(&buf, dns); err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

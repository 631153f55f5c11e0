package ctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

// hdfsNodes reads the registered instances of role in cluster: none when
// the registry has no such application.
func (c *Conn) hdfsNodes(ctx context.Context, role hdfs.Role, cluster string) ([]*heureka.Instance, error) {
	app := hdfs.AppName(role, cluster)
	if cluster == "" {
		return nil, heureka.InvalidConfig("Cluster", nil, "is required: the name the agents register (%s)", hdfs.AppName(role, "NAME"))
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	a, err := c.client.Application(ctx, app)
	if errors.Is(err, client.ErrNotRegistered) {
		return nil, nil
	}
	if err != nil {
		return nil, c.Explain(err, "read "+app)
	}
	return a.Instances, nil
}

// HDFSSite writes an hdfs-site.xml with the HA client properties of the
// cluster's registered NameNodes for nameservice (hdfs.HDFSSiteHA): each
// NameNode under its own ID, the active one first in dfs.ha.namenodes.
// Two NameNodes that both claim to be active are written all the same,
// with a warning on out.Notes.
func HDFSSite(ctx context.Context, c *Conn, out Output, cluster, nameservice string) error {
	if !hdfs.ValidHAID(nameservice) {
		return heureka.InvalidConfig("Nameservice", nameservice, "want the HDFS nameservice ID: 1-64 letters, digits, '-' or '_'")
	}
	nns, err := c.hdfsNodes(ctx, hdfs.RoleNameNode, cluster)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := hdfs.HDFSSiteHA(&buf, nameservice, nns); err != nil {
		if heureka.ErrorCode(err) == heureka.ENOTFOUND {
			return fmt.Errorf("no NameNode of cluster %q is registered (%s)", cluster, hdfs.AppName(hdfs.RoleNameNode, cluster))
		}
		return err
	}
	if res, _ := hdfs.ResolveNameNodes(nns); res.Conflict != "" {
		fmt.Fprintf(out.Notes, "heureka: warning: %s\n", res.Conflict)
	}
	_, err = out.W.Write(buf.Bytes())
	return err
}

// hostsFormats are the files Hosts writes, by name.
var hostsFormats = map[string]func(io.Writer, []*heureka.Instance) error{
	"include": hdfs.HostsInclude, // dfs.hosts
	"exclude": hdfs.HostsExclude, // dfs.hosts.exclude
	"json":    hdfs.HostsJSON,    // CombinedHostFileManager's
}

// Hosts writes the cluster's DataNode hosts file in format: include
// (dfs.hosts), exclude (dfs.hosts.exclude) or json (the JSON hosts file of
// CombinedHostFileManager). It never writes an empty include file, which
// would make the NameNode refuse every DataNode after a refresh: no
// DataNode registered is an error for every format but exclude.
func Hosts(ctx context.Context, c *Conn, out Output, cluster, format string) error {
	render := hostsFormats[format]
	if render == nil {
		return heureka.InvalidConfig("Format", format, "is not one of include, exclude, json")
	}
	dns, err := c.hdfsNodes(ctx, hdfs.RoleDataNode, cluster)
	if err != nil {
		return err
	}
	if len(dns) == 0 && format != "exclude" {
		return fmt.Errorf("no DataNode of cluster %q is registered (%s)", cluster, hdfs.AppName(hdfs.RoleDataNode, cluster))
	}
	var buf bytes.Buffer
	if err := render(&buf, dns); err != nil {
		return err
	}
	_, err = out.W.Write(buf.Bytes())
	return err
}

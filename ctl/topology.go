package ctl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/internal/atomicfile"
)

// TopologyOptions says where Topology finds racks besides the registry.
type TopologyOptions struct {
	// Cluster, when set, keeps only that HDFS cluster's nodes.
	Cluster string
	// CachePath is the cache file of the racks the registry answered
	// before (hdfs.RackMemory), read when the registry cannot answer;
	// "" keeps none.
	CachePath string
	// Logger is told which source answered and what went wrong; nil
	// discards it.
	Logger *slog.Logger
}

// Topology is Hadoop's topology script (net.topology.script.file.name):
// it writes the rack of each of hosts on a line of its own, in order,
// hdfs.DefaultRack for a node nobody knows. It never fails the NameNode:
// the racks come from the registry (one lookup of just these hosts),
// else the cache file, else every host is hdfs.DefaultRack, as
// hdfs.AnswerRacks decides; only a failure to write to w is an error.
func Topology(ctx context.Context, c *Conn, w io.Writer, o TopologyOptions, hosts []string) error {
	if len(hosts) == 0 {
		return nil
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return hdfs.WriteRacks(w, topologyRacks(ctx, c, hosts, o))
}

// topologyRacks answers hosts by hdfs.AnswerRacks, from the registry's
// host lookup and the cache file, which holds only the racks answered
// before, and says on the log which answered.
func topologyRacks(ctx context.Context, c *Conn, hosts []string, o TopologyOptions) []string {
	log := o.Logger
	nodes, err := c.hdfsOnHosts(ctx, hosts, o.Cluster, log)
	read := err == nil
	if err != nil {
		log.Error("cannot read the registry", "err", err)
	}
	mem, age, err := readRackCache(o.CachePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Error("cannot read the cache file", "path", o.CachePath, "err", err)
	}
	if mem == nil && o.CachePath != "" {
		mem = &hdfs.RackMemory{Max: hdfs.DefaultRackMemorySize}
	}
	racks, src, learnt := hdfs.AnswerRacks(hosts, nodes, mem)
	if learnt {
		if err := writeRackCache(o.CachePath, mem); err != nil {
			log.Warn("cannot write the cache file", "path", o.CachePath, "err", err)
		}
	}
	switch {
	case src == hdfs.RacksFromMemory && read:
		log.Warn("the registry knows no HDFS node among these hosts; answering from the cache file", "path", o.CachePath, "age", age)
	case src == hdfs.RacksFromMemory:
		log.Warn("answering from the cache file", "path", o.CachePath, "age", age)
	case src == hdfs.RacksDefault && read:
		log.Warn("the registry knows no HDFS node among these hosts; answering " + hdfs.DefaultRack)
	case src == hdfs.RacksDefault:
		log.Error("no registry and no cache file: answering " + hdfs.DefaultRack + " for every host")
	}
	return racks
}

// hdfsOnHosts returns the HDFS instances (of cluster, when set) among
// hosts, by client.OnHosts: one lookup request whatever the registry's
// size, or a full read of a server without the lookup (plain Eureka).
func (c *Conn) hdfsOnHosts(ctx context.Context, hosts []string, cluster string, log *slog.Logger) ([]*heureka.Instance, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	found, scanned, err := c.client.OnHosts(ctx, hosts, "")
	if err != nil {
		return nil, err
	}
	if scanned {
		log.Info("the registry has no host lookup; read the whole registry")
	}
	var out []*heureka.Instance
	for _, in := range found {
		if _, cl, ok := hdfs.ParseAppName(in.App); ok && (cluster == "" || cl == strings.ToLower(cluster)) {
			out = append(out, in)
		}
	}
	return out, nil
}

// readRackCache reads the cache file and says how old it is; no path, or
// none there, is an error wrapping fs.ErrNotExist.
func readRackCache(path string) (*hdfs.RackMemory, time.Duration, error) {
	if path == "" {
		return nil, 0, fs.ErrNotExist
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var age time.Duration
	if st, err := f.Stat(); err == nil {
		age = time.Since(st.ModTime()).Round(time.Second)
	}
	m, err := hdfs.ReadRackMemory(f, hdfs.DefaultRackMemorySize)
	return m, age, err
}

// writeRackCache replaces the cache file with mem, atomically.
func writeRackCache(path string, mem *hdfs.RackMemory) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	if _, err := mem.WriteTo(&b); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// runTopology is `heureka topology HOST|IP ...`, Hadoop's topology script
// (net.topology.script.file.name): one rack per argument, in order,
// hdfs.DefaultRack for a node the registry does not know. It never fails
// the NameNode: when neither the registry nor the cache file can be read
// it answers the default rack for every argument and exits 0, and says
// what went wrong on stderr. Only a bad flag exits non-zero.
func runTopology(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var rf hadoopRegistryFlags
	fset := commandFlags("topology", stderr)
	rf.add(fset, 3*time.Second)
	cache := fset.String("cache", "", fmt.Sprintf("cache `file` of the racks the registry answered (at most %d hosts), used when the registry cannot be read (default: heureka/topology.json under the user cache directory)", hdfs.DefaultRackMemorySize))
	logLevel := fset.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	setUsage(fset, "topology [flags] HOST|IP ...", fmt.Sprintf(`
Prints the rack of each argument on a line of its own, in argument order,
%[1]s for a host the registry does not know, as Hadoop's topology script
protocol requires. Racks come from the registered HDFS agents' rack metadata,
matched by IP address or host name. If the registry cannot be read, the cache
file answers; if that fails too, every argument gets %[1]s. The exit
status is 0 whatever happens (except for bad flags); problems go to stderr.
A registry that answers but knows none of the hosts as an HDFS node (it has
just restarted) is not believed over a cache file that knows some. The registry
is asked once per call for just these hosts (GET /v1/instances?host=...).

Hadoop runs the script with the addresses as its only arguments, so point
net.topology.script.file.name at a wrapper such as:

	#!/bin/sh
	exec heureka topology --registry http://reg1:8761/eureka,http://reg2:8761/eureka "$@"`, hdfs.DefaultRack))
	hosts, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	logger, err := newLogger(stderr, "text", *logLevel)
	if err != nil {
		return &usageError{"topology: " + err.Error()}
	}
	logger = logger.With("subsystem", "topology")
	if len(hosts) == 0 {
		return nil
	}
	cachePath := *cache
	if cachePath == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cachePath = filepath.Join(dir, "heureka", "topology.json")
		} else {
			logger.Warn("no user cache directory; running without a cache file (give --cache)", "err", err)
		}
	}
	return hdfs.WriteRacks(stdout, topologyRacks(ctx, &rf, hosts, cachePath, logger))
}

// topologyRacks answers hosts by hdfs.AnswerRacks, from the registry's
// host lookup and the cache file, which holds only the racks answered
// before (hdfs.RackMemory), bounded, never the registry; and says on the
// log which answered.
func topologyRacks(ctx context.Context, rf *hadoopRegistryFlags, hosts []string, cachePath string, logger *slog.Logger) []string {
	var nodes []*heureka.Instance
	read := false
	if urls := rf.urls(); len(urls) == 0 {
		logger.Error("no registry configured (--registry or $" + registryEnvVar + ")")
	} else if found, err := readTopologyRegistry(ctx, rf, urls, hosts, logger); err != nil {
		logger.Error("cannot read the registry", "err", err)
	} else {
		nodes, read = found, true
	}
	mem, age, err := readTopologyCache(cachePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		logger.Error("cannot read the cache file", "path", cachePath, "err", err)
	}
	if mem == nil && cachePath != "" {
		mem = &hdfs.RackMemory{Max: hdfs.DefaultRackMemorySize}
	}
	racks, src, learnt := hdfs.AnswerRacks(hosts, nodes, mem)
	if learnt {
		if err := writeTopologyCache(cachePath, mem); err != nil {
			logger.Warn("cannot write the cache file", "path", cachePath, "err", err)
		}
	}
	switch {
	case src == hdfs.RacksFromMemory && read:
		logger.Warn("the registry knows no HDFS node among these hosts; answering from the cache file", "path", cachePath, "age", age)
	case src == hdfs.RacksFromMemory:
		logger.Warn("answering from the cache file", "path", cachePath, "age", age)
	case src == hdfs.RacksDefault && read:
		logger.Warn("the registry knows no HDFS node among these hosts; answering " + hdfs.DefaultRack)
	case src == hdfs.RacksDefault:
		logger.Error("no registry and no cache file: answering " + hdfs.DefaultRack + " for every host")
	}
	return racks
}

// readTopologyRegistry returns the HDFS instances of the cluster among
// hosts (client.OnHosts): one lookup request (GET /v1/instances) whatever
// the registry's size, or a full fetch from a server without the lookup
// (plain Eureka).
func readTopologyRegistry(ctx context.Context, rf *hadoopRegistryFlags, urls, hosts []string, logger *slog.Logger) ([]*heureka.Instance, error) {
	c, err := newOneShotClient(urls, rf.timeout, logger)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, rf.timeout)
	defer cancel()
	found, scanned, err := c.OnHosts(ctx, hosts, "")
	if err != nil {
		return nil, err
	}
	if scanned {
		logger.Info("the registry has no host lookup; read the whole registry")
	}
	var out []*heureka.Instance
	for _, in := range found {
		if _, c, ok := hdfs.ParseAppName(in.App); ok && (rf.cluster == "" || c == strings.ToLower(rf.cluster)) {
			out = append(out, in)
		}
	}
	return out, nil
}

// readTopologyCache reads the cache file; a missing path gives an error
// wrapping fs.ErrNotExist.
func readTopologyCache(path string) (*hdfs.RackMemory, time.Duration, error) {
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

// writeTopologyCache replaces the cache file with mem, atomically.
func writeTopologyCache(path string, mem *hdfs.RackMemory) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	if _, err := mem.WriteTo(&b); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

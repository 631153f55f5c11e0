package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
	"github.com/heureka-project/heureka/hdfs"
)

func init() {
	addCommand(&command{
		name:    "topology",
		summary: "answer Hadoop's topology-script protocol from the registry",
		run:     runTopology,
	})
}

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
	cache := fset.String("cache", "", "cache `file`, written after each successful read and used when the registry cannot be read (default: heureka/topology.json under the user cache directory)")
	logLevel := fset.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	fset.Usage = func() {
		w := fset.Output()
		fmt.Fprintf(w, "Usage: heureka topology [flags] HOST|IP ...\n\n")
		fmt.Fprintf(w, "Prints the rack of each argument on a line of its own, in argument order,\n")
		fmt.Fprintf(w, "%s for a host the registry does not know, as Hadoop's topology script\n", hdfs.DefaultRack)
		fmt.Fprintf(w, "protocol requires. Racks come from the registered HDFS agents' rack metadata,\n")
		fmt.Fprintf(w, "matched by IP address or host name. If the registry cannot be read, the cache\n")
		fmt.Fprintf(w, "file answers; if that fails too, every argument gets %s. The exit\n", hdfs.DefaultRack)
		fmt.Fprintf(w, "status is 0 whatever happens (except for bad flags); problems go to stderr.\n")
		fmt.Fprintf(w, "A registry that answers but knows no HDFS node (it has just restarted) is not\n")
		fmt.Fprintf(w, "believed over a cache that does.\n\n")
		fmt.Fprintf(w, "Hadoop runs the script with the addresses as its only arguments, so point\n")
		fmt.Fprintf(w, "net.topology.script.file.name at a wrapper such as:\n\n")
		fmt.Fprintf(w, "\t#!/bin/sh\n\texec heureka topology --registry http://reg1:8761/eureka,http://reg2:8761/eureka \"$@\"\n\n")
		fmt.Fprintf(w, "Flags:\n")
		fset.PrintDefaults()
	}
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
	nodes := topologyNodes(ctx, &rf, cachePath, logger)
	return hdfs.TopologyLookup(stdout, hosts, nodes)
}

// topologyNodes returns the HDFS instances to answer from: the registry's,
// else the cache file's, else none.
func topologyNodes(ctx context.Context, rf *hadoopRegistryFlags, cachePath string, logger *slog.Logger) []*heureka.Instance {
	urls := rf.urls()
	var fromRegistry *heureka.Applications
	if len(urls) == 0 {
		logger.Error("no registry configured (--registry or $" + registryEnvVar + ")")
	} else if apps, err := readTopologyRegistry(ctx, rf, urls, logger); err != nil {
		logger.Error("cannot read the registry", "err", err)
	} else {
		fromRegistry = apps
	}
	if fromRegistry != nil && len(hdfsNodes(fromRegistry, "", rf.cluster)) > 0 {
		if cachePath != "" {
			if err := writeTopologyCache(cachePath, fromRegistry); err != nil {
				logger.Warn("cannot write the cache file", "path", cachePath, "err", err)
			}
		}
		return hdfsNodes(fromRegistry, "", rf.cluster)
	}
	if cachePath != "" {
		apps, age, err := readTopologyCache(cachePath)
		switch {
		case err == nil && len(hdfsNodes(apps, "", rf.cluster)) > 0:
			if fromRegistry != nil {
				logger.Warn("the registry knows no HDFS node; answering from the cache file", "path", cachePath, "age", age)
			} else {
				logger.Warn("answering from the cache file", "path", cachePath, "age", age)
			}
			return hdfsNodes(apps, "", rf.cluster)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			logger.Error("cannot read the cache file", "path", cachePath, "err", err)
		}
	}
	if fromRegistry != nil {
		logger.Warn("the registry knows no HDFS node; answering " + hdfs.DefaultRack)
		return nil
	}
	logger.Error("no registry and no cache file: answering " + hdfs.DefaultRack + " for every host")
	return nil
}

func readTopologyRegistry(ctx context.Context, rf *hadoopRegistryFlags, urls []string, logger *slog.Logger) (*heureka.Applications, error) {
	c, err := newOneShotClient(urls, rf.timeout, logger)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, rf.timeout)
	defer cancel()
	return c.Apps(ctx)
}

// writeTopologyCache saves the HDFS applications of apps as a Eureka JSON
// listing, atomically: a reader sees the old file or the new, never half.
func writeTopologyCache(path string, apps *heureka.Applications) error {
	keep := &heureka.Applications{VersionDelta: apps.VersionDelta}
	for _, a := range apps.Apps {
		if _, _, ok := hdfs.ParseAppName(a.Name); ok {
			keep.Apps = append(keep.Apps, a)
		}
	}
	keep.HashCode = heureka.ReconcileHashCode(keep.Apps)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return client.WriteCacheFile(path, keep)
}

func readTopologyCache(path string) (*heureka.Applications, time.Duration, error) {
	return client.ReadCacheFile(path)
}

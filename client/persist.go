package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/internal/atomicfile"
)

// loadFile seeds the sources from the cache file and publishes the result.
// It runs in Start, before any loop. Problems are logged: a cache that
// cannot use its file still works, only without a head start.
func (c *Cache) loadFile() {
	apps, age, err := ReadCacheFile(c.cfg.CacheFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.log.Debug("no cache file yet", "path", c.cfg.CacheFile)
		return
	case err != nil:
		c.log.Warn("cannot use the cache file; starting empty", "path", c.cfg.CacheFile, "err", err)
		return
	}
	n := 0
	for _, a := range apps.Apps {
		name := strings.ToUpper(a.Name)
		for _, s := range c.sources {
			if !c.visible(s, name) {
				continue
			}
			for _, in := range a.Instances {
				s.upsert(name, in)
				n++
			}
		}
	}
	for _, s := range c.sources {
		s.publish()
	}
	c.log.Info("loaded the cache file", "path", c.cfg.CacheFile, "instances", n, "age", age)
}

// persist writes the view to the cache file after changes, at most once
// per CacheFileInterval, and once more when the cache closes.
func (c *Cache) persist() {
	defer c.wg.Done()
	var written uint64 // Seq of the snapshot last written
	write := func() {
		s := c.snap.Load()
		if s.Seq() == written {
			return
		}
		if err := WriteCacheFile(c.cfg.CacheFile, s.Applications()); err != nil {
			c.log.Warn("cannot write the cache file", "path", c.cfg.CacheFile, "err", err)
			return
		}
		written = s.Seq()
	}
	if s := c.snap.Load(); s != emptySnapshot {
		written = s.Seq() // just loaded from the file
	}
	for {
		select {
		case <-c.stop:
			write()
			return
		case <-c.persistWake:
		}
		write()
		t := time.NewTimer(c.cfg.CacheFileInterval)
		select {
		case <-c.stop:
			t.Stop()
			write()
			return
		case <-t.C:
		}
	}
}

// WriteCacheFile replaces the registry cache file at path with apps, as
// Eureka JSON (the format of GET /eureka/apps), atomically: a reader, or a
// crash, sees the old file or the new one, never a mix. The Cache writes
// its CacheFile with it; other programs may keep a registry file the same
// way.
func WriteCacheFile(path string, apps *heureka.Applications) error {
	return atomicfile.Write(path, eureka.EncodeApplications(eureka.JSON, apps), 0o644)
}

// ReadCacheFile reads a file WriteCacheFile wrote, with its age (how long
// ago it was written).
func ReadCacheFile(path string) (*heureka.Applications, time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	apps, err := eureka.DecodeApplications(b, eureka.JSON)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: not a registry listing: %w", path, err)
	}
	var age time.Duration
	if fi, err := os.Stat(path); err == nil {
		age = time.Since(fi.ModTime()).Round(time.Second)
	}
	return apps, age, nil
}

package client

import (
	"errors"
	"github.com/heureka-project/heureka/internal/atomicfile"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/heureka-project/heureka/eureka"
)

// loadFile seeds the sources from the cache file and publishes the result.
// It runs in Start, before any loop. Problems are logged: a cache that
// cannot use its file still works, only without a head start.
func (c *Cache) loadFile() {
	b, err := os.ReadFile(c.cfg.CacheFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.log.Debug("no cache file yet", "path", c.cfg.CacheFile)
		return
	case err != nil:
		c.log.Warn("cannot read the cache file; starting empty", "path", c.cfg.CacheFile, "err", err)
		return
	}
	apps, err := eureka.DecodeApplications(b, eureka.JSON)
	if err != nil {
		c.log.Warn("cannot decode the cache file; starting empty", "path", c.cfg.CacheFile, "err", err)
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
	info, _ := os.Stat(c.cfg.CacheFile)
	var age time.Duration
	if info != nil {
		age = time.Since(info.ModTime()).Round(time.Second)
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
		if err := atomicfile.Write(c.cfg.CacheFile, eureka.EncodeApplications(eureka.JSON, s.Applications()), 0o644); err != nil {
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

package httpapi

import (
	"sync"
	"time"

	"github.com/heureka-project/heureka/eureka"
)

// resource names a cacheable read.
type resource uint8

const (
	resApps resource = iota
	resDelta
	resApp
	resVIP
	resSecureVIP
)

// cacheKey identifies one encoded payload within one registry version.
type cacheKey struct {
	res    resource
	name   string // app name or VIP; empty for the registry-wide reads
	format eureka.Format
	// gzip entries keep only the compressed bytes: most clients ask for
	// gzip, and the plain form of a large registry is ten times its size.
	gzip bool
}

// payloadCache memoises encoded payloads for the newest registry snapshot
// version it has seen. Every visible registry write changes the version, and
// the first request that carries a newer version drops every entry, so a
// payload is never served for a version other than the one it was encoded
// from. Requests still holding an older snapshot bypass the cache.
//
// Entries are built outside the lock, at most once each (concurrent readers
// of the same key wait for the first). At most max entries are kept per
// version; past that, payloads are encoded per request and not stored.
type payloadCache struct {
	max int

	mu      sync.Mutex
	version uint64
	entries map[cacheKey]*cacheEntry
}

type cacheEntry struct {
	created time.Time
	once    sync.Once
	p       *payload
}

func newPayloadCache(max int) *payloadCache {
	return &payloadCache{max: max, entries: make(map[cacheKey]*cacheEntry)}
}

// get returns the payload for k at version, encoding it with build if the
// cache has none. An entry older than maxAge (if positive) is rebuilt: the
// delta changes with time as well as with writes, since changes age out of
// its retention window without a new version.
func (c *payloadCache) get(version uint64, k cacheKey, now time.Time, maxAge time.Duration, build func() []byte) *payload {
	c.mu.Lock()
	if version > c.version {
		c.version = version
		clear(c.entries)
	}
	if version != c.version {
		c.mu.Unlock()
		return &payload{format: k.format, body: build()}
	}
	e := c.entries[k]
	if e != nil && maxAge > 0 && now.Sub(e.created) > maxAge {
		e = nil
		delete(c.entries, k)
	}
	if e == nil {
		if len(c.entries) >= c.max {
			c.mu.Unlock()
			return &payload{format: k.format, body: build()}
		}
		e = &cacheEntry{created: now}
		c.entries[k] = e
	}
	c.mu.Unlock()

	e.once.Do(func() {
		if k.gzip {
			e.p = &payload{format: k.format, gz: gzipBytes(build())}
			return
		}
		e.p = &payload{format: k.format, body: build()}
	})
	if e.p == nil { // build panicked in another request
		return &payload{format: k.format, body: build()}
	}
	return e.p
}

// len reports the number of entries, for tests.
func (c *payloadCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

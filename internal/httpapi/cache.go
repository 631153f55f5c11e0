package httpapi

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/heureka-project/heureka/eureka"
	"github.com/heureka-project/heureka/registry"
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

// cacheKey identifies one encoded payload within one registry snapshot.
type cacheKey struct {
	res    resource
	name   string // app name or VIP; empty for the registry-wide reads
	format eureka.Format
}

// stamp identifies a registry snapshot: its version and, since the delta
// also changes when its oldest entry leaves the window, when it was built.
type stamp struct {
	version uint64
	built   int64 // unix nanoseconds
}

func stampOf(s *registry.Snapshot) stamp {
	return stamp{version: s.Version, built: s.Built().UnixNano()}
}

// versionOf identifies what a listing other than the delta depends on: the
// version alone. Snapshots rebuilt only because the delta window moved
// share those payloads, so a registry whose delta ages out entry by entry
// after a storm does not reassemble its full listing for every poll.
func versionOf(s *registry.Snapshot) stamp { return stamp{version: s.Version} }

func (s stamp) after(t stamp) bool {
	if s.version != t.version {
		return s.version > t.version
	}
	return s.built > t.built
}

// payloadCache memoises payloads for the newest registry snapshot it has
// seen. The first request that carries a newer snapshot drops every entry,
// so a payload is never served for a snapshot other than the one it was
// assembled from; requests still holding an older snapshot bypass the
// cache. Dropping is cheap: a listing's payload only refers to the gzip
// members of its blocks, which live with the blocks (registry.Block.Memo)
// and are shared by every snapshot that shares the block.
//
// Entries are built outside the lock, at most once each (concurrent readers
// of the same key wait for the first). At most max entries are kept per
// snapshot; past that, payloads are built per request and not stored.
type payloadCache struct {
	max int

	mu      sync.Mutex
	stamp   stamp
	entries map[cacheKey]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	p    *payload
}

func newPayloadCache(max int) *payloadCache {
	return &payloadCache{max: max, entries: make(map[cacheKey]*cacheEntry)}
}

// get returns the payload for k at snapshot st, building it if the cache
// has none.
func (c *payloadCache) get(st stamp, k cacheKey, build func() *payload) *payload {
	c.mu.Lock()
	if st.after(c.stamp) {
		c.stamp = st
		clear(c.entries)
	}
	if st != c.stamp {
		c.mu.Unlock()
		return build()
	}
	e := c.entries[k]
	if e == nil {
		if len(c.entries) >= c.max {
			c.mu.Unlock()
			return build()
		}
		e = &cacheEntry{}
		c.entries[k] = e
	}
	c.mu.Unlock()

	e.once.Do(func() { e.p = build() })
	if e.p == nil { // build panicked in another request
		return build()
	}
	return e.p
}

// len reports the number of entries, for tests.
func (c *payloadCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// gzipLevel is the compression of every member. BestSpeed, with
// klauspost/compress rather than the standard library's, which takes
// twice as long at that level for larger members: see the read-path
// section of docs/design.md and BenchmarkBlockGzip.
const gzipLevel = gzip.BestSpeed

var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return zw
}}

// part is some encoded bytes kept as one gzip member, with their length
// before compression.
type part struct {
	gz    []byte
	plain int
}

// newPart compresses b into one gzip member. Members written one after
// another are a valid gzip stream (RFC 1952 §2.2), which every gzip reader
// decodes as the concatenation of their contents.
func newPart(b []byte) part {
	buf := gzipBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	gzipWriters.Put(zw)
	p := part{gz: bytes.Clone(buf.Bytes()), plain: len(b)}
	gzipBuffers.Put(buf)
	return p
}

// gzipBuffers holds the buffers members are compressed into; each member
// is then copied out at its exact size.
var gzipBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func formatIndex(f eureka.Format) int {
	if f == eureka.JSON {
		return 0
	}
	return 1
}

// blockParts is what a registry.Block keeps of its encoding: one gzip
// member per format, made when first asked for.
type blockParts struct {
	once [2]sync.Once
	done [2]atomic.Bool // p[i] is set
	p    [2]part
}

func partsOf(b *registry.Block) *blockParts {
	bp, _ := b.Memo(func() any { return new(blockParts) }).(*blockParts)
	return bp
}

// plainBuffers holds the buffers blocks are encoded into before they are
// compressed, so that a storm's re-encodings do not each leave a block's
// plain encoding behind for the collector.
var plainBuffers = sync.Pool{New: func() any { return new([]byte) }}

// blockPart returns the instances of b encoded in f, as one gzip member.
func blockPart(b *registry.Block, f eureka.Format) part {
	encode := func() part {
		buf := plainBuffers.Get().(*[]byte)
		*buf = eureka.AppendInstanceSeq((*buf)[:0], f, b.All())
		p := newPart(*buf)
		plainBuffers.Put(buf)
		return p
	}
	bp := partsOf(b)
	if bp == nil {
		return encode()
	}
	i := formatIndex(f)
	bp.once[i].Do(func() {
		bp.p[i] = encode()
		bp.done[i].Store(true)
	})
	if !bp.done[i].Load() { // encode panicked in another request
		return encode()
	}
	return bp.p[i]
}

// encoded reports whether b's member in f is made already.
func encoded(b *registry.Block, f eureka.Format) bool {
	bp := partsOf(b)
	return bp != nil && bp.done[formatIndex(f)].Load()
}

// separators holds the gzip member of eureka.Separator, per format.
var separators = [2]part{newPart([]byte(eureka.Separator(eureka.JSON))), newPart([]byte(eureka.Separator(eureka.XML)))}

// assembly builds a payload out of block members and the structure between
// them (roots, application openings and closings, separators), which is
// gathered as text and compressed into one member per gap between blocks.
type assembly struct {
	f       eureka.Format
	p       *payload
	pending []byte
}

func newAssembly(f eureka.Format) *assembly {
	return &assembly{f: f, p: &payload{format: f}}
}

func (a *assembly) add(p part) {
	a.p.members = append(a.p.members, p.gz)
	a.p.gzLen += len(p.gz)
	a.p.plainLen += p.plain
}

func (a *assembly) flush() {
	switch {
	case len(a.pending) == 0:
		return
	case string(a.pending) == eureka.Separator(a.f):
		a.add(separators[formatIndex(a.f)])
	default:
		a.add(newPart(a.pending))
	}
	a.pending = a.pending[:0]
}

func (a *assembly) app(app registry.AppBlocks, single bool) {
	a.pending = eureka.AppendAppOpen(a.pending, a.f, app.Name, single)
	for i, b := range app.Blocks {
		if i > 0 {
			a.pending = append(a.pending, eureka.Separator(a.f)...)
		}
		a.flush()
		a.add(blockPart(b, a.f))
	}
	a.pending = eureka.AppendAppClose(a.pending, a.f, single)
}

func (a *assembly) done() *payload {
	a.flush()
	return a.p
}

// listingPayload is a registry listing (full or delta) as gzip members.
func listingPayload(f eureka.Format, versionDelta int64, hashCode string, apps []registry.AppBlocks) *payload {
	a := newAssembly(f)
	a.pending = eureka.AppendListingOpen(a.pending, f, versionDelta, hashCode)
	for i, app := range apps {
		if i > 0 {
			a.pending = append(a.pending, eureka.Separator(f)...)
		}
		a.app(app, false)
	}
	a.pending = eureka.AppendListingClose(a.pending, f)
	return a.done()
}

// appPayload is one application's read as gzip members.
func appPayload(f eureka.Format, app registry.AppBlocks) *payload {
	a := newAssembly(f)
	a.app(app, true)
	return a.done()
}

// encodedPayload is a body encoded whole, kept as one gzip member.
func encodedPayload(f eureka.Format, body []byte) *payload {
	a := newAssembly(f)
	a.add(newPart(body))
	return a.p
}

package registry

import (
	"iter"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/heureka-project/heureka"
)

// BlockSize is how many instances a block is cut to. A block that grows
// past twice this is split; one that empties is dropped.
const BlockSize = 128

// Block is an immutable run of instances of one application: a listing is
// its applications' blocks in order. A change makes new blocks for the runs
// it touches and shares every other block with the previous snapshot, so an
// encoder that keeps each block's encoding (Memo) re-encodes only what
// changed.
type Block struct {
	recs []*stored

	// Delta blocks only: each entry's change Seq and time (unix
	// nanoseconds), in the order of recs.
	seqs  []uint64
	times []int64

	once sync.Once
	memo any
}

// Len returns the number of instances.
func (b *Block) Len() int { return len(b.recs) }

// Instances returns copies of the block's instances, made at each call:
// the registry keeps its instances in a form the collector scans cheaply
// (stored.go), and a copy is for as long as its reader needs it.
func (b *Block) Instances() []*heureka.Instance { return instances(b.recs) }

// All yields the block's instances in order, for a reader done with each
// before the next (an encoder), without a copy each: every one is yielded
// in the same *heureka.Instance, which the caller must not keep.
func (b *Block) All() iter.Seq[*heureka.Instance] {
	return func(yield func(*heureka.Instance) bool) {
		var in heureka.Instance
		for _, rec := range b.recs {
			rec.load(&in)
			if !yield(&in) {
				return
			}
		}
	}
}

// Memo returns what build returned the first time it was called for this
// block; it lives as long as the block. Encoders keep a block's encoded form
// here. If build panicked, Memo returns nil.
func (b *Block) Memo(build func() any) any {
	b.once.Do(func() { b.memo = build() })
	return b.memo
}

// AppBlocks is one application of a listing as blocks.
type AppBlocks struct {
	Name   string
	Blocks []*Block
}

// Len returns the number of instances.
func (a AppBlocks) Len() int {
	n := 0
	for _, b := range a.Blocks {
		n += len(b.recs)
	}
	return n
}

// lazyApp is an application's published blocks, and the flat ID-sorted
// list made from them when asked for. It is shared by every snapshot until
// the application changes. The flat list is kept while a reader holds it
// (weakly), so that readers that keep it (an HDFS pick set) see one list
// per change; once none does, the collector takes it, and with it the
// full-form copies of every instance, which would otherwise cost every
// collection as much as the registry itself.
type lazyApp struct {
	name   string
	blocks []*Block
	n      int // instances

	mu  sync.Mutex
	app weak.Pointer[heureka.Application]
}

func newLazyApp(name string, blocks []*Block) *lazyApp {
	l := &lazyApp{name: name, blocks: blocks}
	for _, b := range blocks {
		l.n += len(b.recs)
	}
	return l
}

func (l *lazyApp) get() *heureka.Application {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.app.Value(); a != nil {
		return a
	}
	recs := make([]*stored, 0, l.n)
	for _, b := range l.blocks {
		recs = append(recs, b.recs...)
	}
	a := &heureka.Application{Name: l.name, Instances: instances(recs)}
	l.app = weak.Make(a)
	return a
}

// find returns the record with id.
func (l *lazyApp) find(id string) (*stored, bool) {
	k, _ := slices.BinarySearchFunc(l.blocks, id, func(b *Block, id string) int { return strings.Compare(b.recs[0].id(), id) })
	// The instance is in the last block whose first ID is not after id.
	if k == len(l.blocks) || l.blocks[k].recs[0].id() != id {
		k--
	}
	if k < 0 {
		return nil, false
	}
	list := l.blocks[k].recs
	i, ok := slices.BinarySearchFunc(list, id, byID)
	if !ok {
		return nil, false
	}
	return list[i], true
}

// appendCut appends list to out as blocks of BlockSize, or as one block
// when it is at most twice that.
func appendCut(out []*Block, list []*stored) []*Block {
	if len(list) <= 2*BlockSize {
		if len(list) > 0 {
			out = append(out, &Block{recs: list})
		}
		return out
	}
	for len(list) > 0 {
		n := min(BlockSize, len(list))
		out = append(out, &Block{recs: list[:n:n]})
		list = list[n:]
	}
	return out
}

func byID(s *stored, id string) int { return strings.Compare(s.id(), id) }

// patch returns the application's blocks after the changes to the dirty
// IDs (sorted), updating counts: only the blocks holding a dirty ID are
// copied. An ID belongs to the last block whose first ID is not after it.
func (l *lazyApp) patch(dirty []dirtyID, counts heureka.StatusCounts) []*Block {
	blocks := l.blocks
	out := make([]*Block, 0, len(blocks)+1)
	patch := func(list []*stored, dirty []dirtyID) []*stored {
		for _, d := range dirty {
			i, found := slices.BinarySearchFunc(list, d.id, byID)
			if found {
				counts[list[i].status.status()]--
			}
			live := d.inst != nil
			if live {
				counts[d.inst.status.status()]++
			}
			switch {
			case live && found:
				list[i] = d.inst
			case live:
				list = slices.Insert(list, i, d.inst)
			case found:
				list = slices.Delete(list, i, i+1)
			}
		}
		return list
	}
	if len(blocks) == 0 {
		return appendCut(out, patch(nil, dirty))
	}
	for k, b := range blocks {
		j := len(dirty)
		if k+1 < len(blocks) {
			next := blocks[k+1].recs[0].id()
			j, _ = slices.BinarySearchFunc(dirty, next, func(d dirtyID, id string) int { return strings.Compare(d.id, id) })
		}
		if j == 0 {
			out = append(out, b)
			continue
		}
		out = appendCut(out, patch(slices.Clone(b.recs), dirty[:j]))
		dirty = dirty[j:]
	}
	return out
}

// deltaKey names an instance in the delta index.
type deltaKey struct{ app, id string }

// deltaState is the delta as blocks, carried from one snapshot to the next
// and advanced by the changes in between. Only the snapshot builder (under
// buildMu) touches it; what a Snapshot publishes (its AppBlocks) is never
// modified.
type deltaState struct {
	seq    uint64              // the changes up to here are applied
	latest map[deltaKey]uint64 // the Seq of each instance's entry
	apps   map[string][]*Block // per application, entries in order of change
}

type deltaEntry struct {
	in   *stored
	seq  uint64
	time int64
}

// advanceDelta returns the delta as of version, with entries older than
// cutoff gone. It advances prev when the change log still reaches back to
// it (costing the changes since, and the blocks they touch), else builds
// afresh from the log.
func advanceDelta(prev *deltaState, changes []Change, version uint64, cutoff time.Time) *deltaState {
	recent, _, ok := []Change(nil), version, false
	if prev != nil {
		recent, _, ok = changesSince(changes, version, prev.seq)
	}
	d := prev
	if !ok {
		d = &deltaState{latest: map[deltaKey]uint64{}, apps: map[string][]*Block{}}
		recent = changes[firstAfter(changes, cutoff):]
	}
	d.seq = version
	cut := cutoff.UnixNano()

	// An entry is live while latest holds its Seq: a newer change of the
	// same instance replaces it.
	type pending struct {
		removed []uint64 // Seqs of earlier snapshots' entries replaced now
		added   []deltaEntry
	}
	touched := map[string]*pending{}
	touch := func(app string) *pending {
		p := touched[app]
		if p == nil {
			p = &pending{}
			touched[app] = p
		}
		return p
	}
	prevSeq := uint64(0)
	if ok {
		prevSeq = prev.seq
	}
	for _, c := range recent {
		in := c.rec
		if in == nil {
			continue // a notice
		}
		p := touch(in.app())
		k := deltaKey{in.app(), in.id()}
		if old, ok := d.latest[k]; ok && old <= prevSeq {
			p.removed = append(p.removed, old)
		}
		p.added = append(p.added, deltaEntry{in: in, seq: c.Seq, time: c.Time.UnixNano()})
		d.latest[k] = c.Seq
	}
	for app, blocks := range d.apps {
		if blocks[0].times[0] < cut {
			touch(app)
		}
	}

	for app, p := range touched {
		slices.Sort(p.removed)
		var out []*Block
		for _, b := range d.apps[app] {
			first, last := b.seqs[0], b.seqs[len(b.seqs)-1]
			i, _ := slices.BinarySearch(p.removed, first)
			if b.times[0] >= cut && (i == len(p.removed) || p.removed[i] > last) {
				out = append(out, b)
				continue
			}
			nb := &Block{}
			for j, in := range b.recs {
				s, k := b.seqs[j], deltaKey{app, in.id()}
				if d.latest[k] != s {
					continue // replaced
				}
				if b.times[j] < cut {
					delete(d.latest, k)
					continue
				}
				nb.recs = append(nb.recs, in)
				nb.seqs = append(nb.seqs, s)
				nb.times = append(nb.times, b.times[j])
			}
			if len(nb.recs) > 0 {
				out = append(out, nb)
			}
		}
		var tail *Block
		for _, e := range p.added {
			k := deltaKey{app, e.in.id()}
			if d.latest[k] != e.seq {
				continue // replaced within this batch
			}
			if e.time < cut {
				delete(d.latest, k)
				continue
			}
			switch n := len(out); {
			case tail == nil && n > 0 && len(out[n-1].recs) < BlockSize:
				// Extend the open tail block rather than start a new one.
				old := out[n-1]
				tail = &Block{recs: slices.Clone(old.recs), seqs: slices.Clone(old.seqs), times: slices.Clone(old.times)}
				out[n-1] = tail
			case tail == nil || len(tail.recs) >= BlockSize:
				tail = &Block{}
				out = append(out, tail)
			}
			tail.recs = append(tail.recs, e.in)
			tail.seqs = append(tail.seqs, e.seq)
			tail.times = append(tail.times, e.time)
		}
		if len(out) == 0 {
			delete(d.apps, app)
			continue
		}
		d.apps[app] = out
	}
	return d
}

// listing returns the delta's applications by name.
func (d *deltaState) listing() []AppBlocks {
	out := make([]AppBlocks, 0, len(d.apps))
	for name, blocks := range d.apps {
		out = append(out, AppBlocks{Name: name, Blocks: blocks})
	}
	slices.SortFunc(out, func(x, y AppBlocks) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// oldest returns the time of the delta's oldest entry, and false when it
// is empty.
func (d *deltaState) oldest() (time.Time, bool) {
	var t int64
	found := false
	for _, blocks := range d.apps {
		if h := blocks[0].times[0]; !found || h < t {
			t, found = h, true
		}
	}
	return time.Unix(0, t), found
}

package dnsapi

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/registry"
	"github.com/miekg/dns"
)

// roleStateKey is the metadata key an instance's role state is read from,
// the one every role's agent registers. roleState is the one place that
// reads it.
const roleStateKey = heureka.MetaRoleState

// roleState returns in's role state in lower case, "" when it has none. A
// NameNode registered by an agent from before the generic key carries its
// HA state under hdfs.MetaHAState only, which is read then.
func roleState(in *heureka.Instance) string {
	st, ok := in.Metadata.Lookup(roleStateKey)
	if !ok {
		st = in.Metadata.Get(hdfs.MetaHAState)
	}
	return strings.ToLower(strings.TrimSpace(st))
}

// nameNodeRank orders a NameNode application's plain answer: the active
// first, then standbys, then observers, then anything else.
func nameNodeRank(state string) int {
	switch hdfs.HAState(state) {
	case hdfs.HAActive:
		return 0
	case hdfs.HAStandby:
		return 1
	case hdfs.HAObserver:
		return 2
	}
	return 3
}

// entry is one instance in the form answers are made from.
type entry struct {
	id, host string
	addr     netip.Addr // invalid when the registered IP is not an address
	port     uint16
	state    string // role state, lower case
	rack     string // hdfs.NormalizeRack of the rack metadata
	status   heureka.Status
	rank     int // nameNodeRank(state) in a NameNode application, else 0
}

func newEntry(in *heureka.Instance, nameNode bool) entry {
	e := entry{id: in.ID, host: in.HostName, status: in.Status, state: roleState(in),
		rack: heureka.NormalizeRack(in.Metadata.Get(heureka.MetaRack))}
	if a, err := netip.ParseAddr(in.IPAddr); err == nil && a.Zone() == "" {
		e.addr = a.Unmap()
	}
	switch {
	case in.Port.Enabled && in.Port.Number > 0:
		e.port = uint16(in.Port.Number)
	case in.SecurePort.Enabled && in.SecurePort.Number > 0:
		e.port = uint16(in.SecurePort.Number)
	}
	if nameNode {
		e.rank = nameNodeRank(e.state)
	}
	return e
}

// view is what answers are made from: one registry snapshot and, for each
// application asked about since it was taken, that application's part.
// An application's part is kept from one view to the next while its blocks
// are the same; a changed application re-reads only its changed blocks.
type view struct {
	snap *registry.Snapshot
	prev map[string]*appView // the parts built under earlier views, to reuse; never modified

	mu   sync.Mutex
	apps map[string]*appView // by upper-case name

	namesMu sync.RWMutex
	names   map[string]*group // by lower-case name: the groups the fast path has looked up (fast.go)
}

// appView is one application's part of a view: a part per registry block,
// and the groups asked for, each made from the blocks' parts when first
// asked.
type appView struct {
	name     string // upper case, as registered
	blocks   []*registry.Block
	parts    map[*registry.Block]*blockPart
	nameNode bool

	mu     sync.Mutex
	groups map[groupKey]*group
}

// groupKey names a group of an application: all its UP instances
// (kindAll), those in one role state (kindState) or on one rack (kindRack).
type groupKey struct {
	kind byte
	v    string
}

const (
	kindAll   = 'a'
	kindState = 's'
	kindRack  = 'r'
)

// blockPart is one registry block's UP instances with an address, by the
// groups they belong to. It is built once per block and shared by every
// view while the block lives.
type blockPart struct {
	sets map[groupKey]*set
}

// set is one block's instances of one group, by address family; in a
// NameNode application each list is in rank order.
type set struct {
	v4, v6 []entry

	once    sync.Once
	a, aaaa []dns.RR // v4's and v6's address records, index for index

	wireOnce sync.Once
	w4, w6   []byte // the same records packed (wire.go), index for index
}

func (s *set) add(e entry) {
	if e.addr.Is4() {
		s.v4 = append(s.v4, e)
	} else {
		s.v6 = append(s.v6, e)
	}
}

// records returns s's A and AAAA records, index for index with v4 and v6,
// made the first time with owner name owner and TTL ttl. A set belongs to
// one group of one application, which one name answers (in lower case),
// so its records are made once and shared by every answer.
func (s *set) records(owner string, ttl uint32) (a, aaaa []dns.RR) {
	s.once.Do(func() {
		h := dns.RR_Header{Name: owner, Class: dns.ClassINET, Ttl: ttl}
		s.a = make([]dns.RR, len(s.v4))
		for i, e := range s.v4 {
			s.a[i] = addrRR(h, e.addr)
		}
		s.aaaa = make([]dns.RR, len(s.v6))
		for i, e := range s.v6 {
			s.aaaa[i] = addrRR(h, e.addr)
		}
	})
	return s.a, s.aaaa
}

// packed returns s's address records in wire form, made the first time
// with TTL ttl: owned by the question's name (a pointer to it), so one
// form serves every answer whatever the case it was asked in.
func (s *set) packed(v6 bool, ttl uint32) []byte {
	s.wireOnce.Do(func() {
		s.w4 = make([]byte, 0, len(s.v4)*aAnswerSize)
		for _, e := range s.v4 {
			s.w4 = appendAddrRecord(s.w4, e.addr, ttl)
		}
		s.w6 = make([]byte, 0, len(s.v6)*aaaaAnswerSize)
		for _, e := range s.v6 {
			s.w6 = appendAddrRecord(s.w6, e.addr, ttl)
		}
	})
	if v6 {
		return s.w6
	}
	return s.w4
}

// group is the instances one name answers: the sets of one key, one per
// block that has any, in block order, with the running counts that find
// the i-th instance of a family. In a ranked group (a NameNode
// application's plain name) answers are in rank order: its instances are
// one set in rank order, and runs4 and runs6 end each rank's run.
type group struct {
	app          string
	ranked       bool
	sets         []*set
	ends4        []int // ends4[j]: v4 instances in sets[:j+1]
	ends6        []int
	runs4, runs6 []int // ranked: the end of each rank's run of v4 and v6 instances
}

// count returns the number of instances of a family (v6: IPv6).
func (g *group) count(v6 bool) int {
	ends := g.ends4
	if v6 {
		ends = g.ends6
	}
	if len(ends) == 0 {
		return 0
	}
	return ends[len(ends)-1]
}

// at returns the i-th instance of a family, its set and its index there.
func (g *group) at(v6 bool, i int) (*set, int) {
	ends := g.ends4
	if v6 {
		ends = g.ends6
	}
	j, _ := slices.BinarySearch(ends, i+1)
	start := 0
	if j > 0 {
		start = ends[j-1]
	}
	return g.sets[j], i - start
}

func (g *group) entry(v6 bool, i int) entry {
	s, k := g.at(v6, i)
	if v6 {
		return s.v6[k]
	}
	return s.v4[k]
}

// record returns the i-th instance's address record, owned by owner.
func (g *group) record(v6 bool, i int, owner string, ttl uint32) dns.RR {
	s, k := g.at(v6, i)
	a, aaaa := s.records(owner, ttl)
	if v6 {
		return aaaa[k]
	}
	return a[k]
}

// views keeps the view of the registry's current snapshot.
type views struct {
	reg *registry.Registry
	cur atomic.Pointer[view]
}

// current returns the view of the registry's snapshot now, so a change is
// in the very next answer.
func (vs *views) current() *view {
	snap := vs.reg.Snapshot()
	old := vs.cur.Load()
	if old != nil && old.snap == snap {
		return old
	}
	v := &view{snap: snap, apps: map[string]*appView{}, prev: map[string]*appView{}, names: map[string]*group{}}
	if old != nil {
		// Every part built so far is carried forward, not only the ones
		// asked for under the last view, unless its application is gone.
		old.mu.Lock()
		maps.Copy(v.prev, old.prev)
		maps.Copy(v.prev, old.apps)
		old.mu.Unlock()
		for name := range v.prev {
			if _, ok := snap.AppBlocks(name); !ok {
				delete(v.prev, name)
			}
		}
	}
	if vs.cur.CompareAndSwap(old, v) {
		return v
	}
	if cur := vs.cur.Load(); cur != nil && cur.snap == snap {
		return cur
	}
	return v
}

// app returns the part of the application named name (upper case), nil
// when the snapshot has no such application.
func (v *view) app(name string) *appView {
	v.mu.Lock()
	defer v.mu.Unlock()
	if a, ok := v.apps[name]; ok {
		return a
	}
	ab, ok := v.snap.AppBlocks(name)
	if !ok {
		return nil
	}
	p := v.prev[name]
	if p != nil && slices.Equal(p.blocks, ab.Blocks) {
		v.apps[name] = p
		return p
	}
	a := buildApp(ab, p)
	v.apps[name] = a
	return a
}

// buildApp makes an application's part, reusing prev's part of every block
// the two share.
func buildApp(ab registry.AppBlocks, prev *appView) *appView {
	role, _, isHDFS := hdfs.ParseAppName(ab.Name)
	a := &appView{name: ab.Name, blocks: ab.Blocks, parts: make(map[*registry.Block]*blockPart, len(ab.Blocks)),
		nameNode: isHDFS && role == hdfs.RoleNameNode, groups: map[groupKey]*group{}}
	for _, b := range ab.Blocks {
		p, ok := (*blockPart)(nil), false
		if prev != nil {
			p, ok = prev.parts[b]
		}
		if !ok {
			p = buildPart(b, a.nameNode)
		}
		a.parts[b] = p
	}
	return a
}

func buildPart(b *registry.Block, nameNode bool) *blockPart {
	p := &blockPart{sets: map[groupKey]*set{}}
	add := func(k groupKey, e entry) {
		s := p.sets[k]
		if s == nil {
			s = &set{}
			p.sets[k] = s
		}
		s.add(e)
	}
	for in := range b.All() {
		e := newEntry(in, nameNode)
		if e.status != heureka.StatusUp || !e.addr.IsValid() {
			continue
		}
		add(groupKey{kindAll, ""}, e)
		add(groupKey{kindRack, e.rack}, e)
		if e.state != "" {
			add(groupKey{kindState, e.state}, e)
		}
	}
	return p
}

// group returns the group k, made from the blocks' parts when first asked.
// An empty group is made again each time and not kept: names of racks and
// states nobody is on are the asker's to choose, and would otherwise fill
// the application's part without bound.
func (a *appView) group(k groupKey) *group {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g, ok := a.groups[k]; ok {
		return g
	}
	g := &group{app: a.name, ranked: a.nameNode && k.kind == kindAll}
	var sets []*set
	for _, b := range a.blocks {
		if s := a.parts[b].sets[k]; s != nil {
			sets = append(sets, s)
		}
	}
	if len(sets) == 0 {
		return g
	}
	if g.ranked {
		sets = []*set{mergeRanked(sets)}
	}
	n4, n6 := 0, 0
	for _, s := range sets {
		n4, n6 = n4+len(s.v4), n6+len(s.v6)
		g.sets = append(g.sets, s)
		g.ends4 = append(g.ends4, n4)
		g.ends6 = append(g.ends6, n6)
	}
	if g.ranked {
		g.runs4, g.runs6 = rankRuns(g.sets[0].v4), rankRuns(g.sets[0].v6)
	}
	a.groups[k] = g
	return g
}

// mergeRanked returns the instances of sets as one set in rank order, each
// rank's instances in set order.
func mergeRanked(sets []*set) *set {
	m := &set{}
	for _, s := range sets {
		m.v4 = append(m.v4, s.v4...)
		m.v6 = append(m.v6, s.v6...)
	}
	byRank := func(x, y entry) int { return x.rank - y.rank }
	slices.SortStableFunc(m.v4, byRank)
	slices.SortStableFunc(m.v6, byRank)
	return m
}

// rankRuns returns where each rank's run ends in es, which is in rank
// order.
func rankRuns(es []entry) []int {
	var ends []int
	for i := range es {
		if i+1 == len(es) || es[i+1].rank != es[i].rank {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// find returns the application named by the longest run of trailing labels
// that a registered application has, and the labels in front of it.
func (v *view) find(labels []string) (*appView, string, []string) {
	for i := range labels {
		name := strings.ToUpper(strings.Join(labels[i:], "."))
		if a := v.app(name); a != nil {
			return a, name, labels[:i]
		}
	}
	return nil, "", nil
}

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

// roleStateKey is the metadata key an instance's role state is read from
// (a NameNode's HA state). roleState is the one place that reads it.
const roleStateKey = hdfs.MetaHAState

// roleState returns in's role state in lower case, "" when it has none.
func roleState(in *heureka.Instance) string {
	return strings.ToLower(strings.TrimSpace(in.Metadata.Get(roleStateKey)))
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
		rack: hdfs.NormalizeRack(in.Metadata.Get(hdfs.MetaRack))}
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
// application asked about since it was taken, that application's UP
// instances by role state and by rack. An application's part is kept from
// one view to the next while its blocks are the same, and a changed
// application re-reads only its changed blocks.
type view struct {
	snap *registry.Snapshot
	prev map[string]*appView // the parts built under earlier views, to reuse; never modified

	mu   sync.Mutex
	apps map[string]*appView // by upper-case name
}

// appView is one application's part of a view.
type appView struct {
	name     string // upper case, as registered
	blocks   []*registry.Block
	entries  map[*registry.Block][]entry // every instance, per block
	nameNode bool
	up       set // UP instances with an address; NameNodes by rank
	byState  map[string]*set

	rackOnce sync.Once
	byRack   map[string]*set
}

// set is instances an answer is drawn from, by address family. In a
// ranked set (a NameNode application's plain name) each list is in rank
// order.
type set struct {
	app    string
	ranked bool
	v4, v6 []entry

	once    sync.Once
	a, aaaa []dns.RR // v4's and v6's address records, index for index
}

// records returns s's A and AAAA records, index for index with v4 and v6,
// made the first time with owner name owner and TTL ttl. A set answers
// one name only (its application's, role state's or rack's, in lower
// case), so its records are made once and shared by every answer.
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

func (s *set) add(e entry) {
	if e.addr.Is4() {
		s.v4 = append(s.v4, e)
	} else {
		s.v6 = append(s.v6, e)
	}
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
	v := &view{snap: snap, apps: map[string]*appView{}, prev: map[string]*appView{}}
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

func buildApp(ab registry.AppBlocks, prev *appView) *appView {
	role, _, isHDFS := hdfs.ParseAppName(ab.Name)
	nameNode := isHDFS && role == hdfs.RoleNameNode
	a := &appView{name: ab.Name, blocks: ab.Blocks, entries: make(map[*registry.Block][]entry, len(ab.Blocks)),
		nameNode: nameNode, up: set{app: ab.Name, ranked: nameNode}, byState: map[string]*set{}}
	for _, b := range ab.Blocks {
		es, ok := []entry(nil), false
		if prev != nil {
			es, ok = prev.entries[b]
		}
		if !ok {
			es = make([]entry, 0, b.Len())
			for in := range b.All() {
				es = append(es, newEntry(in, a.nameNode))
			}
		}
		a.entries[b] = es
		for _, e := range es {
			if e.status == heureka.StatusUp && e.addr.IsValid() {
				a.up.add(e)
			}
		}
	}
	if a.nameNode {
		byRank := func(x, y entry) int { return x.rank - y.rank }
		slices.SortStableFunc(a.up.v4, byRank)
		slices.SortStableFunc(a.up.v6, byRank)
	}
	for _, e := range a.all() {
		if e.state != "" {
			a.byState[e.state] = addTo(a.byState[e.state], a.name, e)
		}
	}
	return a
}

func addTo(s *set, app string, e entry) *set {
	if s == nil {
		s = &set{app: app}
	}
	s.add(e)
	return s
}

// all returns the UP instances with an address, IPv4 first.
func (a *appView) all() []entry {
	return append(slices.Clip(a.up.v4), a.up.v6...)
}

// state returns the UP instances in role state st (lower case).
func (a *appView) state(st string) *set {
	if s, ok := a.byState[st]; ok {
		return s
	}
	return &set{app: a.name}
}

// rack returns the UP instances on rack (a normalised path).
func (a *appView) rack(rack string) *set {
	a.rackOnce.Do(func() {
		a.byRack = map[string]*set{}
		for _, e := range a.all() {
			a.byRack[e.rack] = addTo(a.byRack[e.rack], a.name, e)
		}
	})
	if s, ok := a.byRack[rack]; ok {
		return s
	}
	return &set{app: a.name}
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

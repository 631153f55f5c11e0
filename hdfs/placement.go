package hdfs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
)

// Placement defaults.
const (
	// DefaultReplicas is dfs.replication's default.
	DefaultReplicas = 3
	// DefaultFullnessThreshold: a DataNode more than 90% used takes no new
	// blocks, to avoid writes that fail half-way (design notes).
	DefaultFullnessThreshold = 0.90
	// DefaultAvailableSpacePreference and DefaultAvailableSpaceTolerance are
	// the defaults of HDFS's AvailableSpaceBlockPlacementPolicy
	// (balanced-space-preference-fraction 0.6, balanced-space-tolerate 5).
	DefaultAvailableSpacePreference = 0.6
	DefaultAvailableSpaceTolerance  = 5.0
)

// PlacementRequest says how many DataNodes to choose and for whom.
type PlacementRequest struct {
	// Replicas is the number of DataNodes wanted; 0 means DefaultReplicas.
	Replicas int
	// Writer is the writing client's host name or IP address. If it is a
	// registered DataNode that can take the block it gets the first
	// replica; if it is a DataNode that cannot, its rack is preferred.
	Writer string
	// WriterRack is the writer's rack when the writer is not a registered
	// DataNode (e.g. known from the topology); "" means unknown, and the
	// first replica goes to a random node, as in HDFS.
	WriterRack string
	// Penalized holds instance IDs to avoid (e.g. Penalties.Active); only
	// the keys matter, the values are causes for the caller's logs.
	Penalized map[string]string
	// FullnessThreshold skips DataNodes whose disk_used/disk_total is above
	// it; 0 means DefaultFullnessThreshold; otherwise it must be in (0, 1].
	FullnessThreshold float64
	// BlockSize, when positive, also skips DataNodes of known capacity with
	// less than BlockSize bytes free (disk_total - disk_used).
	BlockSize int64
	// AvailableSpace turns on HDFS's AvailableSpaceBlockPlacementPolicy rule
	// for every random choice: draw two candidates; if their used
	// percentages differ by at least AvailableSpaceTolerance points, take
	// the less used one with probability AvailableSpacePreference, else the
	// first drawn. Zero values mean the defaults above.
	AvailableSpace           bool
	AvailableSpacePreference float64 // in (0, 1)
	AvailableSpaceTolerance  float64 // percentage points, in [0, 100]
	// Rand is the source of randomness; nil uses math/rand/v2's global
	// source. Inject a seeded one for repeatable choices.
	Rand *rand.Rand
}

// SkipReason says why a DataNode was not a candidate.
type SkipReason string

const (
	SkipNotUp     SkipReason = "not UP"
	SkipDraining  SkipReason = "draining"
	SkipPenalized SkipReason = "penalized"
	SkipFull      SkipReason = "full"
	SkipDuplicate SkipReason = "duplicate ID"
)

// Placement is the outcome of ChooseDataNodes.
type Placement struct {
	// Nodes are the chosen DataNodes in replica order: Nodes[0] is the first
	// replica (the writer's node or rack), Nodes[1] the off-rack one, ...
	Nodes     []*heureka.Instance
	Requested int
	// Short is Requested - len(Nodes); when it is positive ChooseDataNodes
	// also returns an error saying why.
	Short int
	// Eligible counts the candidates (every DataNode not skipped) and Racks
	// the racks they are on.
	Eligible int
	Racks    int
	// MaxPerRack is the per-rack cap applied; 0 means no cap (one rack or
	// one replica).
	MaxPerRack int
	// UnknownCapacity counts chosen nodes whose capacity was unknown: they
	// are taken only when no node of known capacity fits.
	UnknownCapacity int
	// Skipped counts the DataNodes left out, by reason.
	Skipped map[SkipReason]int
}

type candidate struct {
	in      *heureka.Instance
	rack    string
	rackIdx int     // index of rack in placer.perRack
	chosen  bool    // already placed
	known   bool    // capacity known
	usedPct float64 // 0-100 when known
	hung    bool    // probe_state=hung: paused, taken last
}

// ChooseDataNodes chooses req.Replicas DataNodes for a new block following
// HDFS's BlockPlacementPolicyDefault:
//
//  1. the writer's own node if it is a candidate, else a random candidate on
//     the writer's rack, else a random candidate;
//  2. a random candidate on a rack other than the first's (else on its rack);
//  3. if 1 and 2 share a rack, a node on another rack; else a node on the
//     second's rack (else the first's rack, else anywhere);
//  4. further replicas at random;
//
// never more than MaxPerRack = (n-1)/racks + 2 per rack (one less if that
// equals n; no cap with one rack or one replica), where n is the replica
// count capped at the number of candidates and racks counts the candidates'
// racks. Candidates are the UP DataNodes that are not draining (IsDraining),
// not in req.Penalized and not full; nodes whose capacity is unknown
// (disk_total missing, zero or garbled, or disk_used missing or garbled) are
// candidates but are only taken when no node of known capacity fits a step,
// and nodes marked probe_state=hung (paused, not yet DOWN) only when no
// other node fits it.
// A node's rack is its metadata rack, normalised; none means DefaultRack.
//
// When fewer nodes than requested can be chosen, the Placement holds those
// that could and the error (EUNAVAILABLE) says how many are missing and why.
// An invalid request is EINVALID. nodes is not modified.
func ChooseDataNodes(nodes []*heureka.Instance, req PlacementRequest) (Placement, error) {
	if err := req.normalize(); err != nil {
		return Placement{}, err
	}
	return NewDataNodeSet(nodes, nil).Choose(req)
}

// DataNodeSet is a list of DataNodes prepared once for many choices: in ID
// order (so that a seeded Rand repeats its choices whatever order the
// registry listed them in), duplicates dropped, and what placement reads
// of each node (status, rack, capacity, probe state) parsed. Choose then
// costs a pass over flags rather than a parse of every node's metadata.
// It is immutable and safe for concurrent use.
type DataNodeSet struct {
	nodes []preparedNode
	dups  int
	racks []string // by preparedNode.rackIdx
}

type preparedNode struct {
	in          *heureka.Instance
	skip        SkipReason // not UP or draining, whatever the request
	rackIdx     int
	known       bool // capacity known
	used, total int64
	hung        bool
}

// NewDataNodeSet prepares nodes (nil entries are ignored; nodes is not
// modified). prev, if not nil, is an earlier set of the same application:
// nodes with the same ID, status and metadata as there (the metadata the
// very same block, as a registry shares it between the versions of an
// instance, or equal) are taken from it unparsed, so preparing the next
// version of a large application costs its changes.
func NewDataNodeSet(nodes []*heureka.Instance, prev *DataNodeSet) *DataNodeSet {
	sorted := make([]*heureka.Instance, 0, len(nodes))
	for _, in := range nodes {
		if in != nil {
			sorted = append(sorted, in)
		}
	}
	// A registry lists an application in ID order already: sort only
	// when it is not, so that a duplicate ID is always next to its twin.
	if !sort.SliceIsSorted(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID }) {
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	}
	s := &DataNodeSet{nodes: make([]preparedNode, 0, len(sorted))}
	racks := map[string]int{}
	rackOf := func(r string) int {
		idx, ok := racks[r]
		if !ok {
			idx = len(s.racks)
			racks[r] = idx
			s.racks = append(s.racks, r)
		}
		return idx
	}
	j := 0 // walks prev in step, both in ID order
	for i, in := range sorted {
		if i > 0 && sorted[i-1].ID == in.ID {
			s.dups++
			continue
		}
		if prev != nil {
			for j < len(prev.nodes) && prev.nodes[j].in.ID < in.ID {
				j++
			}
			if j < len(prev.nodes) && samePrepared(prev.nodes[j].in, in) {
				n := prev.nodes[j]
				n.in = in
				n.rackIdx = rackOf(prev.racks[n.rackIdx])
				s.nodes = append(s.nodes, n)
				continue
			}
		}
		n := preparedNode{in: in, rackIdx: rackOf(NormalizeRack(in.Metadata.Get(MetaRack))), hung: in.Metadata.Get(MetaProbeState) == ProbeStateHung}
		switch {
		case in.Status == heureka.StatusOutOfService:
			n.skip = SkipDraining
		case in.Status != heureka.StatusUp:
			n.skip = SkipNotUp
		case IsDraining(in):
			n.skip = SkipDraining
		}
		total, okT := metaInt(in.Metadata, MetaDiskTotal)
		used, okU := metaInt(in.Metadata, MetaDiskUsed)
		if okT && okU && total > 0 {
			n.known, n.used, n.total = true, used, total
		}
		s.nodes = append(s.nodes, n)
	}
	return s
}

// samePrepared reports whether a node prepared from p would be prepared
// the same from in: what preparing reads is the same.
func samePrepared(p, in *heureka.Instance) bool {
	return p == in || p.ID == in.ID && p.Status == in.Status && p.Metadata.Equal(in.Metadata)
}

// Len is how many distinct DataNodes the set holds.
func (s *DataNodeSet) Len() int { return len(s.nodes) }

// Choose is ChooseDataNodes over the set.
func (s *DataNodeSet) Choose(req PlacementRequest) (Placement, error) {
	if err := req.normalize(); err != nil {
		return Placement{}, err
	}
	pl := Placement{Requested: req.Replicas, Skipped: map[SkipReason]int{}}
	if s.dups > 0 {
		pl.Skipped[SkipDuplicate] = s.dups
	}
	// One allocation for all candidates (a large application has 100k).
	slab := make([]candidate, 0, len(s.nodes))
	rackUsed := make([]bool, len(s.racks))
	nracks := 0
	for i := range s.nodes {
		n := &s.nodes[i]
		reason := n.skip
		if reason == "" {
			if _, ok := req.Penalized[n.in.ID]; ok {
				reason = SkipPenalized
			}
		}
		c := candidate{in: n.in, rack: s.racks[n.rackIdx], rackIdx: n.rackIdx, known: n.known, hung: n.hung}
		if reason == "" && n.known {
			frac := float64(n.used) / float64(n.total)
			c.usedPct = 100 * frac
			if frac > req.FullnessThreshold || (req.BlockSize > 0 && n.total-n.used < req.BlockSize) {
				reason = SkipFull
			}
		}
		if reason != "" {
			pl.Skipped[reason]++
			continue
		}
		if !rackUsed[n.rackIdx] {
			rackUsed[n.rackIdx] = true
			nracks++
		}
		slab = append(slab, c)
	}
	cands := make([]*candidate, len(slab))
	for i := range slab {
		cands[i] = &slab[i]
	}
	pl.Eligible, pl.Racks = len(cands), nracks

	p := &placer{
		cands:   cands,
		perRack: make([]int, len(s.racks)),
		req:     &req,
	}
	p.maxPerRack, pl.MaxPerRack = maxNodesPerRack(req.Replicas, len(cands), nracks)

	// The writer: a candidate, or at least a rack to prefer.
	var local *candidate
	writerRack := ""
	if w := strings.TrimSpace(req.Writer); w != "" {
		for _, c := range cands {
			if matchesHost(c.in, w) {
				local = c
				break
			}
		}
		if local != nil {
			writerRack = local.rack
		} else {
			for i := range s.nodes {
				if matchesHost(s.nodes[i].in, w) {
					writerRack = s.racks[s.nodes[i].rackIdx]
					break
				}
			}
		}
	}
	if writerRack == "" && strings.TrimSpace(req.WriterRack) != "" {
		writerRack = NormalizeRack(req.WriterRack)
	}

	p.place(req.Replicas, local, writerRack)

	for _, c := range p.order {
		pl.Nodes = append(pl.Nodes, c.in)
		if !c.known {
			pl.UnknownCapacity++
		}
	}
	pl.Short = req.Replicas - len(pl.Nodes)
	if pl.Short > 0 {
		return pl, shortError(pl, req.FullnessThreshold)
	}
	return pl, nil
}

func (req *PlacementRequest) normalize() error {
	if req.Replicas < 0 {
		return heureka.Errorf(heureka.EINVALID, "placement: replicas %d is negative", req.Replicas)
	}
	if req.Replicas == 0 {
		req.Replicas = DefaultReplicas
	}
	if req.FullnessThreshold == 0 {
		req.FullnessThreshold = DefaultFullnessThreshold
	}
	if !(req.FullnessThreshold > 0 && req.FullnessThreshold <= 1) {
		return heureka.Errorf(heureka.EINVALID, "placement: fullness threshold %v is not in (0, 1]", req.FullnessThreshold)
	}
	if req.AvailableSpacePreference == 0 {
		req.AvailableSpacePreference = DefaultAvailableSpacePreference
	}
	if !(req.AvailableSpacePreference > 0 && req.AvailableSpacePreference < 1) {
		return heureka.Errorf(heureka.EINVALID, "placement: available-space preference %v is not in (0, 1)", req.AvailableSpacePreference)
	}
	if req.AvailableSpaceTolerance == 0 {
		req.AvailableSpaceTolerance = DefaultAvailableSpaceTolerance
	}
	if !(req.AvailableSpaceTolerance >= 0 && req.AvailableSpaceTolerance <= 100) {
		return heureka.Errorf(heureka.EINVALID, "placement: available-space tolerance %v is not in [0, 100]", req.AvailableSpaceTolerance)
	}
	return nil
}

// metaInt reads a non-negative decimal metadata value.
func metaInt(md heureka.Metadata, key string) (int64, bool) {
	s, ok := md.Lookup(key)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// matchesHost reports whether in is the host named by a host name (any case)
// or an IP address.
func matchesHost(in *heureka.Instance, host string) bool {
	return (in.HostName != "" && strings.EqualFold(in.HostName, host)) || (in.IPAddr != "" && in.IPAddr == host)
}

// maxNodesPerRack is BlockPlacementPolicyDefault.getMaxNodesPerRack for a new
// block: the per-rack cap to enforce (math.MaxInt for none) and the cap to
// report (0 for none).
func maxNodesPerRack(replicas, clusterSize, racks int) (int, int) {
	total := min(replicas, clusterSize)
	if racks <= 1 || total <= 1 {
		return math.MaxInt, 0
	}
	m := (total-1)/racks + 2
	if m == total {
		m--
	}
	return m, m
}

type placer struct {
	cands      []*candidate
	known      []*candidate // pick's pools, kept for the next step
	unknown    []*candidate
	hung       []*candidate
	order      []*candidate
	perRack    []int // chosen per rack, by candidate.rackIdx
	maxPerRack int
	req        *PlacementRequest
}

// place runs the steps of BlockPlacementPolicyDefault.chooseTargetInOrder.
// Each step's fallbacks end in "anywhere", so a step that finds nothing
// means no candidate is left and placement stops.
func (p *placer) place(n int, local *candidate, writerRack string) {
	onRack := func(r string) func(*candidate) bool { return func(c *candidate) bool { return c.rack == r } }
	offRack := func(r string) func(*candidate) bool { return func(c *candidate) bool { return c.rack != r } }
	anywhere := func(*candidate) bool { return true }

	for len(p.order) < n {
		var c *candidate
		switch len(p.order) {
		case 0:
			if local != nil && p.usable(local) {
				c = local
			} else if writerRack != "" {
				c = p.pick(onRack(writerRack), anywhere)
			} else {
				c = p.pick(anywhere)
			}
		case 1:
			r0 := p.order[0].rack
			c = p.pick(offRack(r0), onRack(r0))
		case 2:
			r0, r1 := p.order[0].rack, p.order[1].rack
			if r0 == r1 {
				c = p.pick(offRack(r0), onRack(r0))
			} else {
				c = p.pick(onRack(r1), onRack(r0), anywhere)
			}
		default:
			c = p.pick(anywhere)
		}
		if c == nil {
			return
		}
		c.chosen = true
		p.perRack[c.rackIdx]++
		p.order = append(p.order, c)
	}
}

func (p *placer) usable(c *candidate) bool {
	return !c.chosen && p.perRack[c.rackIdx] < p.maxPerRack
}

// pick tries each scope in turn and returns a random usable candidate from
// the first scope that has one: among nodes of known capacity if any, else
// among those of unknown capacity, else among hung ones.
func (p *placer) pick(scopes ...func(*candidate) bool) *candidate {
	for _, scope := range scopes {
		// The pools are reused from step to step: with 100k candidates
		// they are the largest thing a choice allocates.
		known, unknown, hung := p.known[:0], p.unknown[:0], p.hung[:0]
		for _, c := range p.cands {
			switch {
			case !p.usable(c) || !scope(c):
			case c.hung:
				hung = append(hung, c)
			case c.known:
				known = append(known, c)
			default:
				unknown = append(unknown, c)
			}
		}
		p.known, p.unknown, p.hung = known, unknown, hung
		switch {
		case len(known) > 0:
			return p.choose(known)
		case len(unknown) > 0:
			return unknown[p.intN(len(unknown))]
		case len(hung) > 0:
			return hung[p.intN(len(hung))]
		}
	}
	return nil
}

// choose picks one of pool (all of known capacity) uniformly, or by the
// AvailableSpace rule when it is on.
func (p *placer) choose(pool []*candidate) *candidate {
	if !p.req.AvailableSpace || len(pool) < 2 {
		return pool[p.intN(len(pool))]
	}
	i := p.intN(len(pool))
	j := p.intN(len(pool) - 1)
	if j >= i {
		j++
	}
	a, b := pool[i], pool[j]
	if math.Abs(a.usedPct-b.usedPct) < p.req.AvailableSpaceTolerance {
		return a
	}
	less, more := a, b
	if b.usedPct < a.usedPct {
		less, more = b, a
	}
	if p.float64() < p.req.AvailableSpacePreference {
		return less
	}
	return more
}

func (p *placer) intN(n int) int {
	if p.req.Rand != nil {
		return p.req.Rand.IntN(n)
	}
	return rand.IntN(n)
}

func (p *placer) float64() float64 {
	if p.req.Rand != nil {
		return p.req.Rand.Float64()
	}
	return rand.Float64()
}

func shortError(pl Placement, threshold float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "placed %d of %d replicas (%d short): %d eligible DataNodes on %d racks",
		len(pl.Nodes), pl.Requested, pl.Short, pl.Eligible, pl.Racks)
	if pl.Eligible > len(pl.Nodes) && pl.MaxPerRack > 0 {
		fmt.Fprintf(&b, ", at most %d per rack", pl.MaxPerRack)
	}
	var skipped []string
	for _, r := range []SkipReason{SkipNotUp, SkipDraining, SkipPenalized, SkipFull, SkipDuplicate} {
		if k := pl.Skipped[r]; k > 0 {
			s := fmt.Sprintf("%d %s", k, r)
			if r == SkipFull {
				s += fmt.Sprintf(" (over %g%% used or without room for the block)", 100*threshold)
			}
			skipped = append(skipped, s)
		}
	}
	if len(skipped) > 0 {
		b.WriteString("; skipped ")
		b.WriteString(strings.Join(skipped, ", "))
	}
	return heureka.Errorf(heureka.EUNAVAILABLE, "%s", b.String())
}

package registry

import (
	"github.com/heureka-project/heureka"
)

// Expiry and self-preservation's counts, kept as leases come and go so that
// a tick costs what expired and what renewed since the last one, never a
// walk of every lease.
//
// Times here are virtual: a lease stores its last renewal less the grace in
// force at the time (Registry.grace), and the tick compares deadlines with
// now less the grace in force now. Granting every lease the length of a
// pause is then one addition to the grace.
//
// Every live lease is in exactly one of two places. The expiry queue holds
// the leases not expired as of the last tick, ordered by their deadline as
// last seen. A renewal (the hot path, under the read lock) only moves the
// lease's atomic renewal time forward, so a deadline in the queue is never
// later than the lease's real one: the tick pops what is due and pushes back
// what renewed since, with its new deadline. A writer that moves a deadline
// back (a lease shortened, the clock stepped back) fixes the queue under the
// write lock. The lost list holds the leases found expired and not yet
// evicted (self-preservation holds them back); the tick looks at each of
// them for a renewal that brings it back.
//
// The queue, the lost list and the census are guarded by Registry.mu held
// for writing, or held for reading together with Registry.tickMu.

// deadline returns when the lease expires, in virtual nanoseconds.
func (l *lease) deadline() int64 { return l.renewed.Load() + int64(l.duration) }

// census holds the counts self-preservation decides on.
type census struct {
	instances     int
	expectedMilli int64 // renewals per minute every lease's interval promises, thousandths
	racks, apps   domains
}

// domains counts instances and the lost among them per failure domain. A
// domain exists while it has instances.
type domains struct {
	m   map[string]domainCount
	hit int // domains with a lost instance
}

type domainCount struct{ instances, lost int }

// add changes a domain's counts by the deltas.
func (d *domains) add(name string, instances, lost int) {
	if d.m == nil {
		d.m = map[string]domainCount{}
	}
	c := d.m[name]
	wasHit := c.lost > 0
	c.instances += instances
	c.lost += lost
	if isHit := c.lost > 0; isHit != wasHit {
		if isHit {
			d.hit++
		} else {
			d.hit--
		}
	}
	if c.instances == 0 {
		delete(d.m, name)
		return
	}
	d.m[name] = c
}

// spread is how losses spread over one dimension's domains.
type spread struct{ domains, hit int }

func (d *domains) spread() spread { return spread{len(d.m), d.hit} }

// informative reports whether the dimension says anything: one domain
// cannot tell a registry's isolation from the domain's failure.
func (s spread) informative() bool { return s.domains >= 2 }

// wide reports whether the losses touch more than half of the domains.
func (s spread) wide() bool { return s.hit*2 > s.domains }

// rackOf is an instance's failure domain: its rack, else its availability
// zone.
func rackOf(in *heureka.Instance) string {
	if rack := in.Metadata["rack"]; rack != "" {
		return rack
	}
	return in.DataCenter.Metadata["availability-zone"]
}

// track starts counting a new lease, whose inst, renewed and duration are
// set, and schedules it; r.mu must be held for writing.
func (r *Registry) track(l *lease) {
	l.rack = rackOf(l.inst)
	r.census.instances++
	r.census.expectedMilli += renewsPerMinMilli(l.inst)
	r.census.racks.add(l.rack, 1, 0)
	r.census.apps.add(l.inst.App, 1, 0)
	l.idx = int32(len(r.expiry))
	r.expiry = append(r.expiry, expiryItem{at: l.deadline(), l: l})
	r.expiry.up(int(l.idx))
}

// untrack stops counting a lease that is being removed; r.mu must be held
// for writing.
func (r *Registry) untrack(l *lease) {
	lost := 0
	if l.lost {
		lost = 1
		r.dropLost(l)
	} else {
		r.expiry.remove(int(l.idx))
	}
	r.census.instances--
	r.census.expectedMilli -= renewsPerMinMilli(l.inst)
	r.census.racks.add(l.rack, -1, -lost)
	r.census.apps.add(l.inst.App, -1, -lost)
}

// setInst gives a tracked lease a new value, moving its counts if its rack
// or renewal interval changed; r.mu must be held for writing.
func (r *Registry) setInst(l *lease, in *heureka.Instance) {
	r.census.expectedMilli += renewsPerMinMilli(in) - renewsPerMinMilli(l.inst)
	if rack := rackOf(in); rack != l.rack {
		lost := 0
		if l.lost {
			lost = 1
		}
		r.census.racks.add(l.rack, -1, -lost)
		r.census.racks.add(rack, 1, lost)
		l.rack = rack
	}
	l.inst = in
}

// reschedule puts a tracked lease at its current deadline after a writer
// set its renewal time or duration, which may have moved the deadline back;
// r.mu must be held for writing. A lost lease stays lost until the next
// tick sees it renewed.
func (r *Registry) reschedule(l *lease) {
	if !l.lost {
		r.expiry.fix(int(l.idx), l.deadline())
	}
}

// lose moves a lease popped from the queue to the lost list.
func (r *Registry) lose(l *lease) {
	l.lost = true
	l.idx = int32(len(r.lost))
	r.lost = append(r.lost, l)
	r.census.racks.add(l.rack, 0, 1)
	r.census.apps.add(l.inst.App, 0, 1)
}

// recover moves a lost lease that renewed back to the queue.
func (r *Registry) recover(l *lease) {
	r.dropLost(l)
	r.census.racks.add(l.rack, 0, -1)
	r.census.apps.add(l.inst.App, 0, -1)
	l.idx = int32(len(r.expiry))
	r.expiry = append(r.expiry, expiryItem{at: l.deadline(), l: l})
	r.expiry.up(int(l.idx))
}

// dropLost takes a lease off the lost list (by swapping the last one in).
func (r *Registry) dropLost(l *lease) {
	i, last := int(l.idx), len(r.lost)-1
	r.lost[i] = r.lost[last]
	r.lost[i].idx = int32(i)
	r.lost[last] = nil
	r.lost = r.lost[:last]
	l.lost = false
}

// advance brings the queue and the lost list up to vnow, a virtual time:
// lost leases that renewed are back, leases whose deadline passed without a
// renewal are lost, and leases that renewed since their deadline was last
// seen go back with the new one. It returns the number of leases it looked
// at. r.mu must be held for reading, with r.tickMu.
func (r *Registry) advance(vnow int64) int {
	seen := len(r.lost)
	for i := 0; i < len(r.lost); {
		if l := r.lost[i]; l.deadline() >= vnow {
			r.recover(l) // swaps the last lost lease into i
			continue
		}
		i++
	}
	for len(r.expiry) > 0 && r.expiry[0].at < vnow {
		seen++
		l := r.expiry[0].l
		if at := l.deadline(); at >= vnow {
			r.expiry.fix(0, at)
			continue
		}
		r.expiry.remove(0)
		r.lose(l)
	}
	return seen
}

// expiryQueue is a min-heap of leases by deadline, each lease knowing its
// position (lease.idx).
type expiryQueue []expiryItem

type expiryItem struct {
	at int64 // the lease's deadline as last seen, virtual nanoseconds
	l  *lease
}

func (q expiryQueue) swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].l.idx = int32(i)
	q[j].l.idx = int32(j)
}

func (q expiryQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if q[p].at <= q[i].at {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q expiryQueue) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(q) {
			return
		}
		if c+1 < len(q) && q[c+1].at < q[c].at {
			c++
		}
		if q[i].at <= q[c].at {
			return
		}
		q.swap(i, c)
		i = c
	}
}

// fix sets the deadline of the item at i and restores the order.
func (q expiryQueue) fix(i int, at int64) {
	q[i].at = at
	l := q[i].l
	q.up(i)
	q.down(int(l.idx))
}

// remove deletes the item at i.
func (q *expiryQueue) remove(i int) {
	h := *q
	last := len(h) - 1
	if i != last {
		h.swap(i, last)
	}
	h[last] = expiryItem{}
	h = h[:last]
	*q = h
	if i < last {
		moved := h[i].l
		h.up(i)
		h.down(int(moved.idx))
	}
}

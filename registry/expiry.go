package registry

import "time"

// Expiry and self-preservation's counts, kept as leases come and go so that
// a tick costs what expired and what renewed since the last one, never a
// walk of every lease.
//
// A lease is silent once it has missed a renewal: half an interval has
// passed since the renewal was due, and half the lease (silentAfter). It expires at its
// duration. Self-preservation judges a loss by the silent leases, not only
// the expired ones, because a registry cut off from its clients does not
// see their leases run out together: each client renews at its own moment
// in the interval, so the leases run out one by one over a whole interval.
// Judged by the expired alone, the first of them would look like a few
// isolated deaths and be evicted before the loss showed its size. Every
// lease that stopped with a given one is silent within an interval of it,
// so a lease is evicted only once that much has passed (evictAfter): at
// its expiry when the lease is at least 2.5 intervals long, as for the
// usual 10 s renewals and 30 s leases, and up to an interval after it when
// the lease is shorter.
//
// Times here are virtual: a lease stores its last renewal less the grace in
// force at the time (Registry.grace), and the tick compares them with now
// less the grace in force now. Granting every lease the length of a pause
// is then one addition to the grace.
//
// Every live lease is in exactly one of two places. The expiry queue holds
// the leases not silent as of the last tick, ordered by when they fall
// silent as last seen. A renewal (the hot path, under the read lock) only
// moves the lease's atomic renewal time forward, so a time in the queue is
// never later than the lease's real one: the tick pops what is due and
// pushes back what renewed since, with its new time. A writer that moves
// that time back (a lease shortened, the clock stepped back) fixes the
// queue under the write lock. The silent list holds the leases found
// silent and not yet evicted; the tick looks at each of them for a renewal
// that brings it back, and for those that have expired.
//
// The queue, the silent list and the census are guarded by Registry.mu held
// for writing, or held for reading together with Registry.tickMu.

// deadline returns when the lease expires, in virtual nanoseconds.
func (l *lease) deadline() int64 { return l.renewed.Load() + int64(l.duration) }

// interval is the renewal interval the lease's client promised, at least a
// second and at most the lease.
func (l *lease) interval() time.Duration {
	iv := time.Duration(max(l.inst.lease.RenewalIntervalSecs, 1)) * time.Second
	return min(iv, l.duration)
}

// silentAfter is how long after its last renewal the lease counts as
// silent: the next renewal is half an interval late and half the lease has
// passed, or the lease has expired. The half lease keeps a client that
// renews less often than it promised, well within a long lease, from
// counting as silent.
func (l *lease) silentAfter() time.Duration {
	return min(max(l.interval()*3/2, l.duration/2), l.duration)
}

// quietAt returns when the lease falls silent, in virtual nanoseconds. It
// reads the cached silentAfter (lease.quiet): the tick calls it for every
// lease it pops, and the instance is a pointer away.
func (l *lease) quietAt() int64 { return l.renewed.Load() + int64(l.quiet) }

// evictableAt returns when an expired lease may be evicted, in virtual
// nanoseconds: once it has expired and every lease that stopped renewing
// with it has fallen silent, an interval after it did.
func (l *lease) evictableAt() int64 {
	return l.renewed.Load() + int64(max(l.duration, l.quiet+l.interval()))
}

// census holds the counts self-preservation decides on.
type census struct {
	instances     int
	expectedMilli int64 // renewals per minute every lease's interval promises, thousandths
	racks, apps   domains
}

// domains counts instances and the silent among them per failure domain. A
// domain exists while it has instances.
type domains struct {
	m   map[string]domainCount
	hit int // domains with a silent instance
}

type domainCount struct{ instances, silent int }

// add changes a domain's counts by the deltas.
func (d *domains) add(name string, instances, silent int) {
	if d.m == nil {
		d.m = map[string]domainCount{}
	}
	c := d.m[name]
	wasHit := c.silent > 0
	c.instances += instances
	c.silent += silent
	if isHit := c.silent > 0; isHit != wasHit {
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
// zone. It is a slice of the instance's metadata: a lease keeps the
// interned copy.
func rackOf(s *stored) string {
	if rack := s.md.Get("rack"); rack != "" {
		return rack
	}
	return s.dcmd.Get("availability-zone")
}

// track starts counting a new lease, whose inst, renewed and duration are
// set, and schedules it; r.mu must be held for writing.
func (r *Registry) track(l *lease) {
	l.status, l.lastDirty = l.inst.status, l.inst.lastDirty
	l.rack = r.strs.str(rackOf(l.inst))
	r.census.instances++
	r.census.expectedMilli += renewsPerMinMilli(l.inst)
	r.census.racks.add(l.rack, 1, 0)
	r.census.apps.add(l.inst.app(), 1, 0)
	l.quiet = l.silentAfter()
	r.enqueue(l)
}

// untrack stops counting a lease that is being removed; r.mu must be held
// for writing.
func (r *Registry) untrack(l *lease) {
	silent := 0
	if l.silent {
		silent = 1
		r.dropSilent(l)
	} else {
		r.expiry.remove(int(l.idx))
	}
	r.census.instances--
	r.census.expectedMilli -= renewsPerMinMilli(l.inst)
	r.census.racks.add(l.rack, -1, -silent)
	r.census.apps.add(l.inst.app(), -1, -silent)
}

// setInst gives a tracked lease a new value, moving its counts if its rack
// or renewal interval changed; r.mu must be held for writing. A caller that
// changes the lease's duration does so first. setInst reschedules the lease
// when the value or the duration moved the time it falls silent; a caller
// that changes the renewal time reschedules it afterwards.
func (r *Registry) setInst(l *lease, in *stored) {
	r.census.expectedMilli += renewsPerMinMilli(in) - renewsPerMinMilli(l.inst)
	if rack := rackOf(in); rack != l.rack {
		rack = r.strs.str(rack) // not a slice of in's metadata, which it would keep alive
		silent := 0
		if l.silent {
			silent = 1
		}
		r.census.racks.add(l.rack, -1, -silent)
		r.census.racks.add(rack, 1, silent)
		l.rack = rack
	}
	l.inst = in
	l.status, l.lastDirty = in.status, in.lastDirty
	if q := l.silentAfter(); q != l.quiet {
		l.quiet = q
		r.reschedule(l)
	}
}

// reschedule puts a tracked lease at the time it now falls silent after a
// writer set its renewal time, duration or interval, which may have moved
// that time back; r.mu must be held for writing. A silent lease stays
// silent until the next tick sees it renewed.
func (r *Registry) reschedule(l *lease) {
	if !l.silent {
		r.expiry.fix(int(l.idx), l.quietAt())
	}
}

// enqueue puts a lease that is not silent in the queue.
func (r *Registry) enqueue(l *lease) {
	l.idx = int32(len(r.expiry))
	r.expiry = append(r.expiry, expiryItem{at: l.quietAt(), l: l})
	r.expiry.up(int(l.idx))
}

// quiet moves a lease popped from the queue to the silent list.
func (r *Registry) quiet(l *lease) {
	l.silent = true
	l.idx = int32(len(r.silent))
	r.silent = append(r.silent, l)
	r.census.racks.add(l.rack, 0, 1)
	r.census.apps.add(l.inst.app(), 0, 1)
}

// recover moves a silent lease that renewed back to the queue.
func (r *Registry) recover(l *lease) {
	r.dropSilent(l)
	r.census.racks.add(l.rack, 0, -1)
	r.census.apps.add(l.inst.app(), 0, -1)
	r.enqueue(l)
}

// dropSilent takes a lease off the silent list (by swapping the last one
// in).
func (r *Registry) dropSilent(l *lease) {
	i, last := int(l.idx), len(r.silent)-1
	r.silent[i] = r.silent[last]
	r.silent[i].idx = int32(i)
	r.silent[last] = nil
	r.silent = r.silent[:last]
	l.silent = false
}

// advance brings the queue and the silent list up to vnow, a virtual time:
// silent leases that renewed are back, leases that fell silent are on the
// list, and leases that renewed since they were last seen go back with
// their new time. It returns the number of leases it looked at. r.mu must
// be held for reading, with r.tickMu.
func (r *Registry) advance(vnow int64) int {
	seen := len(r.silent)
	for i := 0; i < len(r.silent); {
		if l := r.silent[i]; l.quietAt() >= vnow {
			r.recover(l) // swaps the last silent lease into i
			continue
		}
		i++
	}
	for len(r.expiry) > 0 && r.expiry[0].at < vnow {
		seen++
		l := r.expiry[0].l
		if at := l.quietAt(); at >= vnow {
			r.expiry.fix(0, at)
			continue
		}
		r.expiry.remove(0)
		r.quiet(l)
	}
	return seen
}

// expiryQueue is a min-heap of leases by when they fall silent, each lease
// knowing its position (lease.idx).
type expiryQueue []expiryItem

type expiryItem struct {
	at int64 // when the lease falls silent as last seen, virtual nanoseconds
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

// fix sets the time of the item at i and restores the order.
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

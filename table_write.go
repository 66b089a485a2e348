package ttl

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/schedule"
)

// A cellWriter builds the recipes of one call at the call's one reading of
// the clock. The changes of a call mostly share a family and a lifetime,
// and with one now those give one timestamp: the cellWriter remembers the last
// family it looked up and the last timestamp it computed in it, so that a
// run of such changes pays for the lookup and the arithmetic once. Strategies
// are pure functions of (now, lifetime), so a remembered timestamp is the
// one the strategy would compute again; errors are not remembered (their
// messages name the change's column).
type cellWriter struct {
	t   *Table
	now time.Time

	looked bool        // whether family is set
	family string      // the family last looked up
	f      *familyRule // its rule; nil for a family without a strategy

	stamped   bool // whether the fields below are life's in family
	life      Lifetime
	ts        bigtable.Timestamp
	old       rules.Range // the timestamps ts makes obsolete, when supersede
	supersede bool

	// With a schedule: the call's entries, and the row being built,
	// whose entries they are. sched is nil without a schedule.
	sched *schedule.Batch
	row   string

	// ApplyBulk's: the mutations the next rows are built into, made a
	// batch at a time, so that a row costs no allocation of its own for
	// its bigtable.Mutation (the raw client's NewMutation per row).
	slab []bigtable.Mutation
}

func (t *Table) writer(now time.Time) cellWriter { return cellWriter{t: t, now: now} }

// start makes w the writer of a call of t at now, as t.writer makes one,
// in place: the timestamp it remembers is forgotten, and the strategy it
// last looked up too unless it was t's (a table's strategies never
// change).
func (w *cellWriter) start(t *Table, now time.Time) {
	if w.t != t {
		w.t, w.looked, w.f = t, false, nil
	}
	w.now, w.stamped = now, false
}

// schedule adds to the call's entries the one of the row's cells stamped
// ts in the family last looked up, a scheduled one, unless they do not
// expire (Forever).
func (w *cellWriter) schedule(ts bigtable.Timestamp) {
	if exp, ok := w.f.expiresAt(ts); ok && w.sched != nil {
		w.sched.Add(w.row, exp)
	}
}

// newBuilt returns an empty built, its mutation the next of the slab when
// the writer has one.
func (w *cellWriter) newBuilt() built {
	if len(w.slab) > 0 {
		return built{m: &w.slab[0]}
	}
	return newBuilt()
}

// bulkSlab is the most rows' bigtable.Mutations ApplyBulk and ApplyBatch
// allocate at once: a batch costs one allocation where the raw client's
// rows cost one each, and keeps the built rows of at most one batch from
// an earlier group in memory.
const bulkSlab = 128

// refill gives the writer a slab for the next rows, when it has none:
// at most bulkSlab, and no more than the rows left.
func (w *cellWriter) refill(left int) {
	if len(w.slab) == 0 {
		w.slab = make([]bigtable.Mutation, min(left, bulkSlab))
	}
}

// keep returns b, built whole, taking its mutation from the slab.
func (w *cellWriter) keep(b built) built {
	if len(w.slab) > 0 && b.m == &w.slab[0] {
		w.slab = w.slab[1:]
	}
	return b
}

// drop returns err for b, which was refused: its mutation, if the slab's,
// is emptied for the next row.
func (w *cellWriter) drop(b built, err error) (built, error) {
	if len(w.slab) > 0 && b.m == &w.slab[0] {
		*b.m = bigtable.Mutation{}
	}
	return built{}, err
}

// Whether a recipe being built is a branch of a conditional one, which
// cannot be conditional itself.
type nesting bool

const (
	topLevel nesting = false // a call's own Mutation
	inBranch nesting = true  // a branch of a conditional Mutation
)

// build turns a recipe into a bigtable.Mutation at the writer's now, or
// reports the first invalid change in it.
func (w *cellWriter) build(m *Mutation, nested nesting) (built, error) {
	if m == nil {
		return built{}, fmt.Errorf("%w: nil mutation", ErrInvalidMutation)
	}
	if m.isCond() {
		return w.buildCond(m, nested)
	}
	if m.empty() {
		return built{}, fmt.Errorf("%w: mutation has no changes", ErrInvalidMutation)
	}
	b := w.newBuilt()
	if m.x == nil && m.runs[1].n == 0 {
		// One run, of at most five changes.
		if err := w.addRun(&b, &m.runs[0], m.first[:m.n]); err != nil {
			return w.drop(b, err)
		}
		return w.keep(b), nil
	}
	first, more := m.changes()
	for i := range m.nruns() {
		r := m.runAt(i)
		// The run's changes: what is left of first, then of more.
		k := min(int(r.n), len(first))
		head, tail := first[:k], more[:int(r.n)-k]
		first, more = first[k:], more[len(tail):]
		for _, part := range [2][]change{head, tail} {
			if len(part) == 0 {
				continue
			}
			if err := w.addRun(&b, r, part); err != nil {
				return w.drop(b, err)
			}
		}
	}
	return w.keep(b), nil
}

// buildCond builds a conditional mutation whose predicate sees only the
// cells live at now.
func (w *cellWriter) buildCond(m *Mutation, nested nesting) (built, error) {
	switch {
	case nested == inBranch:
		return built{}, fmt.Errorf("%w: a conditional mutation cannot be a branch of another", ErrInvalidMutation)
	case !m.empty():
		return built{}, fmt.Errorf("%w: a conditional mutation has no changes of its own; put them in its branches", ErrInvalidMutation)
	}
	var branches [2]*bigtable.Mutation
	n := 0
	for i, branch := range [2]*Mutation{m.x.mtrue, m.x.mfalse} {
		if branch == nil || !branch.isCond() && branch.empty() {
			continue
		}
		b, err := w.build(branch, inBranch)
		if err != nil {
			return built{}, err
		}
		branches[i] = b.m
		n += b.n
	}
	if branches[0] == nil && branches[1] == nil {
		return built{}, fmt.Errorf("%w: conditional mutation has no changes in either branch", ErrInvalidMutation)
	}
	cond := w.t.plan.live(w.now.Add(w.t.margin))
	if m.x.cond != nil {
		cond = bigtable.ChainFilters(cond, m.x.cond)
	}
	return built{m: bigtable.NewCondMutation(cond, branches[0], branches[1]), n: n}, nil
}

// lookup returns the strategy of family, and false for a family without
// one.
func (w *cellWriter) lookup(family string) (Strategy, bool) {
	if !w.looked || family != w.family {
		w.f = w.t.family(family)
		w.looked, w.family, w.stamped = true, family, false
	}
	if w.f == nil {
		return nil, false
	}
	return w.f.s, true
}

// stamp returns the timestamp of a cell of family (whose strategy is s)
// written with life, refusing one the read margin would hide at once, and
// the timestamps of its column it makes obsolete.
func (w *cellWriter) stamp(s Strategy, family, column string, life Lifetime) (ts bigtable.Timestamp, old rules.Range, supersede bool, err error) {
	if w.stamped && life == w.life {
		return w.ts, w.old, w.supersede, nil
	}
	f := w.f
	if f.timed && w.t.margin == 0 {
		// What s.Timestamp returns first, without its checks and calls;
		// a time strategy supersedes nothing.
		if ts, ok := quickTimestamp(f.time, w.now, life); ok {
			w.stamped, w.life, w.ts, w.old, w.supersede = true, life, ts, rules.Range{}, false
			return ts, rules.Range{}, false, nil
		}
	}
	if f.versions && life.kind == lifeVersion && life.n >= 0 && life.n <= maxSequence {
		// What sequenceNumbers.Timestamp returns, which supersedes
		// nothing and never expires (so the read margin has no say).
		ts = bigtable.Timestamp(life.n * 1000)
		w.stamped, w.life, w.ts, w.old, w.supersede = true, life, ts, rules.Range{}, false
		return ts, rules.Range{}, false, nil
	}
	ts, err = w.t.stamp(s, w.now, life, family, column)
	if err != nil {
		return 0, rules.Range{}, false, err
	}
	old, supersede = s.supersedes(ts)
	w.stamped, w.life, w.ts, w.old, w.supersede = true, life, ts, old, supersede
	return ts, old, supersede, nil
}

// addRun adds changes, all or part of run r, to b, in order. What the
// run's changes share is checked once, at its first change, and the
// column of each change where it matters, so that the error is the one
// the first invalid change would give on its own. It is long because it
// is the one switch over every kind of run; its two loops (cells alone,
// the common case, and cells with companions) are kept apart for speed.
func (w *cellWriter) addRun(b *built, r *run, changes []change) error {
	family := r.family
	if r.kind == opDeleteRow {
		for range changes {
			b.deleteRow()
		}
		return nil
	}
	s, managed := w.lookup(family)
	switch {
	case r.kind == opAdd && !managed:
		if err := w.t.checkUnmanaged(family, changes[0].column); err != nil {
			return err
		}
		return w.addCounters(b, family, changes)
	case r.kind == opAdd:
		return w.addCounters(b, family, changes)
	case !managed:
		return w.t.addUnmanaged(b, w.now, r, changes)
	case w.f.counter && (r.kind == opSet || r.kind == opReplace):
		return fmt.Errorf("%w: a Set or Replace in the counter family %q, whose cells are sums (column %q); add to them with Mutation.Add",
			ErrCounter, family, changes[0].column)
	}
	if r.kind == opDeleteFamily {
		for range changes {
			b.deleteFamily(family)
		}
		return nil
	}
	c := w.t.companions
	if r.kind == opSet && !c {
		// The common run: only cells, no companions.
		ts, old, supersede, err := w.stamp(s, family, changes[0].column, r.life())
		if err != nil {
			return err
		}
		if w.f.scheduled {
			w.schedule(ts)
		}
		for i := range changes {
			o := &changes[i]
			if supersede {
				b.deleteRange(family, o.column, old.Lo, old.Hi) // Hi 0: no end
			}
			b.set(family, o.column, ts, o.value)
		}
		return nil
	}
	for i := range changes {
		o := &changes[i]
		if err := c.checkColumn(family, o.column); err != nil {
			return err
		}
		if r.kind == opDeleteColumn || r.kind == opReplace {
			b.deleteColumn(family, o.column)
			c.deleteColumn(b, family, o.column)
			if r.kind == opDeleteColumn {
				continue
			}
		}
		ts, old, supersede, err := w.stamp(s, family, o.column, r.life())
		if err != nil {
			return err
		}
		if w.f.scheduled {
			w.schedule(ts)
		}
		if supersede {
			b.deleteRange(family, o.column, old.Lo, old.Hi) // Hi 0: no end
			c.deleteRange(b, family, o.column, old.Lo, old.Hi)
		}
		b.set(family, o.column, ts, o.value)
		c.set(b, family, o.column, ts, w.now)
	}
	return nil
}

// addCounters adds the increments of changes, all or part of a run of
// Adds, to family, which must be a Counter family: each to the cell of the
// window of its Window that holds now, stamped with the window's expiry.
// An increment whose window has expired (within the read margin) is
// refused, as a Set born expired is.
func (w *cellWriter) addCounters(b *built, family string, changes []change) error {
	if w.f == nil || !w.f.counter {
		return fmt.Errorf("%w: an Add to %q, which is not a Counter family (column %q): a counter needs an aggregate family; declare it with ttl.Counter",
			ErrCounter, family, changes[0].column)
	}
	var last Window
	var ts bigtable.Timestamp
	for i := range changes {
		o := &changes[i]
		if err := w.t.companions.checkColumn(family, o.column); err != nil {
			return err
		}
		delta, win := decodeAdd(o.value)
		if i == 0 || win != last {
			if err := win.check(); err != nil {
				return fmt.Errorf("%w (family %q, column %q)", err, family, o.column)
			}
			start := win.start(w.now)
			if expiry := start.Add(win.Size + win.Keep); !expiry.After(w.now.Add(w.t.margin)) {
				return fmt.Errorf("%w: %v: the window expires at %v, within the read margin of %v after now (%v) (family %q, column %q)",
					ErrExpired, win, expiry.UTC().Format(time.RFC3339Nano), w.t.margin, w.now.UTC().Format(time.RFC3339Nano), family, o.column)
			}
			var err error
			if ts, err = win.stamp(w.f.time, start); err != nil {
				return fmt.Errorf("%w (family %q, column %q)", err, family, o.column)
			}
			if w.f.scheduled {
				w.schedule(ts)
			}
			last = win
		}
		b.addInt(family, o.column, ts, delta)
	}
	return nil
}

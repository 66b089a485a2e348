package ttl

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
)

// Apply applies m to the row atomically, with the timestamps its lifetimes
// give at the clock's now. If any change in m is invalid, Apply sends
// nothing and returns an error naming it. opts are passed to Bigtable
// (bigtable.GetCondMutationResult works as usual).
func (t *Table) Apply(ctx context.Context, row string, m *Mutation, opts ...bigtable.ApplyOption) error {
	if err := t.check(ctx, "Apply"); err != nil {
		return err
	}
	b, err := t.build(t.now(), m, false)
	if err != nil {
		return err
	}
	return t.tbl.Apply(ctx, row, b.m, opts...)
}

// build turns a recipe into a bigtable.Mutation at now, or reports the
// first invalid change in it.
func (t *Table) build(now time.Time, m *Mutation, nested bool) (built, error) {
	if m == nil {
		return built{}, fmt.Errorf("%w: nil mutation", ErrInvalidMutation)
	}
	if m.isCond {
		return t.buildCond(now, m, nested)
	}
	if len(m.ops) == 0 {
		return built{}, fmt.Errorf("%w: mutation has no changes", ErrInvalidMutation)
	}
	b := newBuilt()
	for _, o := range m.ops {
		if err := t.add(&b, now, o); err != nil {
			return built{}, err
		}
	}
	return b, nil
}

// buildCond builds a conditional mutation whose predicate sees only the
// cells live at now.
func (t *Table) buildCond(now time.Time, m *Mutation, nested bool) (built, error) {
	switch {
	case nested:
		return built{}, fmt.Errorf("%w: a conditional mutation cannot be a branch of another", ErrInvalidMutation)
	case len(m.ops) > 0:
		return built{}, fmt.Errorf("%w: a conditional mutation has no changes of its own; put them in its branches", ErrInvalidMutation)
	}
	var branches [2]*bigtable.Mutation
	n := 0
	for i, branch := range [2]*Mutation{m.mtrue, m.mfalse} {
		if branch == nil || !branch.isCond && len(branch.ops) == 0 {
			continue
		}
		b, err := t.build(now, branch, true)
		if err != nil {
			return built{}, err
		}
		branches[i] = b.m
		n += b.n
	}
	if branches[0] == nil && branches[1] == nil {
		return built{}, fmt.Errorf("%w: conditional mutation has no changes in either branch", ErrInvalidMutation)
	}
	cond := t.plan.live(now.Add(t.margin))
	if m.cond != nil {
		cond = bigtable.ChainFilters(cond, m.cond)
	}
	return built{m: bigtable.NewCondMutation(cond, branches[0], branches[1]), n: n}, nil
}

// add adds one recorded change to b, at now.
func (t *Table) add(b *built, now time.Time, o mutationOp) error {
	if o.kind == opDeleteRow {
		b.deleteRow()
		return nil
	}
	s, managed := t.managed[o.family]
	if !managed {
		return t.addUnmanaged(b, now, o)
	}
	if o.kind == opDeleteFamily {
		b.deleteFamily(o.family)
		return nil
	}
	if err := t.companions.checkColumn(o.family, o.column); err != nil {
		return err
	}
	if o.kind == opDeleteColumn || o.kind == opReplace {
		b.deleteColumn(o.family, o.column)
		t.companions.deleteColumn(b, o.family, o.column)
		if o.kind == opDeleteColumn {
			return nil
		}
	}
	ts, err := s.Timestamp(now, o.life)
	if err != nil {
		return fmt.Errorf("%w (family %q, column %q)", err, o.family, o.column)
	}
	if t.margin > 0 {
		if exp, ok := s.ExpiresAt(ts); ok && !exp.After(now.Add(t.margin)) {
			return fmt.Errorf("%w: %v expires at %v, within the read margin of %v after now (%v) (family %q, column %q)",
				ErrExpired, o.life, exp.UTC().Format(time.RFC3339Nano), t.margin, now.UTC().Format(time.RFC3339Nano), o.family, o.column)
		}
	}
	if old, ok := s.supersedes(ts); ok {
		b.deleteRange(o.family, o.column, old.lo, old.hi) // hi 0: no end
		t.companions.deleteRange(b, o.family, o.column, old.lo, old.hi)
	}
	b.set(o.family, o.column, ts, o.value)
	t.companions.set(b, o.family, o.column, ts, now)
	return nil
}

// addUnmanaged adds a change to a family without a strategy: only Default
// writes, stamped at now.
func (t *Table) addUnmanaged(b *built, now time.Time, o mutationOp) error {
	if err := t.checkUnmanaged(o.family, o.column); err != nil {
		return err
	}
	switch o.kind {
	case opDeleteFamily:
		b.deleteFamily(o.family)
		return nil
	case opDeleteColumn:
		b.deleteColumn(o.family, o.column)
		return nil
	}
	if o.life.kind != lifeDefault {
		return fmt.Errorf("%w: %v in a family without a strategy, which keeps cells as its GC policy says; use Default (family %q, column %q)",
			ErrLifetime, o.life, o.family, o.column)
	}
	ms, inRange := floorMillis(now)
	if inRange != 0 {
		return fmt.Errorf("%w: now (%v) is outside 1970 to the year 294,247 (family %q, column %q)",
			ErrOutOfRange, now.UTC().Format(time.RFC3339Nano), o.family, o.column)
	}
	if o.kind == opReplace {
		b.deleteColumn(o.family, o.column)
	}
	b.set(o.family, o.column, bigtable.Timestamp(ms*1000), o.value)
	return nil
}

// checkUnmanaged reports a family the table does not know: empty, or not
// declared when the families are.
func (t *Table) checkUnmanaged(family, column string) error {
	if err := checkFamilyName(family); err != nil {
		return fmt.Errorf("%w: %v (column %q)", ErrUnknownFamily, err, column)
	}
	if t.others != nil && !t.others[family] {
		return fmt.Errorf("%w: %q is neither managed nor declared with OtherFamilies (column %q)", ErrUnknownFamily, family, column)
	}
	return nil
}

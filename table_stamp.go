package ttl

import (
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/text"
)

// addUnmanaged adds changes, all or part of run r, to a family without a
// strategy: only Default writes, stamped at now. The family and the
// lifetime are checked once, at the first change.
func (t *Table) addUnmanaged(b *built, now time.Time, r *run, changes []change) error {
	family, column := r.family, changes[0].column
	if err := t.checkUnmanaged(family, column); err != nil {
		return err
	}
	switch r.kind {
	case opDeleteFamily:
		for range changes {
			b.deleteFamily(family)
		}
		return nil
	case opDeleteColumn:
		for i := range changes {
			b.deleteColumn(family, changes[i].column)
		}
		return nil
	}
	if r.lkind != lifeDefault {
		return fmt.Errorf("%w: %v in a family without a strategy, which keeps cells as its GC policy says; use Default (family %q, column %q)",
			ErrLifetime, r.life(), family, column)
	}
	ms, inRange := rules.FloorMillis(now)
	if inRange != 0 {
		return fmt.Errorf("%w: now (%v) is outside 1970 to the year 294,247 (family %q, column %q)",
			ErrOutOfRange, now.UTC().Format(time.RFC3339Nano), family, column)
	}
	for i := range changes {
		o := &changes[i]
		if r.kind == opReplace {
			b.deleteColumn(family, o.column)
		}
		b.set(family, o.column, bigtable.Timestamp(ms*1000), o.value)
	}
	return nil
}

// checkUnmanaged reports a family the table does not know: empty, or not
// declared when the families are.
func (t *Table) checkUnmanaged(family, column string) error {
	if err := rules.CheckFamilyName(family); err != nil {
		return fmt.Errorf("%w: %v (column %q)", ErrUnknownFamily, err, column)
	}
	if t.others != nil && !t.others[family] {
		return fmt.Errorf("%w: %q is neither managed nor declared with OtherFamilies (column %q)%s", ErrUnknownFamily, family, column, t.nearestFamily(family))
	}
	return nil
}

// nearestFamily returns ` (did you mean "sess"?)` for a managed or
// declared family within two edits of name, and "" otherwise.
func (t *Table) nearestFamily(name string) string {
	var names []string
	for f := range t.managed {
		names = append(names, f)
	}
	for f := range t.others {
		names = append(names, f)
	}
	sort.Strings(names) // Nearest keeps the first of equally near names
	if near := text.Nearest(name, names, 2); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

// stamp returns the timestamp of a cell written in a managed family at now
// with life, refusing one the read margin would hide at once: what Set
// writes.
func (t *Table) stamp(s Strategy, now time.Time, life Lifetime, family, column string) (bigtable.Timestamp, error) {
	ts, err := s.Timestamp(now, life)
	if err != nil {
		return 0, fmt.Errorf("%w (family %q, column %q)", err, family, column)
	}
	if t.margin > 0 {
		if exp, ok := s.ExpiresAt(ts); ok && !exp.After(now.Add(t.margin)) {
			return 0, fmt.Errorf("%w: %v expires at %v, within the read margin of %v after now (%v) (family %q, column %q)",
				ErrExpired, life, exp.UTC().Format(time.RFC3339Nano), t.margin, now.UTC().Format(time.RFC3339Nano), family, column)
		}
	}
	return ts, nil
}

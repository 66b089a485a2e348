package ttl

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/schedule"
)

// Schedules (issue 26): Bigtable has no index by timestamp, so a sweep
// that looks for expired cells reads the whole table. A table with a
// schedule writes, before each call's data, an index of the rows it
// writes by the second their cells expire, which a sweep reads instead.
// The layout is package schedule's; the writers add to a call's
// schedule.Batch as they stamp its cells (cellWriter.schedule), and the
// calls write the batch first.

// WithSchedule makes the table write a schedule beside its data: for
// every row a call writes with a cell that expires (not Forever) in one
// of families, and every second in which such cells of the row expire,
// one entry in tbl, the schedule table, laid out as package schedule
// (github.com/cellttl/ttl/schedule) says. A sweep given the schedule
// (sweep.Options.Schedule) then reads the entries of the seconds it
// covers and the rows they name, instead of the whole table.
// A family that cannot be scheduled is refused with ErrInvalidOption; a
// call whose entries fail writes no data and wraps ErrSchedule.
//
// Costs and rationale: docs/api-notes.md#ttlwithschedule.
func WithSchedule(tbl bigtable.TableAPI, families ...string) Option {
	return optionFunc(func(c *config) error {
		switch {
		case c.schedule.set:
			return fmt.Errorf("%w: WithSchedule is given twice: a table has one schedule", ErrInvalidOption)
		case tbl == nil || rules.IsNilPointer(tbl):
			return fmt.Errorf("%w: WithSchedule: nil bigtable.TableAPI", ErrNilArgument)
		}
		c.schedule = scheduleConfig{set: true, tbl: tbl, families: append([]string(nil), families...)}
		return nil
	})
}

// setSchedule makes the table write the schedule c describes, if any,
// beside data, the table's own: it marks the families scheduled.
func (t *Table) setSchedule(data bigtable.TableAPI, c scheduleConfig) error {
	if !c.set {
		return nil
	}
	if sameTable(data, c.tbl) {
		return fmt.Errorf("%w: WithSchedule: the schedule is the table given to NewTable; entries need a table of their own (with the family %q)",
			ErrInvalidOption, schedule.Family)
	}
	names := c.families
	if len(names) == 0 {
		for name, s := range t.managed {
			if s.rule().ExpiresAtInstant() {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			all := make([]string, 0, len(t.managed))
			for name := range t.managed {
				all = append(all, name)
			}
			sort.Strings(all)
			return fmt.Errorf("%w: WithSchedule: no managed family expires cells by time (families %q), so a schedule would stay empty",
				ErrInvalidOption, all)
		}
	}
	for i, name := range names {
		s, managed := t.managed[name]
		switch {
		case !managed:
			return fmt.Errorf("%w: WithSchedule: %w: %q is not a managed family, and only a managed family's cells expire",
				ErrInvalidOption, ErrUnknownFamily, name)
		case !s.rule().ExpiresAtInstant():
			return fmt.Errorf("%w: WithSchedule: family %q (%v): its cells do not expire at an instant, so nothing of it could be scheduled",
				ErrInvalidOption, name, s)
		}
		for _, seen := range names[:i] {
			if seen == name {
				return fmt.Errorf("%w: WithSchedule: family %q is named twice", ErrInvalidOption, name)
			}
		}
		t.family(name).scheduled = true
	}
	t.schedule = c.tbl
	return nil
}

// sameTable reports whether a and b are the same TableAPI value, without
// comparing values of a type that cannot be (which would panic).
func sameTable(a, b bigtable.TableAPI) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// batches holds the schedule batches of calls between calls, so that a
// call on a table with a schedule allocates none.
var batches = sync.Pool{New: func() any { return new(schedule.Batch) }}

// maxPooled is the most entries a batch returned to batches may have
// held: a batch's memory is kept for the next call, not that of the
// largest call ever made.
const maxPooled = 4096

// newBatch returns an empty batch for a call's entries.
func newBatch() *schedule.Batch { return batches.Get().(*schedule.Batch) }

// freeBatch returns b, if not nil, to batches.
func freeBatch(b *schedule.Batch) {
	if b == nil || b.Len() > maxPooled {
		return
	}
	b.Reset()
	batches.Put(b)
}

// writeEntries writes the entries of call in b to the schedule, and
// returns an error saying the call's data was not written if that fails.
func (t *Table) writeEntries(ctx context.Context, b *schedule.Batch, call string) error {
	if err := b.Write(ctx, t.schedule); err != nil {
		return fmt.Errorf("%w: %s: its data was not written: %w", ErrSchedule, call, err)
	}
	return nil
}

// scheduleRewrites writes the entries of the cells of family, a managed
// family, in row that a Touch or a renewal (call) is about to rewrite
// with stamps, when the family is scheduled.
func (t *Table) scheduleRewrites(ctx context.Context, row, family, call string, stamps ...bigtable.Timestamp) error {
	f := t.family(family)
	if !f.scheduled {
		return nil
	}
	b := newBatch()
	defer freeBatch(b)
	for _, ts := range stamps {
		if exp, ok := f.expiresAt(ts); ok {
			b.Add(row, exp)
		}
	}
	return t.writeEntries(ctx, b, call)
}

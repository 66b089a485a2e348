package ttl

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// ApplyReadModifyWrite applies m to the row atomically on the server, like
// bigtable.Table.ApplyReadModifyWrite, and returns the new cells. It is a
// single-row transaction, which an app profile with multi-cluster routing
// refuses: the error then wraps ErrTransactionNotAllowed. A counter
// family's Mutation.Add needs none.
//
// The server stamps each new cell with the later of its clock and the
// column's newest timestamp, so m is refused with ErrServerTimestamp in a
// OneSecond family (the cell would expire at once) and a SequenceNumbers
// family; it is allowed in a DefaultExpiration family, where the cell then
// lives for the default (or as long as the column's newest cell, if that
// lives longer), and in families without a strategy.
//
// Costs and rationale: docs/api-notes.md#ttltableapplyreadmodifywrite.
func (t *Table) ApplyReadModifyWrite(ctx context.Context, row string, m *ReadModifyWrite) (bigtable.Row, error) {
	if err := t.check(ctx, "ApplyReadModifyWrite"); err != nil {
		return nil, err
	}
	if m == nil || len(m.ops) == 0 {
		return nil, fmt.Errorf("%w: read-modify-write has no changes", ErrInvalidMutation)
	}
	now := t.now()
	rmw := bigtable.NewReadModifyWrite()
	var purge built
	for _, o := range m.ops {
		s, managed := t.managed[o.family]
		if !managed {
			if err := t.checkUnmanaged(o.family, o.column); err != nil {
				return nil, err
			}
		} else {
			ok, expired := s.readModifyWrite(now, t.margin)
			switch r := s.rule(); {
			case r.Counter:
				return nil, fmt.Errorf("%w: read-modify-write in the counter family %q, whose cells are sums (column %q); add to them with Mutation.Add",
					ErrCounter, o.family, o.column)
			case !ok && r.Kind == rules.ByTime && !o.isAppend:
				return nil, fmt.Errorf("%w: %v (family %q, column %q); for a counter that expires, count in a Counter family with Mutation.Add",
					ErrServerTimestamp, s, o.family, o.column)
			case !ok:
				return nil, fmt.Errorf("%w: %v (family %q, column %q)", ErrServerTimestamp, s, o.family, o.column)
			}
			if err := t.companions.checkColumn(o.family, o.column); err != nil {
				return nil, err
			}
			if purge.m == nil {
				purge = newBuilt()
			}
			for _, r := range expired {
				purge.deleteRange(o.family, o.column, r.Lo, r.Hi)
			}
			t.companions.deleteColumn(&purge, o.family, o.column)
		}
		if o.isAppend {
			rmw.AppendValue(o.family, o.column, o.append)
		} else {
			rmw.Increment(o.family, o.column, o.delta)
		}
	}
	if purge.n > 0 {
		if err := t.tbl.Apply(ctx, row, purge.m); err != nil {
			return nil, err
		}
	}
	r, err := t.tbl.ApplyReadModifyWrite(ctx, row, rmw)
	return r, t.transaction(err, "ApplyReadModifyWrite (a ReadModifyWriteRow)")
}

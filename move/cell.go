package move

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/routing"
	"github.com/cellttl/ttl/internal/rules"
)

// Rewriting one cell, and counting what rewriting cells did: what the
// rewrite of a move's old cells and Start's rewrite of misplaced cells
// both do, cell by cell, each only if it is still there unchanged: a
// writer always wins.

// Counts count what rewriting cells did.
type Counts struct {
	// Rewritten counts the cells rewritten in the new encoding (in a dry
	// run, those that would be).
	Rewritten int64 `json:"rewritten"`
	// Kept counts the cells left as they were: changed or deleted by a
	// writer meanwhile, or kept below a newer cell of their column that
	// the rewritten cell would outrank.
	Kept int64 `json:"kept"`
	// Expired counts the old cells already expired, left for GC.
	Expired int64 `json:"expired"`
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Rewritten += o.Rewritten
	c.Kept += o.Kept
	c.Expired += o.Expired
}

// moveCell rewrites the cell of family:column in row stamped ts, holding
// value, at to instead, atomically and only if the cell is still there
// unchanged and no other cell of its column is stamped between ts and to
// (to included): a cell that would be outranked, or would outrank, stays
// in its place. It reports whether the cell moved.
//
// A refusal of the conditional write by an app profile with multi-cluster
// routing wraps ttl.ErrTransactionNotAllowed, naming profile (the app
// profile, "" when not known) and option (how the caller names it, "" for
// no way).
func moveCell(ctx context.Context, tbl bigtable.TableAPI, row, family, column string, ts, to bigtable.Timestamp, value []byte, profile, option string) (bool, error) {
	col := bigtable.ColumnRangeFilter(family, column, column+"\x00")
	present := bigtable.ChainFilters(col, rules.Millisecond(ts).Filter(),
		bigtable.ValueRangeFilter(value, append(append([]byte(nil), value...), 0)))
	between := rules.Range{Lo: ts + 1000, Hi: to + 1000}
	if to < ts {
		between = rules.Range{Lo: to, Hi: ts}
	}
	if to+1000 < to { // the last millisecond: no end
		between = rules.Range{Lo: between.Lo, Open: true}
	}
	pred := present
	if !between.Empty() {
		pred = bigtable.ConditionFilter(bigtable.ChainFilters(col, between.Filter()), bigtable.BlockAllFilter(), present)
	}
	m := bigtable.NewMutation()
	m.DeleteTimestampRange(family, column, ts, ts+1000)
	m.Set(family, column, to, value)
	var moved bool
	err := tbl.Apply(ctx, row, bigtable.NewCondMutation(pred, m, nil), bigtable.GetCondMutationResult(&moved))
	switch {
	case routing.Refused(err):
		return false, fmt.Errorf("%w: move: rewriting row %q, %s:%s at %d: %s: %w", ttl.ErrTransactionNotAllowed, row, family, column, ts,
			routing.Explain("the move's rewrite of a cell (a CheckAndMutateRow)", profile, option), err)
	case err != nil:
		return false, fmt.Errorf("move: rewriting row %q, %s:%s at %d: %w", row, family, column, ts, err)
	}
	return moved, nil
}

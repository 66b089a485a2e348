package ttl

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
)

// Sliding expiration: Touch gives a cell a new lifetime, and KeepAlive
// (options.go) renews what a read returns. Both rewrite the cell with
// another timestamp, since that is the only way to move an expiry in
// Bigtable, and both write only if the cell is still the column's newest
// live cell, unchanged, when the write lands.

// Touch gives the newest live cell of family:column in row the lifetime
// life, counted from the table clock's now, keeping its value: the column
// becomes that one cell (as Replace makes it), so nothing older
// resurfaces. life may shorten as well as lengthen; a lifetime the family
// refuses for Set is refused the same way.
// It writes nothing and wraps ErrConflict when a writer won, and
// ErrLifetime in a family without a strategy or of sequence numbers.
//
// Costs and rationale: docs/api-notes.md#ttltabletouch.
func (t *Table) Touch(ctx context.Context, row, family, column string, life Lifetime) (touched bool, err error) {
	if err := t.check(ctx, "Touch"); err != nil {
		return false, err
	}
	s, managed := t.managed[family]
	if !managed {
		if err := t.checkUnmanaged(family, column); err != nil {
			return false, err
		}
		return false, fmt.Errorf("%w: Touch in a family without a strategy, whose cells do not expire by time (family %q, column %q)",
			ErrLifetime, family, column)
	}
	if err := t.companions.checkColumn(family, column); err != nil {
		return false, err
	}
	if _, versions := s.Versions(); versions {
		return false, fmt.Errorf("%w: Touch under %v, whose cells do not expire by time (family %q, column %q)", ErrLifetime, s, family, column)
	}
	if s.rule().Counter {
		return false, fmt.Errorf("%w: Touch in the counter family %q, whose cells expire with their windows (column %q)", ErrCounter, family, column)
	}
	now := t.now()
	ts, err := t.stamp(s, now, life, family, column)
	if err != nil {
		return false, err
	}
	cell, written, ok, err := t.newestLive(ctx, s, row, family, column, now)
	if err != nil {
		t.metrics.renewal(ctx, family, callTouch, renewalFailed)
		return false, err
	}
	if !ok {
		return false, nil // nothing to renew
	}
	if err := t.scheduleRewrites(ctx, row, family, "Touch", ts); err != nil {
		t.metrics.renewal(ctx, family, callTouch, renewalFailed)
		return false, err
	}
	moved, err := t.rewrite(ctx, s, row, family, column, cell, written, ts, now)
	err = t.transaction(err, "Touch (a CheckAndMutateRow)")
	t.metrics.renewal(ctx, family, callTouch, rewritten(moved, err))
	switch {
	case err != nil:
		return false, err
	case !moved:
		return false, fmt.Errorf("%w: Touch of row %q (family %q, column %q)", ErrConflict, row, family, column)
	}
	return true, nil
}

// newestLive reads the newest cell of family:column, under s, live at now,
// and with RecordWriteTime the value of its write-time companion (nil for
// none).
func (t *Table) newestLive(ctx context.Context, s Strategy, row, family, column string, now time.Time) (cell bigtable.ReadItem, written []byte, ok bool, err error) {
	f := newestLiveFilter(s, family, column, now.Add(t.margin))
	if t.companions {
		f = bigtable.InterleaveFilters(f, t.companions.column(family, column))
	}
	r, err := t.tbl.ReadRow(ctx, row, bigtable.RowFilter(f))
	if err != nil {
		return cell, nil, false, err
	}
	for _, it := range r[family] {
		if it.Column == family+":"+column {
			cell, ok = it, true
		}
	}
	if ok {
		written = t.companions.find(family, r[family], cell)
	}
	return cell, written, ok, nil
}

// newestLiveFilter is the filter that passes the newest cell of family:column
// that s keeps at hide. It names the column first and applies only the
// family's own rule: no other family's branch, no regular expression.
func newestLiveFilter(s Strategy, family, column string, hide time.Time) bigtable.Filter {
	return bigtable.ChainFilters(exactColumn(family, column), s.Filter(hide), bigtable.LatestNFilter(1))
}

// rewrite replaces family:column, under s, with cell's value stamped ts, and with
// written (if not nil) as its write-time companion, if cell is still the
// column's newest cell live at now, unchanged. It reports whether it
// wrote.
func (t *Table) rewrite(ctx context.Context, s Strategy, row, family, column string, cell bigtable.ReadItem, written []byte, ts bigtable.Timestamp, now time.Time) (bool, error) {
	same := bigtable.ChainFilters(newestLiveFilter(s, family, column, now.Add(t.margin)),
		rules.Millisecond(cell.Timestamp).Filter(),
		exactValue(cell.Value))
	b := newBuilt()
	b.deleteColumn(family, column)
	t.companions.deleteColumn(&b, family, column)
	b.set(family, column, ts, cell.Value)
	t.companions.keep(&b, family, column, ts, written)
	var wrote bool
	if err := t.tbl.Apply(ctx, row, bigtable.NewCondMutation(same, b.m, nil), bigtable.GetCondMutationResult(&wrote)); err != nil {
		return false, err
	}
	return wrote, nil
}

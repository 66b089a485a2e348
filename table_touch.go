package ttl

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
//
// It reads the cell, then writes only if, when the write lands, the cell
// is still there, unchanged (the same timestamp, the same value, compared
// exactly) and still the column's newest live cell; otherwise it writes
// nothing and returns an error wrapping ErrConflict: a writer won. A
// column with no live cell returns (false, nil) and writes nothing: Touch
// never creates a cell and never brings back an expired or deleted one.
// With RecordWriteTime the cell keeps its original write time; with a
// read margin, "live" and "born expired" mean what they mean for reads and
// Set.
//
// It takes two requests: a ReadRow and a CheckAndMutateRow. Families
// without a strategy and SequenceNumbers families are refused with
// ErrLifetime: their cells do not expire by time.
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
	now := t.now()
	ts, err := t.stamp(s, now, life, family, column)
	if err != nil {
		return false, err
	}
	cell, written, ok, err := t.newestLive(ctx, s, row, family, column, now)
	if err != nil || !ok {
		return false, err
	}
	moved, err := t.rewrite(ctx, s, row, family, column, cell, written, ts, now)
	switch {
	case err != nil:
		return false, err
	case !moved:
		return false, fmt.Errorf("%w: Touch of row %q (family %q, column %q)", ErrConflict, row, family, column)
	}
	return true, nil
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

// slack is how much longer than idle KeepAlive renews a cell for, so that
// a cell read again and again is renewed at most once per slack.
func slack(idle time.Duration) time.Duration { return min(idle/4, 24*time.Hour) }

// ceilMillisecond rounds t up to a whole millisecond. A renewal's expiry
// is rounded down to the millisecond, as every expiry is; from a whole
// millisecond it stays put, so a renewed cell never expires before the
// instant KeepAlive promised, even when slack is under a millisecond.
func ceilMillisecond(t time.Time) time.Time {
	if r := t.Truncate(time.Millisecond); !r.Equal(t) {
		return r.Add(time.Millisecond)
	}
	return t
}

// renew renews, as KeepAlive says, the cells of row r that are due: each
// column's newest returned cell of a family whose cells expire by time,
// expiring before the read's now + idle. A cell renewed is updated in r
// with its new timestamp. Failures other than a lost race are recorded
// in rd. Renewals are sent in an order a caller can predict: the row's
// families by name, each family's columns as read.
func (t *Table) renew(ctx context.Context, r bigtable.Row, rd *read) {
	// Reads hide a cell from its expiry less the margin: to stay visible
	// for idle, a cell must expire after now + margin + idle.
	due := rd.now.Add(t.margin + rd.idle)
	var room [4]string // a row's families with cells due, on the stack
	families := room[:0]
	for family, items := range r {
		if t.anyDue(family, items, due) {
			families = append(families, family)
		}
	}
	sort.Strings(families)
	for _, family := range families {
		t.renewFamily(ctx, r, family, due, rd)
	}
}

// renewable returns the strategy of family if its cells expire by time.
func (t *Table) renewable(family string) (Strategy, bool) {
	s, managed := t.managed[family]
	if !managed {
		return nil, false
	}
	if _, versions := s.Versions(); versions {
		return nil, false
	}
	return s, true
}

// isDue tells whether items[i], a cell of a family whose strategy is s,
// is due at due: its column's newest returned cell, expiring before due.
func isDue(s Strategy, items []bigtable.ReadItem, i int, due time.Time) bool {
	if i > 0 && items[i].Column == items[i-1].Column {
		return false // not the newest returned cell of its column
	}
	exp, expires := s.ExpiresAt(items[i].Timestamp)
	return expires && exp.Before(due)
}

// anyDue tells whether a cell of family in items is due at due.
func (t *Table) anyDue(family string, items []bigtable.ReadItem, due time.Time) bool {
	s, ok := t.renewable(family)
	if !ok {
		return false
	}
	for i := range items {
		if isDue(s, items, i, due) {
			return true
		}
	}
	return false
}

// renewFamily renews the due cells of family in row r, in the order read.
func (t *Table) renewFamily(ctx context.Context, r bigtable.Row, family string, due time.Time, rd *read) {
	s, _ := t.renewable(family)
	items := r[family]
	until := Until(ceilMillisecond(due.Add(slack(rd.idle))))
	var missing []int // cells due whose write times the read did not fetch
	var stamps []bigtable.Timestamp
	for i, it := range items {
		if !isDue(s, items, i, due) {
			continue
		}
		// The new expiry is past due, the old one before it: a renewal
		// never shortens.
		ts, err := t.stamp(s, rd.now, until, family, it.Column)
		if err != nil {
			rd.renewal.add(r.Key(), it.Column, err)
			continue
		}
		missing = append(missing, i)
		stamps = append(stamps, ts)
	}
	if len(missing) == 0 {
		return
	}
	written, err := t.writeTimesOf(ctx, r.Key(), family, items, missing, rd)
	if err != nil {
		for _, i := range missing {
			rd.renewal.add(r.Key(), items[i].Column, err)
		}
		return
	}
	for k, i := range missing {
		_, qualifier := rules.SplitColumn(items[i].Column)
		cell := items[i]
		if len(cell.Value) == 0 {
			// The RowFilter may have stripped the value, which the
			// renewal must rewrite: read the cell as stored. A newer
			// cell than the one returned is a race lost.
			stored, storedWritten, ok, err := t.newestLive(ctx, s, r.Key(), family, qualifier, rd.now)
			if err != nil {
				rd.renewal.add(r.Key(), cell.Column, err)
				continue
			}
			if !ok || stored.Timestamp != cell.Timestamp {
				continue
			}
			cell.Value, written[k] = stored.Value, storedWritten
		}
		moved, err := t.rewrite(ctx, s, r.Key(), family, qualifier, cell, written[k], stamps[k], rd.now)
		switch {
		case err != nil:
			rd.renewal.add(r.Key(), items[i].Column, err)
		case moved:
			items[i].Timestamp = stamps[k]
		}
	}
}

// writeTimesOf returns the write-time companion values of items[i] for
// each i of due, nil for none: from their labels when the read fetched
// them, otherwise with one read of the row's companions (only on a table
// that records write times).
func (t *Table) writeTimesOf(ctx context.Context, row, family string, items []bigtable.ReadItem, due []int, rd *read) ([][]byte, error) {
	written := make([][]byte, len(due))
	if !t.companions {
		return written, nil
	}
	if rd.writeTimes {
		for k, i := range due {
			written[k] = t.companions.labelled(items[i])
		}
		return written, nil
	}
	columns := make([]bigtable.Filter, len(due))
	for k, i := range due {
		_, qualifier := rules.SplitColumn(items[i].Column)
		columns[k] = t.companions.column(family, qualifier)
	}
	f := columns[0]
	if len(columns) > 1 {
		f = bigtable.InterleaveFilters(columns...)
	}
	r, err := t.tbl.ReadRow(ctx, row, bigtable.RowFilter(f))
	if err != nil {
		return nil, err
	}
	for k, i := range due {
		written[k] = t.companions.find(family, r[family], items[i])
	}
	return written, nil
}

// renewalErrors collects the renewals of one read that failed.
type renewalErrors struct {
	n     int
	first []error // the first few
}

func (e *renewalErrors) add(row, column string, err error) {
	if err == nil {
		return
	}
	e.n++
	if len(e.first) < 3 {
		e.first = append(e.first, fmt.Errorf("row %q, %s: %w", row, column, err))
	}
}

func (e *renewalErrors) err() error {
	if e.n == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d renewals failed (the rows were delivered): %w", ErrRenewal, e.n, errors.Join(e.first...))
}

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

// KeepAlive's renewals (the option is in options.go): each due cell that
// a read returns is renewed as Touch renews a cell, after the read, in the
// calling goroutine.

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

// A renewalRun is what one read's KeepAlive renews with: the read's clock
// reading and idle time, whether it fetched write times, and the
// renewals that failed.
type renewalRun struct {
	now        time.Time
	idle       time.Duration
	writeTimes bool // the read fetched write times (WithWriteTimes)
	failed     renewalErrors
}

// renew renews, as KeepAlive says, the cells of row r that are due: each
// column's newest returned cell of a family whose cells expire by time,
// expiring before the read's now + idle. A cell renewed is updated in r
// with its new timestamp. Failures other than a lost race are recorded
// in rn. Renewals are sent in an order a caller can predict: the row's
// families by name, each family's columns as read.
func (t *Table) renew(ctx context.Context, r bigtable.Row, rn *renewalRun) {
	// Reads hide a cell from its expiry less the margin: to stay visible
	// for idle, a cell must expire after now + margin + idle.
	due := rn.now.Add(t.margin + rn.idle)
	var room [4]string // a row's families with cells due, on the stack
	families := room[:0]
	for family, items := range r {
		if t.anyDue(family, items, due) {
			families = append(families, family)
		}
	}
	sort.Strings(families)
	for _, family := range families {
		t.renewFamily(ctx, r, family, due, rn)
	}
}

// renewable returns the strategy of family if its cells expire by time.
func (t *Table) renewable(family string) (Strategy, bool) {
	s, managed := t.managed[family]
	if !managed {
		return nil, false
	}
	if _, versions := s.Versions(); versions || s.rule().Counter {
		return nil, false // no expiry by time, or a counter's window
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
// It is long because a renewal's steps must run in this order for every
// cell due (stamp, schedule the entries, read the write times, reread a
// stripped value, rewrite), and each step's failure is counted per cell.
func (t *Table) renewFamily(ctx context.Context, r bigtable.Row, family string, due time.Time, rn *renewalRun) {
	s, _ := t.renewable(family)
	items := r[family]
	until := Until(ceilMillisecond(due.Add(slack(rn.idle))))
	var missing []int // cells due whose write times the read did not fetch
	var stamps []bigtable.Timestamp
	for i, it := range items {
		if !isDue(s, items, i, due) {
			continue
		}
		// The new expiry is past due, the old one before it: a renewal
		// never shortens.
		ts, err := t.stamp(s, rn.now, until, family, it.Column)
		if err != nil {
			rn.failed.add(r.Key(), it.Column, err)
			t.metrics.renewal(ctx, family, callKeepAlive, renewalFailed)
			continue
		}
		missing = append(missing, i)
		stamps = append(stamps, ts)
	}
	if len(missing) == 0 {
		return
	}
	if err := t.scheduleRewrites(ctx, r.Key(), family, "KeepAlive's renewal", stamps...); err != nil {
		for _, i := range missing {
			rn.failed.add(r.Key(), items[i].Column, err)
			t.metrics.renewal(ctx, family, callKeepAlive, renewalFailed)
		}
		return
	}
	written, err := t.writeTimesOf(ctx, r.Key(), family, items, missing, rn.writeTimes)
	if err != nil {
		for _, i := range missing {
			rn.failed.add(r.Key(), items[i].Column, err)
			t.metrics.renewal(ctx, family, callKeepAlive, renewalFailed)
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
			stored, storedWritten, ok, err := t.newestLive(ctx, s, r.Key(), family, qualifier, rn.now)
			if err != nil {
				rn.failed.add(r.Key(), cell.Column, err)
				t.metrics.renewal(ctx, family, callKeepAlive, renewalFailed)
				continue
			}
			if !ok || stored.Timestamp != cell.Timestamp {
				t.metrics.renewal(ctx, family, callKeepAlive, renewalLost) // a writer won
				continue
			}
			cell.Value, written[k] = stored.Value, storedWritten
		}
		moved, err := t.rewrite(ctx, s, r.Key(), family, qualifier, cell, written[k], stamps[k], rn.now)
		err = t.transaction(err, "KeepAlive's renewal (a CheckAndMutateRow)")
		t.metrics.renewal(ctx, family, callKeepAlive, rewritten(moved, err))
		switch {
		case err != nil:
			rn.failed.add(r.Key(), items[i].Column, err)
		case moved:
			items[i].Timestamp = stamps[k]
		}
	}
}

// writeTimesOf returns the write-time companion values of items[i] for
// each i of due, nil for none: from their labels when the read fetched
// them (fetched), otherwise with one read of the row's companions (only on
// a table that records write times).
func (t *Table) writeTimesOf(ctx context.Context, row, family string, items []bigtable.ReadItem, due []int, fetched bool) ([][]byte, error) {
	written := make([][]byte, len(due))
	if !t.companions {
		return written, nil
	}
	if fetched {
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

package ttl

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/text"
)

// Reading the counters Mutation.Add writes: each window one cell, which
// Bigtable keeps as the sum of its increments.

// A WindowCount is one window of a counter and what was added in it.
type WindowCount struct {
	// Start and End are the window's bounds, [Start, End).
	Start, End time.Time
	// Expires is when the window's cell expires: End plus the window's
	// Keep.
	Expires time.Time
	// Sum is the sum of the increments added in the window.
	Sum int64
}

// ReadCounter reads the live windows of the counter family:column of row,
// counted in w, newest first: the current window, if anything was added in
// it, and the closed windows w.Keep has kept. A window nothing was added
// in has no cell and is not returned. One read request.
//
// The family must be a Counter family (ErrCounter otherwise), and every
// cell of the column a window of w: a cell written with another window is
// reported with ErrCounter.
func (t *Table) ReadCounter(ctx context.Context, row, family, column string, w Window) ([]WindowCount, error) {
	if err := t.check(ctx, "ReadCounter"); err != nil {
		return nil, err
	}
	now := t.now()
	r, err := t.counterRule(family, column, w)
	if err != nil {
		return nil, err
	}
	t.metrics.counterRead(ctx, family, callReadCounter)
	return t.readWindows(ctx, row, family, column, w, r, now, nil)
}

// SumCounter returns the sum of the counter family:column of row over the
// last n windows of w, the current one included: over a span that slides
// with now, n × w.Size long at most and (n−1) × w.Size at least. It is
// what a rate limiter reads: "at most 100 in the last minute" is the sum
// of the last 6 windows of 10 seconds. The windows must all be kept:
// w.Keep at least (n−1) × w.Size plus the table's read margin, or the
// call is refused with ErrInvalidOption. One read request, for the n
// windows' cells only.
func (t *Table) SumCounter(ctx context.Context, row, family, column string, w Window, n int) (int64, error) {
	if err := t.check(ctx, "SumCounter"); err != nil {
		return 0, err
	}
	now := t.now()
	r, err := t.counterRule(family, column, w)
	if err != nil {
		return 0, err
	}
	// Keep ≥ (n−1) × Size + margin, in a form that cannot overflow.
	if spare := w.Keep - t.margin; n < 1 || spare < 0 || int64(n-1) > int64(spare/w.Size) {
		return 0, fmt.Errorf("%w: SumCounter over %d windows of %v: n must be positive, and Keep at least (n−1) × Size plus the read margin (%v) so that every window summed is live (family %q, column %q)",
			ErrInvalidOption, n, w, t.margin, family, column)
	}
	current := w.start(now)
	newest, err := w.stamp(r, current)
	if err != nil {
		return 0, fmt.Errorf("%w (family %q, column %q)", err, family, column)
	}
	// The oldest window, older than the newest, can only be out of range
	// by expiring before 1970, where no cell can be: the span starts at 0.
	oldest, err := w.stamp(r, current.Add(-time.Duration(n-1)*w.Size))
	if err != nil {
		oldest = 0
	}
	span := rules.Range{Lo: oldest, Hi: newest + 1000}.Filter()
	t.metrics.counterRead(ctx, family, callSumCounter)
	windows, err := t.readWindows(ctx, row, family, column, w, r, now, span)
	var sum int64
	for _, c := range windows {
		sum += c.Sum
	}
	return sum, err
}

// counterRule returns the time rule of family, which must be a Counter
// family, and checks w. A family the table does not manage is unknown
// (ErrUnknownFamily, with the nearest Counter family suggested), unless
// OtherFamilies declares it: then it is known, and not a Counter family
// (ErrCounter).
func (t *Table) counterRule(family, column string, w Window) (rules.Time, error) {
	s, managed := t.managed[family]
	if !managed {
		if err := t.checkUnmanaged(family, column); err != nil {
			return rules.Time{}, err
		}
		if !t.others[family] {
			return rules.Time{}, fmt.Errorf("%w: %q is not a family of the table (column %q): a counter is read from a family given Counter(...) in NewTable's families%s",
				ErrUnknownFamily, family, column, t.nearestCounter(family))
		}
	}
	var r rules.Strategy
	if managed {
		r = s.rule()
	}
	if !r.Counter {
		return rules.Time{}, fmt.Errorf("%w: %q is not a Counter family (column %q)", ErrCounter, family, column)
	}
	if err := w.check(); err != nil {
		return rules.Time{}, fmt.Errorf("%w (family %q, column %q)", err, family, column)
	}
	return r.Time, nil
}

// readWindows reads the live cells of family:column, or those within
// span when it is not nil, as windows of w under the time rule r, newest
// first.
func (t *Table) readWindows(ctx context.Context, row, family, column string, w Window, r rules.Time, now time.Time, span bigtable.Filter) ([]WindowCount, error) {
	// A span needs no filter of liveness: SumCounter's check makes its
	// oldest window expire after now plus the margin, and every cell in
	// the span later still.
	f := bigtable.ChainFilters(exactColumn(family, column), r.Filter(now.Add(t.margin)))
	if span != nil {
		f = bigtable.ChainFilters(exactColumn(family, column), span)
	}
	got, err := t.tbl.ReadRow(ctx, row, bigtable.RowFilter(f))
	if err != nil {
		return nil, err
	}
	var out []WindowCount
	for _, it := range got[family] {
		start, ok := w.of(r, it.Timestamp)
		if !ok || len(it.Value) != 8 {
			return out, fmt.Errorf("%w: the cell of row %q stamped %d is not a window of %v (family %q, column %q)",
				ErrCounter, row, it.Timestamp, w, family, column)
		}
		end := start.Add(w.Size)
		out = append(out, WindowCount{Start: start, End: end, Expires: end.Add(w.Keep), Sum: int64(binary.BigEndian.Uint64(it.Value))})
	}
	return out, nil
}

// nearestCounter returns ` (did you mean "hits"?)` for a Counter family
// of the table within two edits of name, and "" otherwise.
func (t *Table) nearestCounter(name string) string {
	var counters []string
	for f, s := range t.managed {
		if s.rule().Counter {
			counters = append(counters, f)
		}
	}
	sort.Strings(counters) // Nearest keeps the first of equally near names
	if near := text.Nearest(name, counters, 2); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

package ttl

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"cloud.google.com/go/bigtable"
)

// A Table is a Bigtable table, or an authorized view, whose cells have a
// time to live. It writes through recipes ([Mutation], [ReadModifyWrite])
// whose lifetimes it turns into timestamps, and reads through one
// server-side filter that passes only live cells.
//
// # Families
//
// Each managed family has a [Strategy], and the family's GC policy must be
// the strategy's GCPolicy (CheckFamilies verifies it, EnsureFamilies sets
// it). Families without a strategy are read back unchanged and take only
// [Default] writes, stamped with the clock's now. Declare them with
// [OtherFamilies] so that reads need no regular expression.
//
// # Time
//
// Each call reads the clock (time.Now unless [WithClock]) once and uses that
// instant for every cell and filter of the call. A cell is hidden from its
// expiry on, rounded down to the millisecond: never late, at most 1ms
// early. A write whose cell would be born expired fails with ErrExpired.
// Garbage collection removes expired cells later (in Bigtable up to a
// week); the filter hides them at once, so GC lag is never visible through
// the Table. A reader whose clock runs behind the writers' sees cells
// for that much longer: [WithReadMargin] hides them that much earlier.
//
// # Errors
//
// A mutation with any invalid change is rejected whole before anything is
// sent, with an error that wraps one of this package's sentinel errors and
// names the family and column at fault.
//
// A Table is safe for simultaneous use by multiple goroutines; it starts no
// goroutines.
type Table struct {
	tbl        bigtable.TableAPI
	now        func() time.Time
	managed    map[string]strategy
	others     map[string]bool // declared unmanaged families; nil when undeclared
	margin     time.Duration
	writeTimes bool
	plan       readPlan
}

// NewTable returns a Table that reads and writes tbl, a *bigtable.Table or
// any other bigtable.TableAPI, with the given strategy for each managed
// family. It refuses, with ErrInvalidStrategy, an empty map, a family name
// Bigtable would refuse, and a nil, invalid or foreign strategy; with
// ErrInvalidOption, an invalid option.
func NewTable(tbl bigtable.TableAPI, families map[string]Strategy, opts ...Option) (*Table, error) {
	if tbl == nil || isNilPointer(tbl) {
		return nil, fmt.Errorf("%w: NewTable: nil bigtable.TableAPI", ErrNilArgument)
	}
	managed, err := checkFamilies(families)
	if err != nil {
		return nil, fmt.Errorf("NewTable: %w", err)
	}
	t := &Table{tbl: tbl, now: time.Now, managed: managed}

	var c config
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: NewTable: option %d is nil", ErrInvalidOption, i)
		}
		if err := o.apply(&c); err != nil {
			return nil, err
		}
	}
	if c.now != nil {
		t.now = c.now
	}
	if c.others != nil {
		t.others = make(map[string]bool, len(c.others))
		for _, name := range c.others {
			if _, ok := t.managed[name]; ok {
				return nil, fmt.Errorf("%w: OtherFamilies: family %q has a strategy", ErrInvalidOption, name)
			}
			t.others[name] = true
		}
	}
	t.margin = c.margin
	t.writeTimes = c.writeTimes
	t.plan = newReadPlan(families, c.others, c.writeTimes)
	return t, nil
}

// check reports a call the table cannot make: on a Table not made by
// NewTable, or with a nil context.
func (t *Table) check(ctx context.Context, op string) error {
	switch {
	case t == nil || t.tbl == nil:
		return fmt.Errorf("%w: %s on a Table not made by NewTable", ErrNilArgument, op)
	case ctx == nil:
		return fmt.Errorf("%w: %s: nil context", ErrNilArgument, op)
	}
	return nil
}

// ReadFilter returns the filter the table's reads apply at now: for each
// managed family the cells its strategy keeps live at now (less the read
// margin), and the cells of the families without a strategy unchanged.
// Another reader can apply it to see what the Table sees; its String
// method prints it.
func (t *Table) ReadFilter(now time.Time) bigtable.Filter {
	if t == nil || t.tbl == nil {
		return bigtable.BlockAllFilter()
	}
	return t.plan.live(now.Add(t.margin))
}

// Apply applies m to the row atomically, with the timestamps its lifetimes
// give at the clock's now. If any change in m is invalid, Apply sends
// nothing and returns an error naming it. opts are passed to Bigtable
// (bigtable.GetCondMutationResult works as usual).
func (t *Table) Apply(ctx context.Context, row string, m *Mutation, opts ...bigtable.ApplyOption) error {
	if err := t.check(ctx, "Apply"); err != nil {
		return err
	}
	bm, err := t.build(t.now(), m, false)
	if err != nil {
		return err
	}
	return t.tbl.Apply(ctx, row, bm, opts...)
}

// ApplyBulk applies muts[i] to rows[i], each atomically, all with the
// timestamps their lifetimes give at one reading of the clock. An invalid
// mutation is not sent and its error is reported at its index; the others
// are applied. Conditional mutations cannot be applied in bulk.
//
// Rows are built and sent in the groups the bigtable client would send as
// one request each (at most 100,000 changes), so that the built mutations
// of only one group are in memory at a time.
//
// errs is nil when every row was written; otherwise it has one entry per
// row, nil for each row written. A non-nil err means every request failed
// (or rows and muts differ in length): no row is known to be written, and
// every row sent has an error in errs.
func (t *Table) ApplyBulk(ctx context.Context, rows []string, muts []*Mutation, opts ...bigtable.ApplyOption) (errs []error, err error) {
	if err := t.check(ctx, "ApplyBulk"); err != nil {
		return nil, err
	}
	if len(rows) != len(muts) {
		return nil, fmt.Errorf("%w: ApplyBulk: %d rows but %d mutations", ErrInvalidMutation, len(rows), len(muts))
	}
	now := t.now()
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(rows))
		}
		errs[i] = err
	}
	var (
		g              bulkGroup
		groups, failed int
		firstErr       error
	)
	send := func() {
		if len(g.rows) == 0 {
			return
		}
		groups++
		sendErrs, err := t.tbl.ApplyBulk(ctx, g.rows, g.muts, opts...)
		for j, i := range g.index {
			switch {
			case err != nil:
				fail(i, err)
			case j < len(sendErrs) && sendErrs[j] != nil:
				fail(i, sendErrs[j])
			}
		}
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
		}
		g.reset()
	}
	for i, m := range muts {
		if m != nil && m.isCond {
			fail(i, fmt.Errorf("%w: conditional mutations cannot be applied in bulk (row %q)", ErrInvalidMutation, rows[i]))
			continue
		}
		bm, err := t.build(now, m, false)
		if err != nil {
			fail(i, err)
			continue
		}
		n := t.changes(m)
		if g.changes+n > maxBulkChanges {
			send()
		}
		g.add(i, rows[i], bm, n, len(rows))
	}
	send()
	if groups > 0 && failed == groups {
		return errs, firstErr
	}
	return errs, nil
}

// maxBulkChanges is the most changes the bigtable client sends in one
// MutateRows request (its maxMutations); it groups rows greedily, never
// splitting one, and ApplyBulk groups them the same way.
const maxBulkChanges = 100_000

// bulkGroup is the rows ApplyBulk sends in one request.
type bulkGroup struct {
	rows    []string
	muts    []*bigtable.Mutation
	index   []int // of each row in ApplyBulk's arguments
	changes int
}

func (g *bulkGroup) add(i int, row string, m *bigtable.Mutation, changes, capacity int) {
	if g.rows == nil {
		capacity = min(capacity, maxBulkChanges)
		g.rows = make([]string, 0, capacity)
		g.muts = make([]*bigtable.Mutation, 0, capacity)
		g.index = make([]int, 0, capacity)
	}
	g.rows = append(g.rows, row)
	g.muts = append(g.muts, m)
	g.index = append(g.index, i)
	g.changes += changes
}

// reset empties the group, letting its mutations go.
func (g *bulkGroup) reset() {
	clear(g.muts)
	g.rows, g.muts, g.index, g.changes = g.rows[:0], g.muts[:0], g.index[:0], 0
}

// ReadRow reads the live cells of one row, like bigtable.Table.ReadRow. A
// row with no live cell is returned as nil, with no error.
func (t *Table) ReadRow(ctx context.Context, row string, opts ...ReadOption) (bigtable.Row, error) {
	if err := t.check(ctx, "ReadRow"); err != nil {
		return nil, err
	}
	ropts, writeTimes, err := t.readOptions(t.now(), opts)
	if err != nil {
		return nil, err
	}
	r, err := t.tbl.ReadRow(ctx, row, ropts...)
	if err != nil || !writeTimes {
		return r, err
	}
	return attachWriteTimes(r, t.managed), nil
}

// ReadRows reads the live cells of the rows in rs and calls f for each row
// that has one, in order, until f returns false, like
// bigtable.Table.ReadRows. It streams: rows are not collected.
func (t *Table) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...ReadOption) error {
	if err := t.check(ctx, "ReadRows"); err != nil {
		return err
	}
	switch {
	case rs == nil || isNilPointer(rs):
		return fmt.Errorf("%w: ReadRows: nil row set", ErrNilArgument)
	case f == nil:
		return fmt.Errorf("%w: ReadRows: nil callback", ErrNilArgument)
	}
	ropts, writeTimes, err := t.readOptions(t.now(), opts)
	if err != nil {
		return err
	}
	if !writeTimes {
		return t.tbl.ReadRows(ctx, rs, f, ropts...)
	}
	return t.tbl.ReadRows(ctx, rs, func(r bigtable.Row) bool {
		if r = attachWriteTimes(r, t.managed); r == nil {
			return true
		}
		return f(r)
	}, ropts...)
}

// readOptions turns the caller's read options into Bigtable's, with the
// one filter that passes live cells, and the caller's RowFilter after it.
func (t *Table) readOptions(now time.Time, opts []ReadOption) (out []bigtable.ReadOption, writeTimes bool, err error) {
	var caller bigtable.Filter
	out = make([]bigtable.ReadOption, 0, len(opts)+1)
	for i, o := range opts {
		switch o := o.(type) {
		case nil:
			return nil, false, fmt.Errorf("%w: read option %d is nil", ErrInvalidOption, i)
		case rowFilterOption:
			if o.f == nil {
				return nil, false, fmt.Errorf("%w: RowFilter(nil)", ErrInvalidOption)
			}
			if caller != nil {
				return nil, false, fmt.Errorf("%w: more than one RowFilter; combine them with bigtable.ChainFilters", ErrInvalidOption)
			}
			caller = o.f
		case writeTimesOption:
			if !t.writeTimes {
				return nil, false, fmt.Errorf("%w: WithWriteTimes on a table without RecordWriteTime", ErrInvalidOption)
			}
			writeTimes = true
		default:
			if reflect.TypeOf(o) == rawRowFilter {
				return nil, false, fmt.Errorf("%w: bigtable.RowFilter would replace the expiry filter; use ttl.RowFilter", ErrInvalidOption)
			}
			out = append(out, o)
		}
	}
	now = now.Add(t.margin)
	f := t.plan.live(now)
	if caller != nil {
		f = bigtable.ChainFilters(f, caller)
	}
	if writeTimes {
		f = bigtable.InterleaveFilters(f, t.plan.companions(now))
	}
	return append(out, bigtable.RowFilter(f)), writeTimes, nil
}

// ExpiresAt returns the expiry of item, a cell read through the table: the
// instant from which reads hide it (with a read margin, reads hide it that
// much earlier). It reports false for a cell that does not expire by time:
// a Forever cell, a sequence number, a cell of a family without a strategy.
func (t *Table) ExpiresAt(item bigtable.ReadItem) (time.Time, bool) {
	if t == nil {
		return time.Time{}, false
	}
	family, _ := splitColumn(item.Column)
	s, ok := t.managed[family]
	if !ok {
		return time.Time{}, false
	}
	return s.expiry(item.Timestamp)
}

// ApplyReadModifyWrite applies m to the row atomically on the server, like
// bigtable.Table.ApplyReadModifyWrite, and returns the new cells.
//
// The server stamps each new cell with the later of its clock and the
// column's newest timestamp, so m is refused with ErrServerTimestamp in a
// OneSecond family (the cell would expire at once) and a SequenceNumbers
// family; it is allowed in a DefaultExpiration family, where the cell then
// lives for the default (or as long as the column's newest cell, if that
// lives longer), and in families without a strategy.
//
// The server builds on the column's newest cell even when it has expired.
// So that an expired counter restarts from zero instead of resurfacing,
// ApplyReadModifyWrite first deletes the expired cells of the columns m
// touches in DefaultExpiration families: two requests, not one. Expired is
// judged by the table's clock, as reads judge it: a clock running ahead
// deletes cells that early. A cell that expires between the two requests
// (a few milliseconds) can still be built on. With a read margin, the
// cells within it are deleted too: reads already treat them as expired,
// and a hidden value must not come back inside the new one.
//
// Read-modify-write cells get no write-time companion. With
// RecordWriteTime, the first request also deletes the touched columns'
// companions: the server may replace a cell in place (when the column's
// newest cell has a later timestamp than its clock), and a companion must
// never describe another value, so those columns' cells report no write
// time.
func (t *Table) ApplyReadModifyWrite(ctx context.Context, row string, m *ReadModifyWrite) (bigtable.Row, error) {
	if err := t.check(ctx, "ApplyReadModifyWrite"); err != nil {
		return nil, err
	}
	if m == nil || len(m.ops) == 0 {
		return nil, fmt.Errorf("%w: read-modify-write has no changes", ErrInvalidMutation)
	}
	now := t.now()
	rmw := bigtable.NewReadModifyWrite()
	var purge *bigtable.Mutation
	for _, o := range m.ops {
		s, managed := t.managed[o.family]
		if !managed {
			if err := t.checkUnmanaged(o.family, o.column); err != nil {
				return nil, err
			}
		} else {
			if !s.serverTimestamps() {
				return nil, fmt.Errorf("%w: %v (family %q, column %q)", ErrServerTimestamp, s, o.family, o.column)
			}
			if err := t.checkColumn(o.family, o.column); err != nil {
				return nil, err
			}
			start, timed := s.liveFrom(now.Add(t.margin))
			expired := timed && start > 0
			if purge == nil && (expired || t.writeTimes) {
				purge = bigtable.NewMutation()
			}
			if expired {
				purge.DeleteTimestampRange(o.family, o.column, 0, start)
			}
			if t.writeTimes {
				purge.DeleteCellsInColumn(o.family, companionPrefix+o.column)
			}
		}
		if o.isAppend {
			rmw.AppendValue(o.family, o.column, o.append)
		} else {
			rmw.Increment(o.family, o.column, o.delta)
		}
	}
	if purge != nil {
		if err := t.tbl.Apply(ctx, row, purge); err != nil {
			return nil, err
		}
	}
	return t.tbl.ApplyReadModifyWrite(ctx, row, rmw)
}

// SampleRowKeys returns a sample of the table's row keys, as
// bigtable.Table.SampleRowKeys does.
func (t *Table) SampleRowKeys(ctx context.Context) ([]string, error) {
	if err := t.check(ctx, "SampleRowKeys"); err != nil {
		return nil, err
	}
	return t.tbl.SampleRowKeys(ctx)
}

// build turns a recipe into a bigtable.Mutation at now, or reports the
// first invalid change in it.
func (t *Table) build(now time.Time, m *Mutation, nested bool) (*bigtable.Mutation, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil mutation", ErrInvalidMutation)
	}
	if m.isCond {
		return t.buildCond(now, m, nested)
	}
	if len(m.ops) == 0 {
		return nil, fmt.Errorf("%w: mutation has no changes", ErrInvalidMutation)
	}
	bm := bigtable.NewMutation()
	for _, o := range m.ops {
		if err := t.add(bm, now, o); err != nil {
			return nil, err
		}
	}
	return bm, nil
}

// buildCond builds a conditional mutation whose predicate sees only the
// cells live at now.
func (t *Table) buildCond(now time.Time, m *Mutation, nested bool) (*bigtable.Mutation, error) {
	switch {
	case nested:
		return nil, fmt.Errorf("%w: a conditional mutation cannot be a branch of another", ErrInvalidMutation)
	case len(m.ops) > 0:
		return nil, fmt.Errorf("%w: a conditional mutation has no changes of its own; put them in its branches", ErrInvalidMutation)
	}
	var branches [2]*bigtable.Mutation
	for i, b := range [2]*Mutation{m.mtrue, m.mfalse} {
		if b == nil || !b.isCond && len(b.ops) == 0 {
			continue
		}
		bm, err := t.build(now, b, true)
		if err != nil {
			return nil, err
		}
		branches[i] = bm
	}
	if branches[0] == nil && branches[1] == nil {
		return nil, fmt.Errorf("%w: conditional mutation has no changes in either branch", ErrInvalidMutation)
	}
	cond := t.plan.live(now.Add(t.margin))
	if m.cond != nil {
		cond = bigtable.ChainFilters(cond, m.cond)
	}
	return bigtable.NewCondMutation(cond, branches[0], branches[1]), nil
}

// add adds one recorded change to bm, at now.
func (t *Table) add(bm *bigtable.Mutation, now time.Time, o mutationOp) error {
	if o.kind == opDeleteRow {
		bm.DeleteRow()
		return nil
	}
	s, managed := t.managed[o.family]
	if !managed {
		return t.addUnmanaged(bm, now, o)
	}
	if o.kind == opDeleteFamily {
		bm.DeleteCellsInFamily(o.family)
		return nil
	}
	if err := t.checkColumn(o.family, o.column); err != nil {
		return err
	}
	if o.kind == opDeleteColumn || o.kind == opReplace {
		bm.DeleteCellsInColumn(o.family, o.column)
		if t.writeTimes {
			bm.DeleteCellsInColumn(o.family, companionPrefix+o.column)
		}
		if o.kind == opDeleteColumn {
			return nil
		}
	}
	ts, err := s.Timestamp(now, o.life)
	if err != nil {
		return fmt.Errorf("%w (family %q, column %q)", err, o.family, o.column)
	}
	if t.margin > 0 {
		if exp, ok := s.expiry(ts); ok && !exp.After(now.Add(t.margin)) {
			return fmt.Errorf("%w: %v expires at %v, within the read margin of %v after now (%v) (family %q, column %q)",
				ErrExpired, o.life, exp.UTC().Format(time.RFC3339Nano), t.margin, now.UTC().Format(time.RFC3339Nano), o.family, o.column)
		}
	}
	bm.Set(o.family, o.column, ts, o.value)
	if t.writeTimes {
		bm.Set(o.family, companionPrefix+o.column, ts, encodeWriteTime(now))
	}
	return nil
}

// changes returns how many changes build makes of m, a valid mutation
// that is not conditional: what the bigtable client counts against its
// limit per request. It follows add.
func (t *Table) changes(m *Mutation) int {
	n := 0
	for _, o := range m.ops {
		c := 1
		if o.kind == opReplace {
			c = 2 // delete the column, set the cell
		}
		if _, managed := t.managed[o.family]; managed && t.writeTimes && o.kind != opDeleteFamily && o.kind != opDeleteRow {
			c *= 2 // the same for the companion
		}
		n += c
	}
	return n
}

// addUnmanaged adds a change to a family without a strategy: only Default
// writes, stamped at now.
func (t *Table) addUnmanaged(bm *bigtable.Mutation, now time.Time, o mutationOp) error {
	if err := t.checkUnmanaged(o.family, o.column); err != nil {
		return err
	}
	switch o.kind {
	case opDeleteFamily:
		bm.DeleteCellsInFamily(o.family)
		return nil
	case opDeleteColumn:
		bm.DeleteCellsInColumn(o.family, o.column)
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
		bm.DeleteCellsInColumn(o.family, o.column)
	}
	bm.Set(o.family, o.column, bigtable.Timestamp(ms*1000), o.value)
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

// checkColumn reports a managed column in the companions' reserved range.
func (t *Table) checkColumn(family, column string) error {
	if t.writeTimes && reserved(column) {
		return fmt.Errorf("%w: qualifiers starting with \"\\xff\\xff\" hold write times (family %q, column %q)",
			ErrReservedColumn, family, column)
	}
	return nil
}

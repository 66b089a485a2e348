package sweep_test

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/sweep"
)

// The model's rules, from DESIGN.md ("The model", "Lifetimes", "Writes",
// "Sliding expiration", "Two encodings, one boundary", "Expiry you can act
// on") and the package doc of sweep, never from the code under test: how
// a write stamps a cell, when a stored cell expires, what Touch and
// KeepAlive rewrite, and which events a round of a sweep owes for a row
// and which cells its deletion removes. Instants and timestamps are in
// microseconds, as Bigtable stores them.

// maxTS is the largest timestamp, Forever's under OneSecond.
const maxTS = int64(ttl.MaxTimestamp)

// A famRule is what DESIGN.md says of one family of the model's table.
type famRule struct {
	name     string
	strategy ttl.Strategy
	// offset is DefaultExpiration's d (0 for OneSecond, and for a move
	// to it): a cell is stamped expiry − offset.
	offset int64
	// move: a Move from real timestamps to OneSecond from start, whose
	// old cells (stamped before start, with their write times) live old.
	move       bool
	start, old int64
	// keep is how long after its expiry the family's GC policy keeps a
	// cell: its grace (at least 1s), the shorter over a move's sides.
	keep time.Duration
	// age is the family's GC policy, MaxAge(age): GC deletes the cells
	// stamped before now − age.
	age time.Duration
}

// expiry returns the expiry of the family's cell stamped ts, and false for
// a Forever cell.
func (f *famRule) expiry(ts int64) (int64, bool) {
	if f.move && ts < f.start {
		return ts + f.old, true // the old side: write time + Old
	}
	if ts == maxTS-f.offset {
		return 0, false
	}
	return ts + f.offset, true
}

// liveAt reports whether the family's cell stamped ts is live at t: it
// is hidden from its expiry on.
func (f *famRule) liveAt(ts, t int64) bool {
	e, ok := f.expiry(ts)
	return !ok || e > t
}

// lifeKind is the kind of a lifetime.
type lifeKind uint8

const (
	lkFor lifeKind = iota
	lkUntil
	lkDefault
	lkForever
)

// A life is a lifetime as the generator makes it.
type life struct {
	kind lifeKind
	d    time.Duration // For
	at   time.Time     // Until
}

func (l life) lifetime() ttl.Lifetime {
	switch l.kind {
	case lkFor:
		return ttl.For(l.d)
	case lkUntil:
		return ttl.Until(l.at)
	case lkForever:
		return ttl.Forever
	}
	return ttl.Default
}

func (l life) String() string { return l.lifetime().String() }

// stamp returns the timestamp of a cell of the family written at now with
// l: its expiry rounded down to the millisecond less the offset (Forever:
// MaxTimestamp less the offset), or the error the write is refused with.
// The model's clock never goes before a move's start: a move family is
// written the new way.
func (f *famRule) stamp(now time.Time, l life) (int64, error) {
	var expiry time.Time
	switch l.kind {
	case lkForever:
		return maxTS - f.offset, nil
	case lkDefault:
		if f.offset == 0 {
			return 0, ttl.ErrLifetime // OneSecond has no default
		}
		expiry = now.Add(time.Duration(f.offset) * time.Microsecond)
	case lkFor:
		expiry = now.Add(l.d)
	case lkUntil:
		expiry = l.at
	}
	rounded := expiry.Truncate(time.Millisecond)
	if !rounded.After(now) {
		return 0, ttl.ErrExpired
	}
	return rounded.UnixMicro() - f.offset, nil
}

// renewal returns the timestamp KeepAlive(idle) at now gives a due cell:
// it expires idle + slack after now, slack = min(idle/4, 24h), rounded up
// to the millisecond.
func (f *famRule) renewal(now time.Time, idle time.Duration) int64 {
	slack := min(idle/4, 24*time.Hour)
	e := now.Add(idle + slack)
	if r := e.Truncate(time.Millisecond); r.Before(e) {
		e = r.Add(time.Millisecond)
	}
	return e.UnixMicro() - f.offset
}

// A cell is a stored cell of the model: its timestamp, its value, and
// whether it has a write-time companion (under RecordWriteTime, with the
// same timestamp).
type cell struct {
	ts    int64
	value string
	wt    bool
	sched bool // written through the Table with its schedule's entry
}

// A column's cells are kept newest (highest timestamp) first, as Bigtable
// returns them.
type table map[string]map[string]map[string][]cell // row, family, column

// A model is the table as DESIGN.md says the library and the sweeps leave
// it.
type model struct {
	fams       map[string]*famRule
	names      []string // of fams, sorted
	rows       table
	now        time.Time
	writeTimes bool // the Table records write times
	// collected is, by family, the latest expiry of a cell GC deleted.
	collected map[string]int64
	// entries is the schedule's, when the Table writes one (nil: none):
	// model_schedule_test.go.
	entries map[entryKey]bool
}

func newModel(fams []*famRule, now time.Time, writeTimes bool) *model {
	m := &model{fams: map[string]*famRule{}, rows: table{}, now: now, writeTimes: writeTimes, collected: map[string]int64{}}
	for _, f := range fams {
		m.fams[f.name] = f
		m.names = append(m.names, f.name)
	}
	sort.Strings(m.names)
	return m
}

// clone returns a copy of the stored cells, as a round finds them.
func (t table) clone() table {
	out := make(table, len(t))
	for row, fams := range t {
		fc := make(map[string]map[string][]cell, len(fams))
		for fam, cols := range fams {
			cc := make(map[string][]cell, len(cols))
			for col, cells := range cols {
				cc[col] = slices.Clone(cells)
			}
			fc[fam] = cc
		}
		out[row] = fc
	}
	return out
}

// put stores c in row's fam:col; a cell at the same timestamp is replaced.
func (m *model) put(row, fam, col string, c cell) {
	if m.rows[row] == nil {
		m.rows[row] = map[string]map[string][]cell{}
	}
	if m.rows[row][fam] == nil {
		m.rows[row][fam] = map[string][]cell{}
	}
	cells := m.rows[row][fam][col]
	i := sort.Search(len(cells), func(i int) bool { return cells[i].ts <= c.ts })
	if i < len(cells) && cells[i].ts == c.ts {
		cells[i] = c
		return
	}
	m.rows[row][fam][col] = slices.Insert(cells, i, c)
}

// deleteColumn deletes row's fam:col, and tidies empty maps away.
func (m *model) deleteColumn(row, fam, col string) {
	delete(m.rows[row][fam], col)
	m.tidy(row, fam)
}

func (m *model) tidy(row, fam string) {
	if len(m.rows[row][fam]) == 0 {
		delete(m.rows[row], fam)
	}
	if len(m.rows[row]) == 0 {
		delete(m.rows, row)
	}
}

// A change is one change of a Mutation.
type change struct {
	kind     changeKind
	fam, col string
	value    string
	life     life
}

type changeKind uint8

const (
	chSet changeKind = iota
	chReplace
	chDeleteColumn
	chDeleteRow
)

func (c change) String() string {
	switch c.kind {
	case chSet:
		return fmt.Sprintf("Set(%s:%s=%s, %v)", c.fam, c.col, c.value, c.life)
	case chReplace:
		return fmt.Sprintf("Replace(%s:%s=%s, %v)", c.fam, c.col, c.value, c.life)
	case chDeleteColumn:
		return fmt.Sprintf("DeleteCellsInColumn(%s:%s)", c.fam, c.col)
	}
	return "DeleteRow()"
}

func mutation(changes []change) *ttl.Mutation {
	mut := ttl.NewMutation()
	for _, c := range changes {
		switch c.kind {
		case chSet:
			mut.Set(c.fam, c.col, []byte(c.value), c.life.lifetime())
		case chReplace:
			mut.Replace(c.fam, c.col, []byte(c.value), c.life.lifetime())
		case chDeleteColumn:
			mut.DeleteCellsInColumn(c.fam, c.col)
		case chDeleteRow:
			mut.DeleteRow()
		}
	}
	return mut
}

// apply applies a mutation to row at the model's now: refused whole (the
// first change's error) if a lifetime cannot be stamped, else its changes
// in order, Replace deleting the column first.
func (m *model) apply(row string, changes []change) error {
	stamps := make([]int64, len(changes))
	for i, c := range changes {
		if c.kind == chSet || c.kind == chReplace {
			ts, err := m.fams[c.fam].stamp(m.now, c.life)
			if err != nil {
				return err
			}
			stamps[i] = ts
		}
	}
	for i, c := range changes {
		switch c.kind {
		case chReplace:
			m.deleteColumn(row, c.fam, c.col)
			fallthrough
		case chSet:
			m.put(row, c.fam, c.col, cell{ts: stamps[i], value: c.value, wt: m.writeTimes, sched: m.schedule(row, c.fam, stamps[i])})
		case chDeleteColumn:
			m.deleteColumn(row, c.fam, c.col)
		case chDeleteRow:
			delete(m.rows, row)
		}
	}
	return nil
}

// newestLive returns the index of the newest cell of cells live at t, or
// -1.
func (f *famRule) newestLive(cells []cell, t int64) int {
	for i, c := range cells {
		if f.liveAt(c.ts, t) {
			return i
		}
	}
	return -1
}

// touch is Table.Touch: the lifetime checked first, then the column's
// newest live cell, if any, rewritten alone with the new lifetime, its
// value and its write time kept.
func (m *model) touch(row, fam, col string, l life) (bool, error) {
	f := m.fams[fam]
	ts, err := f.stamp(m.now, l)
	if err != nil {
		return false, err
	}
	cells := m.rows[row][fam][col]
	i := f.newestLive(cells, m.now.UnixMicro())
	if i < 0 {
		return false, nil
	}
	c := cells[i]
	m.rows[row][fam][col] = []cell{{ts: ts, value: c.value, wt: c.wt, sched: m.schedule(row, fam, ts)}}
	return true, nil
}

// keepAlive is a ReadRow of row with KeepAlive(idle) and no filter: in
// each column, the newest live cell, if it expires before now + idle, is
// renewed as Touch renews it, to expire idle + slack after now. It
// returns the number of cells renewed.
func (m *model) keepAlive(row string, idle time.Duration) int {
	now := m.now.UnixMicro()
	renewed := 0
	for _, fam := range m.names {
		f := m.fams[fam]
		for col, cells := range m.rows[row][fam] {
			i := f.newestLive(cells, now)
			if i < 0 {
				continue
			}
			c := cells[i]
			e, ok := f.expiry(c.ts)
			if !ok || !m.now.Add(idle).After(time.UnixMicro(e)) {
				continue
			}
			ts := f.renewal(m.now, idle)
			m.rows[row][fam][col] = []cell{{ts: ts, value: c.value, wt: c.wt, sched: m.schedule(row, fam, ts)}}
			renewed++
		}
	}
	return renewed
}

// A sweepSpec is one sweep of the model's table: the families it is
// given, what its events report, whether they carry values.
type sweepSpec struct {
	fams   []string // sorted
	g      sweep.Granularity
	values bool
}

// A cellRef names a cell that expired in a window, with its expiry.
type cellRef struct {
	fam, col string
	ts       int64
	value    string
	expiry   int64
}

// An expected event is one the model owes: a Cell event names its cell;
// a Column or Row event may name any of the cells that expired last
// (alts), which share one expiry: DESIGN.md does not say which.
type expected struct {
	kind     sweep.Granularity
	row      string
	fam, col string // a Row event's: empty
	expiry   int64
	alts     []cellRef
}

// key identifies an expected event within its row: a Cell event by its
// cell, a Column event by its column, a Row event by nothing.
func (x expected) key() string {
	switch x.kind {
	case sweep.Cell:
		return fmt.Sprintf("%s:%s@%d", x.fam, x.col, x.alts[0].ts)
	case sweep.Column:
		return x.fam + ":" + x.col
	}
	return ""
}

// A rowRead is what a round owes for one row, read in table t: the
// events, the cells expired in its window, and the columns where one did
// (where a sweep that deletes deletes).
type rowRead struct {
	events  []expected
	expired int
	columns [][2]string // family, column
}

// read returns what a round of s over the window (from, until] owes for
// row, in table t: each cell of s's families whose expiry is in the
// window; a column once a cell of it expired in the window and none of it
// is live at until; the row once a cell of it expired in the window and
// none of it in s's families is live at until. (Forever cells are always
// live; write-time companions are not cells.)
func (m *model) read(t table, s *sweepSpec, row string, from, until int64) rowRead {
	var out rowRead
	var rowLast []cellRef
	rowLive := false
	for _, fam := range s.fams {
		f := m.fams[fam]
		cols := make([]string, 0, len(t[row][fam]))
		for col := range t[row][fam] {
			cols = append(cols, col)
		}
		sort.Strings(cols)
		for _, col := range cols {
			var last []cellRef
			live := false
			for _, c := range t[row][fam][col] {
				e, ok := f.expiry(c.ts)
				if !ok || e > until {
					live = true
					continue
				}
				if e <= from {
					continue
				}
				ref := cellRef{fam, col, c.ts, c.value, e}
				out.expired++
				if s.g == sweep.Cell {
					out.events = append(out.events, expected{kind: sweep.Cell, row: row, fam: fam, col: col, expiry: e, alts: []cellRef{ref}})
				}
				last = lastOf(last, ref)
				rowLast = lastOf(rowLast, ref)
			}
			rowLive = rowLive || live
			if len(last) > 0 {
				out.columns = append(out.columns, [2]string{fam, col})
				if s.g == sweep.Column && !live {
					out.events = append(out.events, expected{kind: sweep.Column, row: row, fam: fam, col: col, expiry: last[0].expiry, alts: last})
				}
			}
		}
	}
	if s.g == sweep.Row && len(rowLast) > 0 && !rowLive {
		out.events = append(out.events, expected{kind: sweep.Row, row: row, expiry: rowLast[0].expiry, alts: rowLast})
	}
	return out
}

// lastOf adds c to the cells that expired last, last.
func lastOf(last []cellRef, c cellRef) []cellRef {
	switch {
	case len(last) == 0 || c.expiry > last[0].expiry:
		return []cellRef{c}
	case c.expiry == last[0].expiry:
		return append(last, c)
	}
	return last
}

// sweepDelete is a sweep's deletion in row after its round over a window
// ending at until read columns with a cell expired in it: in each such
// column, every cell expired at until (and its companion) goes; nothing
// live, nothing that never expires.
func (m *model) sweepDelete(row string, columns [][2]string, until int64) {
	for _, fc := range columns {
		fam, col := fc[0], fc[1]
		f := m.fams[fam]
		cells := m.rows[row][fam][col]
		kept := cells[:0:0]
		for _, c := range cells {
			if f.liveAt(c.ts, until) {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			m.deleteColumn(row, fam, col)
		} else {
			m.rows[row][fam][col] = kept
		}
	}
}

// liveColumns returns the columns of row with a cell live now.
func (m *model) liveColumns(row string) [][2]string {
	var out [][2]string
	now := m.now.UnixMicro()
	for _, fam := range m.names {
		f := m.fams[fam]
		for col, cells := range m.rows[row][fam] {
			if f.newestLive(cells, now) >= 0 {
				out = append(out, [2]string{fam, col})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+":"+out[i][1] < out[j][0]+":"+out[j][1] })
	return out
}

// gc is a pass of GC at the model's now: in each family, the cells
// stamped before now − its max age (floored to the millisecond) go, and
// collected notes their latest expiry. It returns the cutoff of each
// family.
func (m *model) gc() map[string]int64 {
	cutoffs := map[string]int64{}
	for _, fam := range m.names {
		cutoffs[fam] = m.now.Add(-m.fams[fam].age).Truncate(time.Millisecond).UnixMicro()
	}
	for row, fams := range m.rows {
		for fam, cols := range fams {
			for col, cells := range cols {
				i := sort.Search(len(cells), func(i int) bool { return cells[i].ts < cutoffs[fam] })
				for _, c := range cells[i:] {
					if e, ok := m.fams[fam].expiry(c.ts); ok && e > m.collected[fam] {
						m.collected[fam] = e
					}
				}
				if i == 0 {
					m.deleteColumn(row, fam, col)
				} else {
					cols[col] = cells[:i]
				}
			}
		}
	}
	return cutoffs
}

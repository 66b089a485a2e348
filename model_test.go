package ttl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// This file checks the retention promise against a reference model: a
// seeded generator makes a list of operations (writes with every kind of
// lifetime, deletes, conditional and bulk writes, clock moves, reads with
// and without the caller's filters), and each is applied both to a Table
// on the bttest emulator and to an in-memory model of the semantics that
// DESIGN.md states. Every read must return exactly what the model says,
// and every few operations the raw table must hold exactly the cells the
// model stores, expired ones included.
//
// The model does not call the library: it keeps the stored cells (family,
// column, timestamp, value) as Bigtable does, with a second write at the
// same timestamp replacing the first, and decides visibility by DESIGN.md's
// rules alone: OneSecond iff ts > now, DefaultExpiration(d) iff ts + d >
// now, SequenceNumbers(n) iff among the newest n cells of its column, a
// family without a strategy always; the caller's filter after that; a
// conditional predicate on live cells only; Replace deleting the column
// first; ApplyBulk row by row. With WithReadMargin(m) the rules are applied
// at now + m and a write hidden at once is refused; with RecordWriteTime
// each managed cell has its companion, and reads with WithWriteTimes
// report the write time. Table.ExpiresAt of every cell read must be the
// model's expiry.
//
// Five table variants run: families undeclared, declared (two sharing a
// strategy), with a read margin and write times, and two with a single
// strategy (the bare filter; write times). The emulator takes a row's
// families in Go map order for CellsPerRowLimitFilter, so a read with one
// may return any of the results the family orders give.
//
// CELLTTL_MODEL_OPS sets the number of operations per table variant
// (default 1000, 250 with -short), CELLTTL_MODEL_SEED the seed (default:
// the time). A failing run prints the seed and the shortest list of
// operations it found that still fails.

const (
	modelDefault  = 90 * time.Second // the d of the model's DefaultExpiration
	modelVersions = 2                // the n of the model's SequenceNumbers
)

// rule is the visibility rule of one family of a model table.
type rule uint8

const (
	ruleOneSecond rule = iota
	ruleDefault
	ruleSequence
	ruleNone // no strategy
)

func (r rule) strategy() ttl.Strategy {
	switch r {
	case ruleOneSecond:
		return ttl.OneSecond()
	case ruleDefault:
		return ttl.DefaultExpiration(modelDefault)
	case ruleSequence:
		return ttl.SequenceNumbers(modelVersions)
	}
	return nil
}

// offset is the time between a cell's timestamp and its expiry.
func (r rule) offset() time.Duration {
	if r == ruleDefault {
		return modelDefault
	}
	return 0
}

// variant is one table configuration the model runs against.
type variant struct {
	name       string
	families   map[string]rule
	declared   bool // OtherFamilies(the families without a strategy)
	margin     time.Duration
	writeTimes bool
}

var modelVariants = []variant{
	{name: "undeclared", families: map[string]rule{"os": ruleOneSecond, "de": ruleDefault, "sn": ruleSequence, "un": ruleNone}},
	{name: "declared", families: map[string]rule{"os": ruleOneSecond, "os2": ruleOneSecond, "de": ruleDefault, "sn": ruleSequence, "un": ruleNone}, declared: true},
	{name: "margin+writetimes", families: map[string]rule{"os": ruleOneSecond, "de": ruleDefault, "sn": ruleSequence, "un": ruleNone},
		margin: 2*time.Second + 500*time.Microsecond, writeTimes: true},
	{name: "one strategy", families: map[string]rule{"os": ruleOneSecond, "os2": ruleOneSecond}, declared: true},
	{name: "one strategy+writetimes", families: map[string]rule{"de": ruleDefault, "de2": ruleDefault}, declared: true, writeTimes: true},
}

func (v *variant) familyNames() []string {
	names := make([]string, 0, len(v.families))
	for f := range v.families {
		names = append(names, f)
	}
	sort.Strings(names)
	return names
}

// newTable makes the variant's Table on a fresh table of e, reading clock.
func (v *variant) newTable(t testing.TB, e *emulator.Emulator, name string, clock *fakeClock) (*ttl.Table, *bigtable.Table) {
	t.Helper()
	fams := map[string]bigtable.GCPolicy{}
	managed := map[string]ttl.Strategy{}
	var others []string
	for _, f := range v.familyNames() {
		fams[f] = nil // no GC: the emulator's GC runs on the real clock
		if s := v.families[f].strategy(); s != nil {
			managed[f] = s
		} else {
			others = append(others, f)
		}
	}
	opts := []ttl.Option{ttl.WithClock(clock.Now)}
	if v.declared {
		opts = append(opts, ttl.OtherFamilies(others...))
	}
	if v.margin > 0 {
		opts = append(opts, ttl.WithReadMargin(v.margin))
	}
	if v.writeTimes {
		opts = append(opts, ttl.RecordWriteTime())
	}
	raw := e.TableForTest(t, name, fams)
	tbl, err := ttl.NewTable(raw, managed, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, raw
}

// --- Operations ----------------------------------------------------------

type lifeKind uint8

const (
	lkDefault lifeKind = iota
	lkFor
	lkUntil
	lkVersion
	lkForever
)

// lifeSpec is a Lifetime the model can compute with and a failure can print.
type lifeSpec struct {
	kind lifeKind
	d    time.Duration
	t    time.Time
	seq  int64
}

func (l lifeSpec) lifetime() ttl.Lifetime {
	switch l.kind {
	case lkFor:
		return ttl.For(l.d)
	case lkUntil:
		return ttl.Until(l.t)
	case lkVersion:
		return ttl.Version(l.seq)
	case lkForever:
		return ttl.Forever
	}
	return ttl.Default
}

func (l lifeSpec) String() string { return l.lifetime().String() }

type mutKind uint8

const (
	mkSet mutKind = iota
	mkReplace
	mkDeleteColumn
	mkDeleteFamily
	mkDeleteRow
)

type mutOp struct {
	kind     mutKind
	fam, col string
	value    string
	life     lifeSpec
}

func (o mutOp) String() string {
	switch o.kind {
	case mkSet:
		return fmt.Sprintf("Set(%s:%q, %q, %v)", o.fam, o.col, o.value, o.life)
	case mkReplace:
		return fmt.Sprintf("Replace(%s:%q, %q, %v)", o.fam, o.col, o.value, o.life)
	case mkDeleteColumn:
		return fmt.Sprintf("DeleteCellsInColumn(%s:%q)", o.fam, o.col)
	case mkDeleteFamily:
		return fmt.Sprintf("DeleteCellsInFamily(%s)", o.fam)
	}
	return "DeleteRow()"
}

// mutSpec is a Mutation recipe: nil, plain (ops) or conditional.
type mutSpec struct {
	isNil bool
	ops   []mutOp
	cond  *condSpec
}

type condSpec struct {
	filter  mfilter // nil: any live cell
	yes, no *mutSpec
}

func (s *mutSpec) mutation() *ttl.Mutation {
	if s == nil || s.isNil {
		return nil
	}
	if s.cond != nil {
		var f bigtable.Filter
		if s.cond.filter != nil {
			f = s.cond.filter.bt()
		}
		return ttl.NewCondMutation(f, s.cond.yes.mutation(), s.cond.no.mutation())
	}
	m := ttl.NewMutation()
	for _, o := range s.ops {
		switch o.kind {
		case mkSet:
			m.Set(o.fam, o.col, []byte(o.value), o.life.lifetime())
		case mkReplace:
			m.Replace(o.fam, o.col, []byte(o.value), o.life.lifetime())
		case mkDeleteColumn:
			m.DeleteCellsInColumn(o.fam, o.col)
		case mkDeleteFamily:
			m.DeleteCellsInFamily(o.fam)
		case mkDeleteRow:
			m.DeleteRow()
		}
	}
	return m
}

func (s *mutSpec) String() string {
	switch {
	case s == nil || s.isNil:
		return "nil"
	case s.cond != nil:
		f := "nil"
		if s.cond.filter != nil {
			f = s.cond.filter.String()
		}
		return fmt.Sprintf("Cond(%s, %v, %v)", f, s.cond.yes, s.cond.no)
	}
	parts := make([]string, len(s.ops))
	for i, o := range s.ops {
		parts[i] = o.String()
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

type opKind uint8

const (
	opClock opKind = iota
	opApply
	opBulk
	opReadRow
	opReadRows
)

// rowSetSpec is a bigtable.RowSet: every row, a list, or a range.
type rowSetSpec struct {
	list       []string // when non-nil
	start, end string   // a range when list is nil; "" end: unbounded
}

func (rs rowSetSpec) rowSet() bigtable.RowSet {
	if rs.list != nil {
		return bigtable.RowList(rs.list)
	}
	if rs.end == "" {
		return bigtable.InfiniteRange(rs.start)
	}
	return bigtable.NewRange(rs.start, rs.end)
}

func (rs rowSetSpec) contains(row string) bool {
	if rs.list != nil {
		return slices.Contains(rs.list, row)
	}
	return row >= rs.start && (rs.end == "" || row < rs.end)
}

func (rs rowSetSpec) String() string {
	if rs.list != nil {
		return fmt.Sprintf("RowList%q", rs.list)
	}
	return fmt.Sprintf("Range(%q, %q)", rs.start, rs.end)
}

type readSpec struct {
	row        string     // ReadRow
	rows       rowSetSpec // ReadRows
	filter     mfilter    // the caller's RowFilter, or nil
	limit      int64      // LimitRows, or 0
	reverse    bool
	writeTimes bool
}

func (r readSpec) options() []ttl.ReadOption {
	var opts []ttl.ReadOption
	if r.filter != nil {
		opts = append(opts, ttl.RowFilter(r.filter.bt()))
	}
	if r.limit > 0 {
		opts = append(opts, bigtable.LimitRows(r.limit))
	}
	if r.reverse {
		opts = append(opts, bigtable.ReverseScan())
	}
	if r.writeTimes {
		opts = append(opts, ttl.WithWriteTimes())
	}
	return opts
}

func (r readSpec) optionString() string {
	var s []string
	if r.filter != nil {
		s = append(s, "RowFilter("+r.filter.String()+")")
	}
	if r.limit > 0 {
		s = append(s, fmt.Sprintf("LimitRows(%d)", r.limit))
	}
	if r.reverse {
		s = append(s, "ReverseScan()")
	}
	if r.writeTimes {
		s = append(s, "WithWriteTimes()")
	}
	if len(s) == 0 {
		return ""
	}
	return ", " + strings.Join(s, ", ")
}

// op is one step of a run. Everything in it is concrete (absolute clock
// instants, values), so that any sub-list of a run can be replayed.
type op struct {
	kind opKind
	at   time.Time  // opClock: the clock is set to at
	row  string     // opApply
	mut  *mutSpec   // opApply
	rows []string   // opBulk
	muts []*mutSpec // opBulk
	read readSpec   // opReadRow, opReadRows
}

func (o op) String() string {
	switch o.kind {
	case opClock:
		return "clock.Set(" + o.at.UTC().Format(time.RFC3339Nano) + ")"
	case opApply:
		return fmt.Sprintf("Apply(%q, %v)", o.row, o.mut)
	case opBulk:
		parts := make([]string, len(o.rows))
		for i := range o.rows {
			parts[i] = fmt.Sprintf("%q: %v", o.rows[i], o.muts[i])
		}
		return "ApplyBulk(" + strings.Join(parts, ", ") + ")"
	case opReadRow:
		return fmt.Sprintf("ReadRow(%q%s)", o.read.row, o.read.optionString())
	}
	return fmt.Sprintf("ReadRows(%v%s)", o.read.rows, o.read.optionString())
}

// --- Filters the model can evaluate ---------------------------------------

// flatCell is one cell of a row as the model and the comparisons see it.
// WT is the write time in microseconds, -1 when there is none.
type flatCell struct {
	Fam, Col string
	TS       int64
	Value    string
	WT       int64
}

func (c flatCell) String() string {
	s := fmt.Sprintf("%s:%q=%q@%d", c.Fam, c.Col, c.Value, c.TS)
	if c.WT >= 0 {
		s += fmt.Sprintf(" written %d", c.WT)
	}
	return s
}

// sortFlat sorts cells in the order Bigtable returns them, with the
// families in order: by family, column, newest first.
func sortFlat(cs []flatCell, order []string) {
	rank := func(f string) int { return slices.Index(order, f) }
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Fam != b.Fam {
			return rank(a.Fam) < rank(b.Fam)
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		if a.TS != b.TS {
			return a.TS > b.TS
		}
		return a.Value < b.Value
	})
}

// mfilter is a bigtable.Filter with the model's evaluation of it. eval
// takes and returns cells sorted with the families in order.
type mfilter interface {
	bt() bigtable.Filter
	eval(cs []flatCell, order []string) []flatCell
	// rowLimit tells whether the result depends on the family order:
	// the emulator takes a row's families in map order for
	// CellsPerRowLimitFilter.
	rowLimit() bool
	String() string
}

type fLatest int

func (f fLatest) bt() bigtable.Filter { return bigtable.LatestNFilter(int(f)) }
func (f fLatest) rowLimit() bool      { return false }
func (f fLatest) String() string      { return f.bt().String() }
func (f fLatest) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	n := 0
	for i, c := range cs {
		if i == 0 || c.Fam != cs[i-1].Fam || c.Col != cs[i-1].Col {
			n = 0
		}
		if n < int(f) {
			out = append(out, c)
		}
		n++
	}
	return out
}

type fRowLimit int

func (f fRowLimit) bt() bigtable.Filter { return bigtable.CellsPerRowLimitFilter(int(f)) }
func (f fRowLimit) rowLimit() bool      { return true }
func (f fRowLimit) String() string      { return f.bt().String() }
func (f fRowLimit) eval(cs []flatCell, _ []string) []flatCell {
	return slices.Clone(cs[:min(len(cs), int(f))])
}

type fColumns struct{ fam, start, end string }

func (f fColumns) bt() bigtable.Filter { return bigtable.ColumnRangeFilter(f.fam, f.start, f.end) }
func (f fColumns) rowLimit() bool      { return false }
func (f fColumns) String() string {
	return fmt.Sprintf("columnRangeFilter(%s,%q,%q)", f.fam, f.start, f.end)
}
func (f fColumns) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	for _, c := range cs {
		if c.Fam == f.fam && c.Col >= f.start && (f.end == "" || c.Col < f.end) {
			out = append(out, c)
		}
	}
	return out
}

type fFamily string

func (f fFamily) bt() bigtable.Filter { return bigtable.FamilyFilter(string(f)) }
func (f fFamily) rowLimit() bool      { return false }
func (f fFamily) String() string      { return f.bt().String() }
func (f fFamily) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	for _, c := range cs {
		if c.Fam == string(f) {
			out = append(out, c)
		}
	}
	return out
}

type fValue string

func (f fValue) bt() bigtable.Filter { return bigtable.ValueFilter(regexp.QuoteMeta(string(f))) }
func (f fValue) rowLimit() bool      { return false }
func (f fValue) String() string      { return f.bt().String() }
func (f fValue) eval(cs []flatCell, _ []string) []flatCell {
	var out []flatCell
	for _, c := range cs {
		if c.Value == string(f) {
			out = append(out, c)
		}
	}
	return out
}

type fChain [2]mfilter

func (f fChain) bt() bigtable.Filter { return bigtable.ChainFilters(f[0].bt(), f[1].bt()) }
func (f fChain) rowLimit() bool      { return f[0].rowLimit() || f[1].rowLimit() }
func (f fChain) String() string      { return f.bt().String() }
func (f fChain) eval(cs []flatCell, order []string) []flatCell {
	return f[1].eval(f[0].eval(cs, order), order)
}

// fInterleave holds no CellsPerRowLimitFilter: the emulator would take
// the families in a different order in each branch.
type fInterleave [2]mfilter

func (f fInterleave) bt() bigtable.Filter { return bigtable.InterleaveFilters(f[0].bt(), f[1].bt()) }
func (f fInterleave) rowLimit() bool      { return false }
func (f fInterleave) String() string      { return f.bt().String() }
func (f fInterleave) eval(cs []flatCell, order []string) []flatCell {
	out := append(f[0].eval(cs, order), f[1].eval(cs, order)...)
	sortFlat(out, order)
	return out
}

// --- The model --------------------------------------------------------------

// storedCell is a cell as the model stores it. wt is the write time in
// microseconds of a cell that has a write-time companion, -1 otherwise.
type storedCell struct {
	ts    int64
	value string
	wt    int64
}

// model is the reference: the cells a table stores, expired ones
// included, and DESIGN.md's rules for what a read returns.
type model struct {
	v    *variant
	now  time.Time
	rows map[string]map[string]map[string][]storedCell // row, family, column: newest first
}

func newModel(v *variant) *model {
	return &model{v: v, now: base, rows: map[string]map[string]map[string][]storedCell{}}
}

// floorMs is t in whole milliseconds since the epoch, rounded down. The
// model's instants lie within ±300,000 years, where this cannot overflow.
func floorMs(t time.Time) int64 { return t.Unix()*1000 + int64(t.Nanosecond())/1e6 }

// timestamp is DESIGN.md's write rule: the timestamp a cell written at now
// with life gets in family, or the error that refuses it.
func (m *model) timestamp(family string, l lifeSpec, now time.Time) (int64, error) {
	r := m.v.families[family]
	switch r {
	case ruleNone:
		if l.kind != lkDefault {
			return 0, ttl.ErrLifetime
		}
		return floorMs(now) * 1000, nil
	case ruleSequence:
		if l.kind != lkVersion {
			return 0, ttl.ErrLifetime
		}
		if l.seq < 0 || l.seq > maxSeq {
			return 0, ttl.ErrOutOfRange
		}
		return l.seq * 1000, nil
	}
	offset := r.offset().Milliseconds()
	var expiry time.Time
	switch l.kind {
	case lkForever:
		return int64(ttl.MaxTimestamp) - offset*1000, nil
	case lkVersion:
		return 0, ttl.ErrLifetime
	case lkDefault:
		if r == ruleOneSecond {
			return 0, ttl.ErrLifetime
		}
		expiry = now.Add(r.offset())
	case lkFor:
		expiry = now.Add(l.d)
	case lkUntil:
		expiry = l.t
	}
	e := floorMs(expiry) // never late: rounded down
	if !time.UnixMilli(e).After(now) {
		return 0, ttl.ErrExpired // never born expired
	}
	if e >= maxSeq || e-offset < 0 { // the last millisecond is Forever's
		return 0, ttl.ErrOutOfRange
	}
	if !time.UnixMilli(e).After(now.Add(m.v.margin)) {
		return 0, ttl.ErrExpired // born hidden by the read margin
	}
	return (e - offset) * 1000, nil
}

// live is DESIGN.md's read rule: whether cells[i] of a column of family is
// returned at instant at.
func (m *model) live(family string, cells []storedCell, i int, at time.Time) bool {
	switch m.v.families[family] {
	case ruleOneSecond:
		return time.UnixMicro(cells[i].ts).After(at)
	case ruleDefault:
		return time.UnixMicro(cells[i].ts).Add(modelDefault).After(at)
	case ruleSequence:
		return i < modelVersions
	}
	return true
}

// expiry is DESIGN.md's expiry of a cell read: the instant from which it
// is hidden, and false for one that does not expire by time (Forever,
// stored at MaxTimestamp less the offset; a sequence number; a family
// without a strategy).
func (m *model) expiry(it bigtable.ReadItem) (time.Time, bool) {
	fam, _, _ := strings.Cut(it.Column, ":")
	r := m.v.families[fam]
	if r != ruleOneSecond && r != ruleDefault || int64(it.Timestamp) >= int64(ttl.MaxTimestamp)-r.offset().Microseconds() {
		return time.Time{}, false
	}
	return time.UnixMicro(int64(it.Timestamp)).Add(r.offset()), true
}

// change is one validated op of a mutation, with its timestamp.
type change struct {
	mutOp
	ts int64
}

// build validates a mutation as a whole at now: any bad op refuses it.
func (m *model) build(s *mutSpec, now time.Time) ([]change, error) {
	if s == nil || s.isNil {
		return nil, ttl.ErrInvalidMutation
	}
	if s.cond != nil {
		return nil, ttl.ErrInvalidMutation // conditional: see applyCond
	}
	if len(s.ops) == 0 {
		return nil, ttl.ErrInvalidMutation
	}
	changes := make([]change, 0, len(s.ops))
	for _, o := range s.ops {
		c := change{mutOp: o}
		if o.kind == mkSet || o.kind == mkReplace {
			ts, err := m.timestamp(o.fam, o.life, now)
			if err != nil {
				return nil, err
			}
			c.ts = ts
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// empty tells whether a conditional branch has nothing to apply.
func (s *mutSpec) empty() bool { return s == nil || s.isNil || s.cond == nil && len(s.ops) == 0 }

// apply applies a plain or conditional mutation to row at now; matched
// is the predicate's result for a conditional one.
func (m *model) apply(row string, s *mutSpec, now time.Time) (matched bool, err error) {
	if s == nil || s.isNil || s.cond == nil {
		changes, err := m.build(s, now)
		if err != nil {
			return false, err
		}
		m.write(row, changes, now)
		return false, nil
	}
	var branches [2][]change
	for i, b := range []*mutSpec{s.cond.yes, s.cond.no} {
		if b.empty() {
			continue
		}
		if b.cond != nil {
			return false, ttl.ErrInvalidMutation // nested
		}
		if branches[i], err = m.build(b, now); err != nil {
			return false, err
		}
	}
	if branches[0] == nil && branches[1] == nil {
		return false, ttl.ErrInvalidMutation
	}
	live := m.liveCells(row, now.Add(m.v.margin))
	if s.cond.filter != nil {
		live = s.cond.filter.eval(live, m.v.familyNames())
	}
	matched = len(live) > 0
	if matched {
		m.write(row, branches[0], now)
	} else {
		m.write(row, branches[1], now)
	}
	return matched, nil
}

// write applies validated changes, in order.
func (m *model) write(row string, changes []change, now time.Time) {
	for _, c := range changes {
		fams := m.rows[row]
		switch c.kind {
		case mkDeleteRow:
			delete(m.rows, row)
			continue
		case mkDeleteFamily:
			delete(fams, c.fam)
			continue
		case mkDeleteColumn, mkReplace:
			delete(fams[c.fam], c.col)
			if c.kind == mkDeleteColumn {
				continue
			}
		}
		if fams == nil {
			fams = map[string]map[string][]storedCell{}
			m.rows[row] = fams
		}
		if fams[c.fam] == nil {
			fams[c.fam] = map[string][]storedCell{}
		}
		wt := int64(-1)
		if m.v.writeTimes && m.v.families[c.fam] != ruleNone {
			wt = now.UnixMicro()
		}
		cells := fams[c.fam][c.col]
		i := sort.Search(len(cells), func(i int) bool { return cells[i].ts <= c.ts })
		nc := storedCell{ts: c.ts, value: c.value, wt: wt}
		if i < len(cells) && cells[i].ts == c.ts {
			cells[i] = nc // the same timestamp replaces
		} else {
			cells = slices.Insert(cells, i, nc)
		}
		fams[c.fam][c.col] = cells
	}
	for row, fams := range m.rows {
		for f, cols := range fams {
			for c, cells := range cols {
				if len(cells) == 0 {
					delete(cols, c)
				}
			}
			if len(cols) == 0 {
				delete(fams, f)
			}
		}
		if len(fams) == 0 {
			delete(m.rows, row)
		}
	}
}

// liveCells returns the cells of row a read at instant at returns before
// the caller's filter, sorted.
func (m *model) liveCells(row string, at time.Time) []flatCell {
	var out []flatCell
	for f, cols := range m.rows[row] {
		for c, cells := range cols {
			for i, cell := range cells {
				if m.live(f, cells, i, at) {
					out = append(out, flatCell{f, c, cell.ts, cell.value, cell.wt})
				}
			}
		}
	}
	sortFlat(out, m.v.familyNames())
	return out
}

// rawCells returns every cell of row Bigtable stores, write-time
// companions included.
func (m *model) rawCells(row string) []flatCell {
	var out []flatCell
	for f, cols := range m.rows[row] {
		for c, cells := range cols {
			for _, cell := range cells {
				out = append(out, flatCell{f, c, cell.ts, cell.value, -1})
				if cell.wt >= 0 {
					out = append(out, flatCell{f, "\xff\xffwt:" + c, cell.ts, string(binary.BigEndian.AppendUint64(nil, uint64(cell.wt))), -1})
				}
			}
		}
	}
	sortFlat(out, m.v.familyNames())
	return out
}

// stored is the number of data cells row stores, live or not.
func (m *model) stored(row string) int {
	n := 0
	for _, cols := range m.rows[row] {
		for _, cells := range cols {
			n += len(cells)
		}
	}
	return n
}

func (m *model) rowKeys() []string {
	keys := make([]string, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// readResult is what a read returns: each row's cells, in the order rows
// came.
type readResult struct {
	keys  []string
	cells map[string][]flatCell
}

func (r readResult) equal(o readResult) bool {
	if !slices.Equal(r.keys, o.keys) {
		return false
	}
	for _, k := range r.keys {
		if !slices.Equal(r.cells[k], o.cells[k]) {
			return false
		}
	}
	return true
}

// expected is what a read may return: the rows, in order, and for each
// the cells it may have. A row has more than one possible list of cells
// when a CellsPerRowLimitFilter makes it depend on the order in which the
// emulator takes the row's families (the order of a Go map).
type expected struct {
	keys  []string
	cells map[string][][]flatCell
}

func (w expected) matches(got readResult) bool {
	if !slices.Equal(got.keys, w.keys) {
		return false
	}
	for _, k := range w.keys {
		if !slices.ContainsFunc(w.cells[k], func(cs []flatCell) bool { return slices.Equal(cs, got.cells[k]) }) {
			return false
		}
	}
	return true
}

func (w expected) String() string {
	if len(w.keys) == 0 {
		return "  (no rows)"
	}
	var b strings.Builder
	for i, k := range w.keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j, cs := range w.cells[k] {
			if j > 0 {
				b.WriteString("\n    or ")
			} else {
				fmt.Fprintf(&b, "  %s: ", k)
			}
			fmt.Fprint(&b, cs)
		}
	}
	return b.String()
}

// read returns what a read may return.
func (m *model) read(r readSpec, single bool) expected {
	at := m.now.Add(m.v.margin)
	orders := [][]string{m.v.familyNames()}
	if r.filter != nil && r.filter.rowLimit() {
		orders = permutations(m.v.familyNames())
	}
	res := expected{cells: map[string][][]flatCell{}}
	keys := m.rowKeys()
	if r.reverse {
		slices.Reverse(keys)
	}
	sent := int64(0)
	for _, k := range keys {
		if single && k != r.row || !single && !r.rows.contains(k) {
			continue
		}
		if r.limit > 0 && sent >= r.limit {
			break
		}
		live := m.liveCells(k, at)
		// With write times the server also sends the companions of the
		// row's live cells: the row counts for LimitRows even when the
		// caller's filter keeps none of its cells.
		companions := r.writeTimes && slices.ContainsFunc(live, func(c flatCell) bool { return c.WT >= 0 })
		var options [][]flatCell
		for _, order := range orders {
			cs := slices.Clone(live)
			sortFlat(cs, order)
			if r.filter != nil {
				cs = r.filter.eval(cs, order)
			}
			if len(cs) == 0 {
				continue // not returned, whatever the order
			}
			if !r.writeTimes {
				for i := range cs {
					cs[i].WT = -1
				}
			}
			sortFlat(cs, m.v.familyNames())
			if !slices.ContainsFunc(options, func(o []flatCell) bool { return slices.Equal(o, cs) }) {
				options = append(options, cs)
			}
		}
		if len(options) > 0 || companions {
			sent++
		}
		if len(options) > 0 {
			res.keys = append(res.keys, k)
			res.cells[k] = options
		}
	}
	return res
}

func permutations(s []string) [][]string {
	if len(s) <= 1 {
		return [][]string{slices.Clone(s)}
	}
	var out [][]string
	for i := range s {
		rest := slices.Concat(s[:i:i], s[i+1:])
		for _, p := range permutations(rest) {
			out = append(out, append([]string{s[i]}, p...))
		}
	}
	return out
}

// flatRow flattens a row read through the table; write times come from
// ttl.WriteTime, and a cell read without them must carry no label.
func flatRow(r bigtable.Row, families []string) []flatCell {
	var out []flatCell
	for _, items := range r {
		for _, it := range items {
			fam, col, _ := strings.Cut(it.Column, ":")
			c := flatCell{fam, col, int64(it.Timestamp), string(it.Value), -1}
			if wt, ok := ttl.WriteTime(it); ok {
				c.WT = wt.UnixMicro()
			} else if len(it.Labels) > 0 {
				c.Value += fmt.Sprintf(" (labels %q)", it.Labels)
			}
			out = append(out, c)
		}
	}
	// Bigtable returns a family's cells in order: check it kept it.
	got := slices.Clone(out)
	sort.SliceStable(got, func(i, j int) bool { return got[i].Fam < got[j].Fam })
	sortFlat(out, families)
	if !slices.Equal(got, out) {
		return append(got, flatCell{Fam: "?", Col: "cells out of order", WT: -1})
	}
	return out
}

// --- The generator ----------------------------------------------------------

var modelRows = []string{"r0", "r1", "r2", "r3"}

var modelColumns = []string{"", "a", "b"}

// gen makes a random run. It keeps its own model so that clock moves and
// lifetimes can aim at the expiries of stored cells.
type gen struct {
	r        *rand.Rand
	v        *variant
	m        *model
	values   int
	condNext string // the row of a condition to make next
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func (g *gen) family() string { return pick(g.r, g.v.familyNames()...) }

// expiries returns the expiries of the stored cells that expire by time,
// earliest first.
func (g *gen) expiries() []time.Time {
	var out []time.Time
	for _, fams := range g.m.rows {
		for f, cols := range fams {
			r := g.v.families[f]
			if r != ruleOneSecond && r != ruleDefault {
				continue
			}
			for _, cells := range cols {
				for _, c := range cells {
					if e := time.UnixMicro(c.ts).Add(r.offset()); floorMs(e) < maxSeq-int64(modelDefault/time.Millisecond) {
						out = append(out, e)
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

func (g *gen) duration() time.Duration {
	ms := time.Millisecond
	switch g.r.IntN(12) {
	case 0:
		return pick(g.r, 0, -ms, time.Nanosecond, 999*time.Microsecond, ms, ms+time.Nanosecond, 1500*time.Microsecond, 2*ms-time.Nanosecond)
	case 1:
		return g.v.margin + pick(g.r, -time.Nanosecond, 0, time.Nanosecond, ms, ms+time.Nanosecond)
	case 2:
		return modelDefault + pick(g.r, -ms, -time.Nanosecond, 0, time.Nanosecond, ms)
	case 3, 4, 5:
		return time.Duration(g.r.Int64N(int64(10 * time.Second)))
	case 6, 7:
		return time.Duration(g.r.Int64N(int64(10 * time.Minute)))
	case 8:
		return time.Duration(g.r.Int64N(int64(48 * time.Hour)))
	case 9:
		return -time.Duration(g.r.Int64N(int64(time.Hour)))
	case 10:
		return 290 * 365 * 24 * time.Hour // about the longest Duration
	}
	return time.Duration(1+g.r.IntN(5000)) * ms
}

func (g *gen) until() time.Time {
	switch g.r.IntN(8) {
	case 0:
		return g.m.now
	case 1:
		if es := g.expiries(); len(es) > 0 { // collide with a stored cell
			return pick(g.r, es...).Add(pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond))
		}
	case 2:
		return pick(g.r,
			time.Time{}, time.Unix(-1, 0), time.Unix(0, 0),
			time.Date(200000, 1, 1, 0, 0, 0, 0, time.UTC),
			time.UnixMilli(maxSeq), time.UnixMilli(maxSeq).Add(999999), time.UnixMilli(maxSeq).Add(time.Millisecond),
			time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	return g.m.now.Add(g.duration())
}

func (g *gen) life(family string) lifeSpec {
	kind := lkDefault
	if g.r.IntN(100) < 8 {
		kind = pick(g.r, lkDefault, lkFor, lkUntil, lkVersion, lkForever) // mostly refused
	} else {
		switch g.v.families[family] {
		case ruleSequence:
			kind = lkVersion
		case ruleOneSecond:
			kind = pick(g.r, lkFor, lkFor, lkFor, lkUntil, lkUntil, lkFor, lkFor, lkUntil, lkFor, lkForever)
		case ruleDefault:
			kind = pick(g.r, lkDefault, lkDefault, lkFor, lkFor, lkFor, lkUntil, lkUntil, lkFor, lkUntil, lkForever)
		}
	}
	switch kind {
	case lkFor:
		return lifeSpec{kind: lkFor, d: g.duration()}
	case lkUntil:
		return lifeSpec{kind: lkUntil, t: g.until()}
	case lkVersion:
		seq := g.r.Int64N(6)
		if g.r.IntN(20) == 0 {
			seq = pick(g.r, -1, maxSeq-1, maxSeq, maxSeq+1)
		}
		return lifeSpec{kind: lkVersion, seq: seq}
	}
	return lifeSpec{kind: kind}
}

func (g *gen) value() string {
	g.values++
	return "v" + strconv.Itoa(g.values)
}

func (g *gen) mutOp() mutOp {
	o := mutOp{fam: g.family(), col: pick(g.r, modelColumns...)}
	switch x := g.r.IntN(100); {
	case x < 50:
		o.kind = mkSet
	case x < 75:
		o.kind = mkReplace
	case x < 88:
		o.kind = mkDeleteColumn
	case x < 97:
		o.kind = mkDeleteFamily
	default:
		o.kind = mkDeleteRow
	}
	if o.kind == mkSet || o.kind == mkReplace {
		o.value = g.value()
		o.life = g.life(o.fam)
	}
	return o
}

func (g *gen) plain() *mutSpec {
	s := &mutSpec{}
	n := 1 + g.r.IntN(3)
	if g.r.IntN(60) == 0 {
		n = 0 // an empty mutation is refused
	}
	for range n {
		s.ops = append(s.ops, g.mutOp())
	}
	return s
}

func (g *gen) branch() *mutSpec {
	switch g.r.IntN(12) {
	case 0, 1, 2:
		return nil
	case 3:
		return &mutSpec{} // empty: skipped
	case 4:
		if g.r.IntN(4) == 0 {
			return &mutSpec{cond: &condSpec{yes: g.plain()}} // nested: refused
		}
	}
	return g.plain()
}

// storedValue returns a value stored in family:col of row, live or not.
func (g *gen) storedValue(row, family, col string) string {
	if cells := g.m.rows[row][family][col]; len(cells) > 0 {
		return pick(g.r, cells...).value
	}
	return "v1"
}

// nearExpiry returns a cell of row that is live at now but expires soon:
// within twice the read margin, or 10ms. A condition or read aimed at it
// tells a rule applied at now from one applied at now + margin.
func (g *gen) nearExpiry(row string) (fam, col, value string, ok bool) {
	horizon := g.m.now.Add(max(2*g.v.margin, 10*time.Millisecond))
	var near [][3]string
	for f, cols := range g.m.rows[row] {
		r := g.v.families[f]
		if r != ruleOneSecond && r != ruleDefault {
			continue
		}
		for c, cells := range cols {
			for _, cell := range cells {
				if e := time.UnixMicro(cell.ts).Add(r.offset()); e.After(g.m.now) && !e.After(horizon) {
					near = append(near, [3]string{f, c, cell.value})
				}
			}
		}
	}
	if len(near) == 0 {
		return "", "", "", false
	}
	sort.Slice(near, func(i, j int) bool { return near[i][2] < near[j][2] }) // map order is random
	n := pick(g.r, near...)
	return n[0], n[1], n[2], true
}

// cond makes a conditional mutation; an aimed one tests a column whose
// cell is about to be hidden.
func (g *gen) cond(row string, aimed bool) *mutSpec {
	c := &condSpec{yes: g.branch(), no: g.branch()}
	fam, col := g.family(), pick(g.r, modelColumns...)
	value := g.storedValue(row, fam, col)
	kind := g.r.IntN(3)
	if f, cl, v, ok := g.nearExpiry(row); ok && (aimed || g.r.IntN(2) == 0) {
		fam, col, value = f, cl, v
		if aimed {
			kind = 1 + g.r.IntN(2)
		}
	}
	switch kind {
	case 1: // the column has a live cell
		c.filter = fColumns{fam, col, col + "\x00"}
	case 2: // the column's newest live value is v
		c.filter = fChain{fChain{fColumns{fam, col, col + "\x00"}, fLatest(1)}, fValue(value)}
	}
	return &mutSpec{cond: c}
}

func (g *gen) filter(row string) mfilter {
	fam, col := g.family(), pick(g.r, modelColumns...)
	bound := func() string { return pick(g.r, "", "a", "a\x00", "b", "c") }
	switch g.r.IntN(11) {
	case 0:
		return fLatest(1 + g.r.IntN(3))
	case 1:
		return fRowLimit(1 + g.r.IntN(4))
	case 2:
		return fColumns{fam, bound(), bound()}
	case 3:
		return fFamily(fam)
	case 4:
		return fValue(g.storedValue(row, fam, col))
	case 5:
		return fChain{fColumns{fam, col, col + "\x00"}, fLatest(1)}
	case 6:
		return fChain{fLatest(1 + g.r.IntN(2)), fRowLimit(1 + g.r.IntN(3))}
	case 7:
		return fInterleave{fColumns{fam, bound(), bound()}, fColumns{g.family(), bound(), bound()}}
	case 8:
		return fChain{fFamily(fam), fRowLimit(1 + g.r.IntN(3))}
	case 9:
		return fChain{fLatest(1), fValue(g.storedValue(row, fam, col))}
	}
	return nil
}

func (g *gen) readSpec(row string) readSpec {
	r := readSpec{row: row}
	if g.r.IntN(3) > 0 {
		r.filter = g.filter(row)
	}
	r.writeTimes = g.v.writeTimes && g.r.IntN(2) == 0
	return r
}

func (g *gen) clock() time.Time {
	now := g.m.now
	tiny := func() time.Time {
		return now.Add(pick(g.r, time.Nanosecond, time.Microsecond, 999*time.Microsecond, time.Millisecond,
			time.Millisecond+time.Nanosecond, 1500*time.Microsecond, 2*time.Millisecond))
	}
	switch g.r.IntN(10) {
	case 0, 1, 2:
		return tiny()
	case 3, 4: // to an expiry boundary
		var next []time.Time
		for _, e := range g.expiries() {
			if e.After(now) && len(next) < 3 {
				next = append(next, e)
			}
		}
		if len(next) == 0 {
			return tiny()
		}
		at := pick(g.r, next...).Add(pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond,
			-g.v.margin, -g.v.margin-time.Nanosecond, -g.v.margin+time.Nanosecond))
		if !at.After(now) {
			return tiny()
		}
		return at
	case 5, 6, 7:
		return now.Add(time.Duration(g.r.Int64N(int64(10 * time.Second))))
	case 8:
		return now.Add(time.Duration(g.r.Int64N(int64(3 * time.Minute))))
	}
	return now.Add(time.Duration(g.r.Int64N(int64(72 * time.Hour))))
}

// aim returns an instant just before or at the moment a cell of row that
// is visible now becomes hidden (its expiry less the read margin), or
// false.
func (g *gen) aim(row string) (time.Time, bool) {
	var at []time.Time
	for f, cols := range g.m.rows[row] {
		r := g.v.families[f]
		if r != ruleOneSecond && r != ruleDefault {
			continue
		}
		for _, cells := range cols {
			for _, cell := range cells {
				hidden := time.UnixMicro(cell.ts).Add(r.offset() - g.v.margin)
				if hidden.After(g.m.now) && hidden.Before(g.m.now.Add(time.Hour)) {
					at = append(at, hidden)
				}
			}
		}
	}
	if len(at) == 0 {
		return time.Time{}, false
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) }) // map order is random
	t := pick(g.r, at...).Add(pick(g.r, -time.Millisecond, -time.Nanosecond, 0, time.Nanosecond))
	return t, t.After(g.m.now)
}

func (g *gen) op() op {
	row := pick(g.r, modelRows...)
	if g.condNext != "" { // a condition on a row whose cell the clock was just moved to
		row, g.condNext = g.condNext, ""
		return op{kind: opApply, row: row, mut: g.cond(row, true)}
	}
	switch x := g.r.IntN(100); {
	case x < 22:
		return op{kind: opClock, at: g.clock()}
	case x < 47:
		return op{kind: opApply, row: row, mut: g.plain()}
	case x < 57:
		if at, ok := g.aim(row); ok && g.r.IntN(4) > 0 {
			g.condNext = row
			return op{kind: opClock, at: at}
		}
		return op{kind: opApply, row: row, mut: g.cond(row, false)}
	case x < 64:
		o := op{kind: opBulk}
		for _, i := range g.r.Perm(len(modelRows))[:1+g.r.IntN(len(modelRows))] {
			o.rows = append(o.rows, modelRows[i])
			switch g.r.IntN(20) {
			case 0:
				o.muts = append(o.muts, &mutSpec{isNil: true})
			case 1:
				o.muts = append(o.muts, g.cond(modelRows[i], false))
			default:
				o.muts = append(o.muts, g.plain())
			}
		}
		return o
	case x < 84:
		if g.r.IntN(10) == 0 {
			row = "zz" // no such row
		}
		return op{kind: opReadRow, read: g.readSpec(row)}
	}
	r := g.readSpec(row)
	switch g.r.IntN(3) {
	case 0:
		r.rows = rowSetSpec{start: ""}
	case 1:
		var list []string
		for _, k := range modelRows {
			if g.r.IntN(2) == 0 {
				list = append(list, k)
			}
		}
		r.rows = rowSetSpec{list: append(list, "zz")}
	case 2:
		r.rows = rowSetSpec{start: pick(g.r, "", "r1"), end: pick(g.r, "r2", "r3", "s")}
	}
	if g.r.IntN(4) == 0 {
		r.limit = 1 + g.r.Int64N(3)
	}
	r.reverse = g.r.IntN(5) == 0
	return op{kind: opReadRows, read: r}
}

// generate makes n operations, applying each to its own model so that the
// next can aim at what is stored.
func generate(v *variant, seed uint64, n int) []op {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5eed)), v: v, m: newModel(v)}
	ops := make([]op, n)
	for i := range ops {
		ops[i] = g.op()
		switch o := ops[i]; o.kind {
		case opClock:
			g.m.now = o.at
		case opApply:
			_, _ = g.m.apply(o.row, o.mut, g.m.now)
		case opBulk:
			for j, row := range o.rows {
				if o.muts[j] != nil && o.muts[j].cond == nil {
					_, _ = g.m.apply(row, o.muts[j], g.m.now)
				}
			}
		}
	}
	return ops
}

// --- Running ----------------------------------------------------------------

// run applies ops to a fresh table on e and to a model, and returns the
// index of the first operation whose outcome differs, with a description,
// or -1. Every rawEvery operations, and at the end, the raw table must
// store exactly the model's cells.
func run(t testing.TB, e *emulator.Emulator, v *variant, name string, ops []op, st *runStats) (int, string) {
	t.Helper()
	const rawEvery = 16
	clock := newClock(base)
	tbl, raw := v.newTable(t, e, name, clock)
	m := newModel(v)
	for i, o := range ops {
		if msg := step(tbl, clock, m, o, st); msg != "" {
			return i, msg
		}
		if i%rawEvery == rawEvery-1 || i == len(ops)-1 {
			if msg := checkRaw(raw, m); msg != "" {
				return i, msg
			}
		}
	}
	return -1, ""
}

// runStats counts what a run exercised, so that a generator that stops
// producing some kind of case is noticed.
type runStats struct {
	written, refused   int
	sentinels          map[string]int
	matched, unmatched int // conditional predicates
	reads, hiding      int // reads; reads of rows with stored cells that are not live
	orderDependent     int // reads whose result depends on the family order
}

func (st *runStats) outcome(err error) {
	if st == nil {
		return
	}
	if err == nil {
		st.written++
		return
	}
	st.refused++
	for _, s := range []error{ttl.ErrExpired, ttl.ErrOutOfRange, ttl.ErrLifetime, ttl.ErrInvalidMutation} {
		if errors.Is(err, s) {
			st.sentinels[strings.TrimPrefix(s.Error(), "ttl: ")]++
		}
	}
}

func (st *runStats) String() string {
	return fmt.Sprintf("%d writes applied, %d refused %v; conditions %d matched, %d not; %d reads, %d of rows holding hidden cells, %d depending on family order",
		st.written, st.refused, st.sentinels, st.matched, st.unmatched, st.reads, st.hiding, st.orderDependent)
}

func step(tbl *ttl.Table, clock *fakeClock, m *model, o op, st *runStats) string {
	ctx := context.Background()
	switch o.kind {
	case opClock:
		clock.Set(o.at)
		m.now = o.at
	case opApply:
		var matched bool
		var opts []bigtable.ApplyOption
		if o.mut.cond != nil {
			opts = append(opts, bigtable.GetCondMutationResult(&matched))
		}
		err := tbl.Apply(ctx, o.row, o.mut.mutation(), opts...)
		wantMatched, want := m.apply(o.row, o.mut, m.now)
		if msg := compareErr(err, want); msg != "" {
			return msg
		}
		if err == nil && o.mut.cond != nil && matched != wantMatched {
			return fmt.Sprintf("predicate matched = %v want %v", matched, wantMatched)
		}
		st.outcome(want)
		if st != nil && want == nil && o.mut.cond != nil {
			if matched {
				st.matched++
			} else {
				st.unmatched++
			}
		}
	case opBulk:
		muts := make([]*ttl.Mutation, len(o.muts))
		for i, s := range o.muts {
			muts[i] = s.mutation()
		}
		errs, err := tbl.ApplyBulk(ctx, o.rows, muts)
		if err != nil {
			return fmt.Sprintf("ApplyBulk failed as a whole: %v", err)
		}
		var want []error
		for i, row := range o.rows {
			var werr error
			if o.muts[i] != nil && o.muts[i].cond != nil {
				werr = ttl.ErrInvalidMutation // no conditional mutations in bulk
			} else {
				_, werr = m.apply(row, o.muts[i], m.now)
			}
			want = append(want, werr)
			st.outcome(werr)
		}
		if !slices.ContainsFunc(want, func(e error) bool { return e != nil }) {
			if errs != nil {
				return fmt.Sprintf("errs = %v want nil", errs)
			}
			break
		}
		if len(errs) != len(want) {
			return fmt.Sprintf("errs = %v want %v", errs, want)
		}
		for i := range want {
			if msg := compareErr(errs[i], want[i]); msg != "" {
				return fmt.Sprintf("row %d (%q): %s", i, o.rows[i], msg)
			}
		}
	case opReadRow, opReadRows:
		got := readResult{cells: map[string][]flatCell{}}
		families := m.v.familyNames()
		var expiries []string // ExpiresAt of each cell returned, where it differs from the rule
		add := func(r bigtable.Row) bool {
			got.keys = append(got.keys, r.Key())
			got.cells[r.Key()] = flatRow(r, families)
			for _, items := range r {
				for _, it := range items {
					e, ok := tbl.ExpiresAt(it)
					we, wok := m.expiry(it)
					if ok != wok || !e.Equal(we) {
						expiries = append(expiries, fmt.Sprintf("ExpiresAt(%s@%d) = %v, %v want %v, %v", it.Column, it.Timestamp, e, ok, we, wok))
					}
				}
			}
			return true
		}
		var err error
		if o.kind == opReadRow {
			var r bigtable.Row
			if r, err = tbl.ReadRow(ctx, o.read.row, o.read.options()...); r != nil {
				add(r)
			}
		} else {
			err = tbl.ReadRows(ctx, o.read.rows.rowSet(), add, o.read.options()...)
		}
		if err != nil {
			return fmt.Sprintf("read failed: %v", err)
		}
		if len(expiries) > 0 {
			return strings.Join(expiries, "\n")
		}
		want := m.read(o.read, o.kind == opReadRow)
		if !want.matches(got) {
			return fmt.Sprintf("read at %v returned\n%s\nwant\n%v", m.now.UTC().Format(time.RFC3339Nano), formatResult(got), want)
		}
		if st != nil {
			st.reads++
			for _, k := range m.rowKeys() {
				if (o.kind == opReadRow && k == o.read.row || o.kind == opReadRows && o.read.rows.contains(k)) &&
					len(m.liveCells(k, m.now.Add(m.v.margin))) < m.stored(k) {
					st.hiding++
					break
				}
			}
			for _, k := range want.keys {
				if len(want.cells[k]) > 1 {
					st.orderDependent++
					break
				}
			}
		}
	}
	return ""
}

func compareErr(got, want error) string {
	switch {
	case want == nil && got != nil:
		return fmt.Sprintf("error %v, want none", got)
	case want != nil && !errors.Is(got, want):
		return fmt.Sprintf("error %v, want %v", got, want)
	}
	return ""
}

// checkRaw compares every cell the table stores with the model's.
func checkRaw(raw *bigtable.Table, m *model) string {
	ctx := context.Background()
	got := readResult{cells: map[string][]flatCell{}}
	err := raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		got.keys = append(got.keys, r.Key())
		got.cells[r.Key()] = flatRow(r, m.v.familyNames())
		return true
	})
	if err != nil {
		return fmt.Sprintf("raw read failed: %v", err)
	}
	want := readResult{keys: m.rowKeys(), cells: map[string][]flatCell{}}
	for _, k := range want.keys {
		want.cells[k] = m.rawCells(k)
	}
	if !got.equal(want) {
		return fmt.Sprintf("stored cells\n%s\nwant\n%s", formatResult(got), formatResult(want))
	}
	return ""
}

func formatResult(r readResult) string {
	if len(r.keys) == 0 {
		return "  (no rows)"
	}
	var b strings.Builder
	for i, k := range r.keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %s: %v", k, r.cells[k])
	}
	return b.String()
}

// shrink returns a shorter list of operations that still fails, removing
// chunks of operations as delta debugging does and replaying each
// candidate on a fresh table, within a budget of replays.
func shrink(ops []op, fails func([]op) (int, bool)) []op {
	budget := 400
	try := func(cand []op) bool {
		if budget == 0 {
			return false
		}
		budget--
		i, failed := fails(cand)
		if failed {
			ops = cand[:i+1]
		}
		return failed
	}
	for n := 2; len(ops) >= 2 && budget > 0; {
		chunk := (len(ops) + n - 1) / n
		removed := false
		for start := 0; start < len(ops); start += chunk {
			if try(slices.Concat(ops[:start:start], ops[min(start+chunk, len(ops)):])) {
				removed = true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if n >= len(ops) {
				break
			}
			n = min(2*n, len(ops))
		}
	}
	return ops
}

func envInt(t testing.TB, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// TestModel runs random operations on each variant of table and checks
// every outcome against the model.
func TestModel(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 250
	}
	n = int(envInt(t, "CELLTTL_MODEL_OPS", int64(n)))
	seed := uint64(envInt(t, "CELLTTL_MODEL_SEED", time.Now().UnixNano()))
	t.Logf("CELLTTL_MODEL_SEED=%d CELLTTL_MODEL_OPS=%d", seed, n)
	for i := range modelVariants {
		v := &modelVariants[i]
		t.Run(v.name, func(t *testing.T) {
			e := emulator.StartForTest(t)
			ops := generate(v, seed+uint64(i), n)
			st := &runStats{sentinels: map[string]int{}}
			idx, msg := run(t, e, v, "t", ops, st)
			if idx < 0 {
				t.Log(st)
				if n >= 300 && (st.written < n/10 || st.refused < n/50 || st.reads < n/10 || st.hiding < n/50 || st.matched == 0 || st.unmatched == 0) {
					t.Errorf("the run exercised too little: %v", st)
				}
				return
			}
			tables := 0
			short := shrink(ops[:idx+1], func(cand []op) (int, bool) {
				tables++
				i, _ := run(t, e, v, fmt.Sprintf("shrink%d", tables), cand, nil)
				return i, i >= 0
			})
			_, shortMsg := run(t, e, v, "minimal", short, nil)
			var b strings.Builder
			for _, o := range short {
				fmt.Fprintf(&b, "\n\t%v", o)
			}
			t.Errorf("CELLTTL_MODEL_SEED=%d: operation %d of %d, %v: %s\n"+
				"shortest failing run found (%d operations, %d replays) on table %q, from clock %v:%s\nwhere: %s",
				seed, idx, len(ops), ops[idx], msg, len(short), tables, v.name, base.Format(time.RFC3339), b.String(), shortMsg)
		})
	}
}

// gcCell is a cell the real-clock GC test wrote, in a column of its own
// (or, for sequence numbers, one column of versions). Its expiry lies in
// [lo, hi]: a For or Default write reads the real clock somewhere between
// the test's readings before and after it.
type gcCell struct {
	row, fam, col string
	lo, hi        time.Time // expiry bounds, for a cell that expires by time
	forever       bool
	version       int64 // for a sequence number, else 0
}

// gcWrite is one cell to write: life is For(after), Default (after is the
// default), Until(until), Forever or Version(version).
type gcWrite struct {
	fam     string
	life    ttl.Lifetime
	after   time.Duration
	until   time.Time
	version int64
}

// TestModelUnderGC runs the emulator's garbage collection, on the
// real clock, with each strategy's own GC policy on its family, over cells
// that live for a few hundred milliseconds: all the while, reads through
// the Table never return a cell at or after its expiry nor miss a live
// one, and GC never removes a live cell; in the end GC has removed every
// cell its policy allows it to, which shows that it ran.
func TestModelUnderGC(t *testing.T) {
	if testing.Short() {
		t.Skip("waits seconds for the emulator's GC on the real clock")
	}
	ctx := context.Background()
	t.Parallel()
	const (
		d          = 800 * time.Millisecond  // DefaultExpiration(d)
		gcInterval = 1500 * time.Millisecond // the longest wait between the emulator's GC passes
		slack      = time.Second             // for a loaded machine
		poll       = 40 * time.Millisecond
	)
	strategies := map[string]ttl.Strategy{"os": ttl.OneSecond(), "de": ttl.DefaultExpiration(d), "sn": ttl.SequenceNumbers(2)}
	fams := map[string]bigtable.GCPolicy{"un": nil}
	for f, s := range strategies {
		fams[f] = s.GCPolicy()
	}
	raw := emulator.StartForTest(t).TableForTest(t, "gc", fams)
	tbl, err := ttl.NewTable(raw, strategies, ttl.OtherFamilies("un"))
	if err != nil {
		t.Fatal(err)
	}

	cells := map[string]*gcCell{} // by value
	write := func(row string, ws ...gcWrite) {
		t.Helper()
		m := ttl.NewMutation()
		var written []*gcCell
		for _, w := range ws {
			v := fmt.Sprintf("%s.%d", w.fam, len(cells))
			c := &gcCell{row: row, fam: w.fam, col: v, version: w.version}
			if w.fam == "sn" {
				c.col = "versions"
			}
			m.Set(c.fam, c.col, []byte(v), w.life)
			cells[v] = c
			written = append(written, c)
		}
		before := time.Now()
		if err := tbl.Apply(ctx, row, m); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		for i, c := range written {
			switch w := ws[i]; {
			case w.life == ttl.Forever || w.fam == "un":
				c.forever = true
			case !w.until.IsZero():
				c.lo, c.hi = w.until, w.until
			case w.fam != "sn":
				c.lo = time.UnixMilli(floorMs(before.Add(w.after)))
				c.hi = time.UnixMilli(floorMs(after.Add(w.after)))
			}
		}
	}
	until := func(fam string, in time.Duration) gcWrite {
		at := time.UnixMilli(floorMs(time.Now().Add(in)))
		return gcWrite{fam: fam, life: ttl.Until(at), until: at}
	}
	wave := func(rows ...string) {
		for _, row := range rows {
			write(row,
				until("os", 150*time.Millisecond), until("os", 400*time.Millisecond), until("os", 700*time.Millisecond),
				until("os", time.Hour), gcWrite{fam: "os", life: ttl.Forever},
				gcWrite{fam: "os", life: ttl.For(250 * time.Millisecond), after: 250 * time.Millisecond},
				gcWrite{fam: "de", life: ttl.Default, after: d},
				gcWrite{fam: "de", life: ttl.For(300 * time.Millisecond), after: 300 * time.Millisecond},
				until("de", 600*time.Millisecond), until("de", time.Hour), gcWrite{fam: "de", life: ttl.Forever},
				gcWrite{fam: "un", life: ttl.Default},
			)
			for range 2 {
				write(row, gcWrite{fam: "sn", life: ttl.Version(int64(len(cells))), version: int64(len(cells))})
			}
		}
	}
	// gcDue is when GC may remove c, and must have by a GC pass later.
	gcDue := func(c *gcCell) (time.Time, bool) {
		switch {
		case c.forever || c.fam == "sn":
			return time.Time{}, false
		case c.fam == "os":
			return c.hi.Add(time.Second), true // MaxAge(1s) on the expiry itself
		}
		return c.hi, true // MaxAge(d) on expiry − d
	}
	// newest reports whether a sequence number is among the newest two
	// versions written to its column.
	newest := func(c *gcCell) bool {
		n := 0
		for _, o := range cells {
			if o.fam == "sn" && o.row == c.row && o.version > c.version {
				n++
			}
		}
		return n < 2
	}

	wave("r0", "r1")
	secondWave := time.Now().Add(500 * time.Millisecond)
	deadline := time.Now().Add(20 * time.Second)
	horizon := time.Now().Add(time.Minute) // the cells due before it are the short-lived ones
	var due time.Time
	for reads := 0; ; reads++ {
		if !secondWave.IsZero() && time.Now().After(secondWave) {
			wave("r1", "r2")
			secondWave = time.Time{}
		}

		// Through the table: nothing expired, nothing live missing.
		before := time.Now()
		seen := map[string]bool{}
		err := tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			for _, items := range r {
				for _, it := range items {
					seen[string(it.Value)] = true
				}
			}
			return true
		})
		after := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		for v, c := range cells {
			switch {
			case c.fam == "sn":
				if seen[v] != newest(c) {
					t.Errorf("read %d: sequence number %s returned = %v, want %v", reads, v, seen[v], newest(c))
				}
			case c.forever:
				if !seen[v] {
					t.Errorf("read %d: %s, which never expires, is missing", reads, v)
				}
			case seen[v] && !c.hi.After(before):
				t.Errorf("read %d between %v and %v returned %s, which expired at %v", reads, before, after, v, c.hi)
			case !seen[v] && c.lo.After(after):
				t.Errorf("read %d between %v and %v missed %s, live until %v", reads, before, after, v, c.lo)
			}
		}
		for v := range seen {
			if cells[v] == nil {
				t.Errorf("read %d returned %q, which was never written", reads, v)
			}
		}

		// Raw: GC removed only expired cells, and by now every cell it
		// was due to remove a GC pass ago.
		before = time.Now()
		stored := map[string]bool{}
		err = raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			for _, items := range r {
				for _, it := range items {
					stored[string(it.Value)] = true
				}
			}
			return true
		})
		after = time.Now()
		if err != nil {
			t.Fatal(err)
		}
		var pending []string
		for v, c := range cells {
			gcAt, collectable := gcDue(c)
			switch {
			case !stored[v] && (c.forever || c.fam == "sn" && newest(c) || c.lo.After(after)):
				t.Errorf("GC removed %s before %v, when it was live", v, after)
			case stored[v] && collectable && gcAt.Add(gcInterval+slack).Before(before):
				t.Errorf("GC has not removed %s, due at %v, by %v", v, gcAt, before)
			case stored[v] && (collectable && gcAt.Before(horizon) || c.fam == "sn" && !newest(c)):
				pending = append(pending, v)
			}
			if collectable && gcAt.Before(horizon) && gcAt.After(due) {
				due = gcAt
			}
		}
		if t.Failed() {
			return
		}
		if secondWave.IsZero() && len(pending) == 0 {
			t.Logf("%d reads; GC removed every expired cell %v after the last was due", reads+1, time.Since(due).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(pending)
			t.Fatalf("GC has not removed %q", pending)
		}
		time.Sleep(poll)
	}
}

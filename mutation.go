package ttl

import (
	"encoding/binary"
	"math"
	"time"

	"cloud.google.com/go/bigtable"
)

// A Mutation is a recipe of changes to one row, like bigtable.Mutation but
// with a [Lifetime] where Bigtable takes a timestamp. It only records: a
// [Table] turns it into timestamps when it applies it, with one reading of
// its clock, and rejects it whole, before sending anything, if any change
// in it is invalid.
//
// Values are not copied: do not modify a value slice until the mutation
// has been applied for the last time. A Mutation may be applied many
// times, each time with that call's now. It is not safe to record changes
// while another goroutine applies it.
type Mutation struct {
	// The changes, in order. A change holds only its column and value;
	// the rest is held by its run, the consecutive changes that share a
	// kind, a family and a lifetime, as a row's changes mostly do: a
	// change costs 40 bytes, and its timestamp is computed once per run.
	// The first five changes and the first two runs are kept here, in 280
	// bytes (the allocator's 288-byte size class), so that a typical row
	// write is one allocation, and none when the recipe is recorded and
	// applied in one function (it stays on the stack): five cells with one
	// lifetime, or two each with its own (a token and its refresh token),
	// or in two families. Anything more goes in x.
	n     int        // changes recorded
	first [5]change  // changes 0 to 4
	runs  [2]run     // the first two runs; runs[1].n is 0 until there are two
	x     *mutationX // nil until needed
}

// mutationX is what a Mutation holds beyond its first five changes and
// its first two runs: the others, or the branches of a conditional
// mutation.
type mutationX struct {
	more []change // changes 5 and after
	runs []run    // the runs after the second: runBuf, until it is full

	// A conditional mutation has branches instead of changes.
	isCond        bool
	cond          bigtable.Filter
	mtrue, mfalse *Mutation

	// The first runs after the second, so that a row whose every cell
	// has its own lifetime costs one allocation more, not one per run.
	runBuf [4]run
}

type mutationKind uint8

const (
	opSet mutationKind = iota
	opReplace
	opDeleteColumn
	opDeleteFamily
	opDeleteRow
	opAdd // a counter's increment: the change's value holds the delta and the window
)

// A change is one recorded change, without what its run holds.
type change struct {
	column string
	value  []byte
}

// A run is what consecutive changes share: a kind, a family and a
// lifetime, the lifetime's fields laid out so that a run takes 32 bytes.
type run struct {
	family string
	lifeN  int64 // the lifetime's n
	nsec   int32 // the lifetime's nsec
	lkind  lifeKind
	kind   mutationKind
	n      uint16 // changes in the run
}

// life returns the run's lifetime.
func (r *run) life() Lifetime { return Lifetime{kind: r.lkind, nsec: r.nsec, n: r.lifeN} }

// is reports whether the run's changes are of kind, in family, with life.
func (r *run) is(kind mutationKind, family string, life Lifetime) bool {
	return r.kind == kind && r.lkind == life.kind && r.lifeN == life.n && r.nsec == life.nsec && r.family == family
}

// start makes r the run of one change of kind, in family, with life.
// (Fields are assigned one by one: assigning a struct with pointers as a
// whole costs a call while the garbage collector runs.)
func (r *run) start(kind mutationKind, family string, life Lifetime) {
	r.family, r.lifeN, r.nsec, r.lkind, r.kind, r.n = family, life.n, life.nsec, life.kind, kind, 1
}

// NewMutation returns a new, empty mutation.
func NewMutation() *Mutation { return new(Mutation) }

// NewCondMutation returns a conditional mutation: if cond matches any cell
// of the row that is live when it is applied, mtrue is applied, otherwise
// mfalse. A nil cond matches any live cell. Either branch may be nil, not
// both; neither may be conditional itself.
//
// Unlike bigtable.NewCondMutation, cond never sees expired cells: it is
// chained after the table's expiry filter, so an expired lock can be taken.
func NewCondMutation(cond bigtable.Filter, mtrue, mfalse *Mutation) *Mutation {
	return &Mutation{x: &mutationX{isCond: true, cond: cond, mtrue: mtrue, mfalse: mfalse}}
}

// Set records writing value to family:column with the given lifetime.
//
// Under OneSecond and DefaultExpiration a cell written with a shorter
// lifetime than an existing one in the same column gets a smaller
// timestamp, so the older value stays the newest version and comes back
// when the new one expires: use [Mutation.Replace] when the newest write
// must win.
func (m *Mutation) Set(family, column string, value []byte, life Lifetime) {
	c := m.record(opSet, family, life)
	c.column, c.value = column, value
}

// Replace records deleting every cell of family:column and then writing
// value with the given lifetime, atomically: the last write wins, whatever
// the lifetimes, and no older value resurfaces when it expires. Under
// SequenceNumbers it deletes the column's earlier versions too: to keep
// them, use Set.
func (m *Mutation) Replace(family, column string, value []byte, life Lifetime) {
	c := m.record(opReplace, family, life)
	c.column, c.value = column, value
}

// Add records adding delta to the counter family:column, in the window of
// w that holds the table clock's now when the mutation is applied (see
// Window): the family must be a Counter family. The window's cell is
// stamped with its expiry, w's end plus w.Keep, so every Add to one window
// merges into one cell, which expires with the window. Add is a blind
// write: it reads nothing, and works where single-row transactions are
// refused.
//
// A column counts in one window: read it with the same w
// (Table.ReadCounter, Table.SumCounter). Count the same events per minute
// and per day in two columns.
func (m *Mutation) Add(family, column string, delta int64, w Window) {
	c := m.record(opAdd, family, Default)
	c.column, c.value = column, encodeAdd(delta, w)
}

// encodeAdd is an Add's change value: the delta, the window's size and its
// keep, as three 8-byte big-endian integers (a change holds only a column
// and a value, so that a recipe stays small).
func encodeAdd(delta int64, w Window) []byte {
	b := make([]byte, 0, 24)
	b = binary.BigEndian.AppendUint64(b, uint64(delta))
	b = binary.BigEndian.AppendUint64(b, uint64(w.Size))
	return binary.BigEndian.AppendUint64(b, uint64(w.Keep))
}

// decodeAdd returns what encodeAdd encoded.
func decodeAdd(v []byte) (delta int64, w Window) {
	return int64(binary.BigEndian.Uint64(v)), Window{time.Duration(binary.BigEndian.Uint64(v[8:])), time.Duration(binary.BigEndian.Uint64(v[16:]))}
}

// DeleteCellsInColumn records deleting every cell of family:column.
func (m *Mutation) DeleteCellsInColumn(family, column string) {
	m.record(opDeleteColumn, family, Default).column = column
}

// DeleteCellsInFamily records deleting every cell of family in the row.
func (m *Mutation) DeleteCellsInFamily(family string) {
	m.record(opDeleteFamily, family, Default)
}

// DeleteRow records deleting the whole row.
func (m *Mutation) DeleteRow() {
	m.record(opDeleteRow, "", Default)
}

// record adds a change of the given kind, family and lifetime, to the last
// run when it shares them, otherwise as a new run, and returns it for the
// caller to fill in.
func (m *Mutation) record(kind mutationKind, family string, life Lifetime) *change {
	var c *change
	if m.n < len(m.first) {
		c = &m.first[m.n]
	} else {
		x := m.extra()
		if x.more == nil {
			x.more = make([]change, 0, len(m.first))
		}
		x.more = append(x.more, change{})
		c = &x.more[len(x.more)-1]
	}
	m.n++
	var last *run
	switch {
	case m.n == 1:
		m.runs[0].start(kind, family, life)
		return c
	case m.x != nil && len(m.x.runs) > 0:
		last = &m.x.runs[len(m.x.runs)-1]
	case m.runs[1].n > 0:
		last = &m.runs[1]
	default:
		last = &m.runs[0]
	}
	if last.n < math.MaxUint16 && last.is(kind, family, life) {
		last.n++
		return c
	}
	if last == &m.runs[0] {
		m.runs[1].start(kind, family, life)
		return c
	}
	x := m.extra()
	if x.runs == nil {
		x.runs = x.runBuf[:0]
	}
	x.runs = append(x.runs, run{})
	x.runs[len(x.runs)-1].start(kind, family, life)
	return c
}

// extra returns m.x, made if need be.
func (m *Mutation) extra() *mutationX {
	if m.x == nil {
		m.x = new(mutationX)
	}
	return m.x
}

// isCond reports whether m is a conditional mutation.
func (m *Mutation) isCond() bool { return m.x != nil && m.x.isCond }

// empty reports whether m records no change (a conditional mutation's
// branches are not its own changes).
func (m *Mutation) empty() bool { return m.n == 0 }

// changes returns the changes of m in two parts, in order: those kept in
// m itself, then the others.
func (m *Mutation) changes() (first, more []change) {
	if m.x != nil {
		more = m.x.more
	}
	return m.first[:min(m.n, len(m.first))], more
}

// nruns returns the number of runs in m.
func (m *Mutation) nruns() int {
	switch {
	case m.n == 0:
		return 0
	case m.runs[1].n == 0:
		return 1
	case m.x != nil:
		return 2 + len(m.x.runs)
	}
	return 2
}

// runAt returns run i of m.
func (m *Mutation) runAt(i int) *run {
	if i < len(m.runs) {
		return &m.runs[i]
	}
	return &m.x.runs[i-len(m.runs)]
}

// A ReadModifyWrite is a recipe of changes that the server applies to the
// newest cell of a column, like bigtable.ReadModifyWrite; recording the
// families lets a [Table] refuse it where the server's timestamp would
// break the family's strategy.
type ReadModifyWrite struct {
	ops []rmwOp
}

type rmwOp struct {
	family, column string
	append         []byte // when isAppend
	delta          int64
	isAppend       bool
}

// NewReadModifyWrite returns a new, empty ReadModifyWrite.
func NewReadModifyWrite() *ReadModifyWrite { return new(ReadModifyWrite) }

// AppendValue records appending v to the value of family:column, or
// writing v if the column has no live cell.
func (m *ReadModifyWrite) AppendValue(family, column string, v []byte) {
	m.ops = append(m.ops, rmwOp{family: family, column: column, append: v, isAppend: true})
}

// Increment records adding delta to the value of family:column, a 64-bit
// big-endian signed integer, or writing delta if the column has no live
// cell.
func (m *ReadModifyWrite) Increment(family, column string, delta int64) {
	m.ops = append(m.ops, rmwOp{family: family, column: column, delta: delta})
}

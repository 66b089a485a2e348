package ttl

import "cloud.google.com/go/bigtable"

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
	ops []mutationOp

	// A conditional mutation has branches instead of ops.
	isCond        bool
	cond          bigtable.Filter
	mtrue, mfalse *Mutation
}

type mutationKind uint8

const (
	opSet mutationKind = iota
	opReplace
	opDeleteColumn
	opDeleteFamily
	opDeleteRow
)

type mutationOp struct {
	kind           mutationKind
	family, column string
	value          []byte
	life           Lifetime
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
	return &Mutation{isCond: true, cond: cond, mtrue: mtrue, mfalse: mfalse}
}

// Set records writing value to family:column with the given lifetime.
//
// Under OneSecond and DefaultExpiration a cell written with a shorter
// lifetime than an existing one in the same column gets a smaller
// timestamp, so the older value stays the newest version and comes back
// when the new one expires: use [Mutation.Replace] when the newest write
// must win.
func (m *Mutation) Set(family, column string, value []byte, life Lifetime) {
	m.record(mutationOp{kind: opSet, family: family, column: column, value: value, life: life})
}

// Replace records deleting every cell of family:column and then writing
// value with the given lifetime, atomically: the last write wins, whatever
// the lifetimes, and no older value resurfaces when it expires. Under
// SequenceNumbers it deletes the column's earlier versions too: to keep
// them, use Set.
func (m *Mutation) Replace(family, column string, value []byte, life Lifetime) {
	m.record(mutationOp{kind: opReplace, family: family, column: column, value: value, life: life})
}

// DeleteCellsInColumn records deleting every cell of family:column.
func (m *Mutation) DeleteCellsInColumn(family, column string) {
	m.record(mutationOp{kind: opDeleteColumn, family: family, column: column})
}

// DeleteCellsInFamily records deleting every cell of family in the row.
func (m *Mutation) DeleteCellsInFamily(family string) {
	m.record(mutationOp{kind: opDeleteFamily, family: family})
}

// DeleteRow records deleting the whole row.
func (m *Mutation) DeleteRow() {
	m.record(mutationOp{kind: opDeleteRow})
}

// record adds a change. The first makes room for four, so that a small
// mutation takes one allocation for its changes, not one per doubling.
func (m *Mutation) record(op mutationOp) {
	if m.ops == nil {
		m.ops = make([]mutationOp, 0, 4)
	}
	m.ops = append(m.ops, op)
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

package ttl

import "cloud.google.com/go/bigtable"

// A built is a bigtable.Mutation being built from a recipe, and the number
// of changes in it, counted as they are added: the bigtable client counts
// them against its limit per MutateRows request, and ApplyBulk groups rows
// the same way. Every change a Table sends goes through these methods, so
// the count cannot drift from what is built.
type built struct {
	m *bigtable.Mutation
	n int
}

func newBuilt() built { return built{m: bigtable.NewMutation()} }

func (b *built) set(family, column string, ts bigtable.Timestamp, value []byte) {
	b.m.Set(family, column, ts, value)
	b.n++
}

// addInt adds v to the aggregate cell of family:column stamped ts.
func (b *built) addInt(family, column string, ts bigtable.Timestamp, v int64) {
	b.m.AddIntToCell(family, column, ts, v)
	b.n++
}

func (b *built) deleteColumn(family, column string) {
	b.m.DeleteCellsInColumn(family, column)
	b.n++
}

// deleteRange deletes the cells of family:column stamped [start, end).
func (b *built) deleteRange(family, column string, start, end bigtable.Timestamp) {
	b.m.DeleteTimestampRange(family, column, start, end)
	b.n++
}

func (b *built) deleteFamily(family string) {
	b.m.DeleteCellsInFamily(family)
	b.n++
}

func (b *built) deleteRow() {
	b.m.DeleteRow()
	b.n++
}

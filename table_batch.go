package ttl

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"
)

// ApplyBatch reads the clock once, then calls fill, which writes rows into
// the batch it is given; each row is applied atomically, as ApplyBulk
// applies its mutations, with the timestamps its lifetimes give at that
// one reading. It is ApplyBulk without recipes, as ApplyRow is Apply
// without one: a change is built into its row's bigtable.Mutation as fill
// writes it, so a batch holds no copy of the changes and costs what
// building the rows by hand costs (docs/benchmarks.md). Prefer it where
// rows are written in a loop; ApplyBulk takes Mutations made elsewhere.
//
// A row with any invalid change is not sent and its error is reported at
// its index, the order of its Batch.Row call; the others are applied.
// Rows are sent, while fill runs, in the groups the bigtable client would
// send as one request each (at most 100,000 changes), so that the built
// rows of only one group are in memory at a time; if fill panics, the
// groups already sent stay written. A fill that runs long writes
// lifetimes counted from the call's start, as ApplyRow's does.
//
// errs and err are as ApplyBulk's: errs is nil when every row was written,
// otherwise one entry per row, nil for each row written; a non-nil err
// means every request failed, or that fill wrote a change before any Row
// (ErrInvalidMutation), and then nothing was sent.
func (t *Table) ApplyBatch(ctx context.Context, fill func(*Batch), opts ...bigtable.ApplyOption) (errs []error, err error) {
	if err := t.check(ctx, "ApplyBatch"); err != nil {
		return nil, err
	}
	if fill == nil {
		return nil, fmt.Errorf("%w: ApplyBatch: nil fill function", ErrNilArgument)
	}
	b := &Batch{ctx: ctx, bulk: bulkWriter{tbl: t.tbl, opts: opts}}
	b.st.w = t.writer(t.now())
	fill(b)
	b.end()
	if b.misuse != nil {
		return nil, b.misuse
	}
	return b.bulk.result()
}

// A Batch is the rows of one ApplyBatch call: Row starts a row, and the
// methods after it write that row's changes, building each into the
// row's bigtable.Mutation as it is written, as a RowWriter does. The first
// invalid change of a row is its error; the row's later changes are
// ignored.
//
// A Batch is valid only inside its call's fill function, on that
// goroutine; after fill returns, its methods do nothing. Values are not
// copied: do not modify a value slice until the call has returned.
type Batch struct {
	st     rowState
	ctx    context.Context
	bulk   bulkWriter
	keys   []string // the rows' keys, in order
	slabs  int      // slabs of mutations allocated, to size the next
	done   bool     // fill has returned, or the batch was misused
	misuse error    // a change before any Row: nothing is sent
}

// ready reports whether the batch takes a change now: not once it has
// ended, nor before its first Row, which misuses it: then nothing is
// sent.
func (b *Batch) ready() bool {
	switch {
	case b.done:
		return false
	case !b.st.open:
		b.misuse = fmt.Errorf("%w: ApplyBatch: a change written before any Batch.Row; nothing was sent", ErrInvalidMutation)
		b.done = true
		return false
	}
	return true
}

// Set writes value to family:column of the current row with the given
// lifetime, as Mutation.Set records it.
func (b *Batch) Set(family, column string, value []byte, life Lifetime) {
	if b.ready() {
		b.st.set(family, column, value, life)
	}
}

// Replace deletes every cell of family:column of the current row and then
// writes value with the given lifetime, as Mutation.Replace records it.
func (b *Batch) Replace(family, column string, value []byte, life Lifetime) {
	if b.ready() {
		b.st.add(opReplace, family, column, value, life)
	}
}

// Add adds delta to the counter family:column of the current row, in the
// window of w that holds the call's now, as Mutation.Add records it.
func (b *Batch) Add(family, column string, delta int64, w Window) {
	if b.ready() {
		b.st.addCounter(family, column, delta, w)
	}
}

// DeleteCellsInColumn deletes every cell of family:column of the current
// row.
func (b *Batch) DeleteCellsInColumn(family, column string) {
	if b.ready() {
		b.st.add(opDeleteColumn, family, column, nil, Default)
	}
}

// DeleteCellsInFamily deletes every cell of family in the current row.
func (b *Batch) DeleteCellsInFamily(family string) {
	if b.ready() {
		b.st.add(opDeleteFamily, family, "", nil, Default)
	}
}

// DeleteRow deletes the current row.
func (b *Batch) DeleteRow() {
	if b.ready() {
		b.st.add(opDeleteRow, "", "", nil, Default)
	}
}

// Grow makes room for n more rows, so that writing them allocates nothing
// for the batch's own bookkeeping (as strings.Builder.Grow does). It is
// only a hint; n ≤ 0 does nothing.
func (b *Batch) Grow(n int) {
	if b.done || n <= 0 {
		return
	}
	b.keys = growCap(b.keys, n)
	b.bulk.group.muts = growCap(b.bulk.group.muts, min(n, maxBulkChanges))
}

// growCap returns s with room for n more elements.
func growCap[E any](s []E, n int) []E {
	if cap(s)-len(s) >= n {
		return s
	}
	t := make([]E, len(s), len(s)+n)
	copy(t, s)
	return t
}

// Row ends the row being written, if any, and starts the row with the
// given key.
func (b *Batch) Row(key string) {
	if b.done {
		return
	}
	b.endRow()
	if len(b.st.w.slab) == 0 {
		// Slabs grow with the batch: a small batch allocates little, a
		// large one a slab per bulkSlab rows.
		b.st.w.slab = make([]bigtable.Mutation, min(8<<min(b.slabs, 8), bulkSlab))
		b.slabs++
	}
	b.keys = append(b.keys, key)
	b.st.cur, b.st.err, b.st.open = b.st.w.newBuilt(), nil, true
}

// endRow ends the row being written: it adds the row to the group,
// sending the group first if the row would overfill it, or records the
// row's error.
func (b *Batch) endRow() {
	st := &b.st
	if !st.open {
		return
	}
	st.open = false
	i := len(b.keys) - 1
	b.bulk.rows = b.keys
	err := st.err
	if err == nil && st.cur.n == 0 {
		err = fmt.Errorf("%w: ApplyBatch: row %q has no changes", ErrInvalidMutation, b.keys[i])
	}
	if err != nil {
		st.w.drop(st.cur, nil)
		b.bulk.fail(i, err)
		return
	}
	cur := st.w.keep(st.cur)
	if b.bulk.group.changes+cur.n > maxBulkChanges {
		b.bulk.send(b.ctx)
	}
	b.bulk.group.add(i, b.keys, cur)
	st.cur = built{}
}

// end ends the batch when fill has returned: its last row is ended and
// the group sent, unless the batch was misused.
func (b *Batch) end() {
	if b.misuse == nil {
		b.endRow()
		b.bulk.rows = b.keys
		b.bulk.send(b.ctx)
	}
	b.done = true
}

package ttl

import (
	"context"
	"fmt"
	"sync"

	"cloud.google.com/go/bigtable"
)

// ApplyRow reads the clock once, then calls fill, which writes the
// changes of row through the RowWriter it is given; they are applied
// atomically, as Apply applies a Mutation, with the timestamps their
// lifetimes give at that one reading. It is Apply without a recipe: a
// change is built into the row's bigtable.Mutation as fill writes it,
// checked and stamped exactly as Apply would build it from a Mutation,
// so a write costs what building it by hand costs (docs/benchmarks.md).
// Prefer it where a row's cells have lifetimes of their own or are many;
// Apply takes a Mutation made elsewhere, and only Apply takes a
// conditional one.
//
// The first invalid change is the call's error, and nothing is sent. A
// fill that runs long writes lifetimes counted from the call's start:
// a For cell then lives that much less than its duration, never more.
func (t *Table) ApplyRow(ctx context.Context, row string, fill func(RowWriter), opts ...bigtable.ApplyOption) error {
	if err := t.check(ctx, "ApplyRow"); err != nil {
		return err
	}
	if fill == nil {
		return fmt.Errorf("%w: ApplyRow: nil fill function", ErrNilArgument)
	}
	st := rowStates.Get().(*rowState)
	c := &st.w
	c.start(t, "ApplyRow")
	c.begin(row)
	st.begin()
	fill(RowWriter{st, st.gen})
	b, err := st.end("ApplyRow", row)
	if err == nil {
		err = c.apply(ctx, row, b, opts)
	}
	c.done()
	st.release()
	rowStates.Put(st)
	return err
}

// release lets the call's last row go before st waits in rowStates. It
// keeps the table and the strategy its writer last looked up, so that the
// next call on the table needs no lookup.
func (st *rowState) release() { st.cur = built{} }

// rowStates holds the states of ApplyRow and ApplyBatch calls between
// calls, so that a call allocates only its rows' bigtable.Mutations, as
// the raw client's write does. A state's generation tells a RowWriter of
// an ended call from one of the call using it now.
var rowStates = sync.Pool{New: func() any { return new(rowState) }}

// A RowWriter writes the changes of one row, the row of an ApplyRow call
// or a row of an ApplyBatch call, building each into the row's
// bigtable.Mutation as it is written, at the call's reading of the clock.
// Its methods write what the Mutation methods of the same names record,
// checked and stamped as Apply would build them. The first invalid change
// is the row's error; the changes after it are ignored.
//
// A RowWriter is valid only inside the fill function it was given to, on
// that goroutine; after fill returns, its methods do nothing. Values are
// not copied: do not modify a value slice until the call has returned.
type RowWriter struct {
	st  *rowState
	gen uint64 // st's generation when its row began
}

// state returns the state the writer writes to, or nil once its row has
// ended (or for the zero RowWriter).
func (r RowWriter) state() *rowState {
	if r.st == nil || r.st.gen != r.gen {
		return nil
	}
	return r.st
}

// Set writes value to family:column with the given lifetime, as
// Mutation.Set records it.
func (r RowWriter) Set(family, column string, value []byte, life Lifetime) {
	r.state().set(family, column, value, life)
}

// Replace deletes every cell of family:column and then writes value with
// the given lifetime, as Mutation.Replace records it.
func (r RowWriter) Replace(family, column string, value []byte, life Lifetime) {
	r.state().add(opReplace, family, column, value, life)
}

// Add adds delta to the counter family:column, in the window of w that
// holds the call's now, as Mutation.Add records it.
func (r RowWriter) Add(family, column string, delta int64, w Window) {
	r.state().addCounter(family, column, delta, w)
}

// DeleteCellsInColumn deletes every cell of family:column.
func (r RowWriter) DeleteCellsInColumn(family, column string) {
	r.state().add(opDeleteColumn, family, column, nil, Default)
}

// DeleteCellsInFamily deletes every cell of family in the row.
func (r RowWriter) DeleteCellsInFamily(family string) {
	r.state().add(opDeleteFamily, family, "", nil, Default)
}

// DeleteRow deletes the whole row.
func (r RowWriter) DeleteRow() {
	r.state().add(opDeleteRow, "", "", nil, Default)
}

// A rowState is a row being written without a recipe: the row of an
// ApplyRow call, or each row of an ApplyBatch call in turn.
type rowState struct {
	w    writeCall // the call: its now (and, for many rows, the slab of their mutations)
	cur  built     // the row being written
	err  error     // its first invalid change
	open bool      // whether a row is being written
	gen  uint64    // the rows it has served: a RowWriter of an earlier one does nothing
}

// begin starts a row, built into the writer's next mutation. The row
// before left no error (end clears it).
func (st *rowState) begin() { st.cur, st.open = st.w.newBuilt(), true }

// end ends the row and returns it, or its error: its first invalid
// change, or none at all (call names the call in the message). Writers of
// the row now do nothing. st keeps no error, and keeps the row's mutation
// only until the next row begins or the call releases st: a row of a
// batch stores no pointer it need not.
func (st *rowState) end(call, row string) (built, error) {
	b, err := st.cur, st.err
	st.gen++
	st.open = false
	if err != nil {
		st.err = nil
	}
	if err == nil && b.n == 0 {
		err = fmt.Errorf("%w: %s: row %q has no changes", ErrInvalidMutation, call, row)
	}
	return b, err
}

// writable reports whether a change written now would be built: not on
// a nil state (a RowWriter of an ended call), nor when no row is being
// written, nor once the row has an error.
func (st *rowState) writable() bool { return st != nil && st.open && st.err == nil }

// add builds one change into the row, as a recipe's run of that one
// change would be built, so that it is checked, stamped and refused
// exactly as a Mutation's would be.
func (st *rowState) add(kind mutationKind, family, column string, value []byte, life Lifetime) {
	if !st.writable() {
		return
	}
	var r run
	r.start(kind, family, life)
	c := [1]change{{column: column, value: value}}
	if err := st.w.addRun(&st.cur, &r, c[:]); err != nil {
		st.err = err
	}
}

// set builds a Set into the row. A Set in a managed family of cells
// without write-time companions is stamped and set here, as addRun's
// common run sets each of its cells (written out again rather than
// shared: a shared call, which does not inline, cost 4–5% of a one-cell
// write); any other takes add's way through addRun, which gives the
// same errors.
func (st *rowState) set(family, column string, value []byte, life Lifetime) {
	if !st.writable() {
		return
	}
	w := &st.w
	s, managed := w.lookup(family)
	if !managed || w.f.counter || bool(w.t.companions) {
		st.add(opSet, family, column, value, life)
		return
	}
	ts, old, supersede, err := w.stamp(s, family, column, life)
	if err != nil {
		st.err = err
		return
	}
	if w.f.scheduled {
		w.schedule(ts)
	}
	if supersede {
		st.cur.deleteRange(family, column, old.Lo, old.Hi) // Hi 0: no end
	}
	st.cur.set(family, column, ts, value)
}

// addCounter builds an Add into the row.
func (st *rowState) addCounter(family, column string, delta int64, w Window) {
	if st.writable() {
		st.add(opAdd, family, column, encodeAdd(delta, w), Default)
	}
}

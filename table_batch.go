package ttl

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"
)

// ApplyBatch reads the clock once, then calls fill(i, w) for each row i of
// rows, in order, and applies each row fill writes through w atomically,
// as ApplyBulk applies muts[i] to rows[i], with the timestamps its
// lifetimes give at that one reading. It is ApplyBulk without recipes, as
// ApplyRow is Apply without one: a change is built into its row's
// bigtable.Mutation as fill writes it, checked and stamped exactly as
// ApplyBulk would build it from a Mutation, so a batch holds no copy of
// the changes and costs what building the rows by hand costs
// (docs/benchmarks.md). Prefer it where rows are written in a loop;
// ApplyBulk takes Mutations made elsewhere.
//
// w is valid only until fill returns. A row with an invalid change, or
// none, is not sent and its error is reported at its index; the others
// are applied. Rows are sent while fill runs, in the groups the bigtable
// client would send as one request each (at most 100,000 changes), so
// that the built rows of only one group are in memory at a time; if fill
// panics, the groups already sent stay written. On a table with a
// schedule (WithSchedule), every row is filled before any is sent, after
// their entries (as ApplyBulk says), and a fill that panics sends nothing.
// A fill that runs long writes lifetimes counted from the call's start, as
// ApplyRow's does.
//
// errs and err are as ApplyBulk's: errs is nil when every row was written,
// otherwise one entry per row, nil for each row written; a non-nil err
// means every request failed.
func (t *Table) ApplyBatch(ctx context.Context, rows []string, fill func(i int, w RowWriter), opts ...bigtable.ApplyOption) (errs []error, err error) {
	if err := t.check(ctx, "ApplyBatch"); err != nil {
		return nil, err
	}
	if fill == nil {
		return nil, fmt.Errorf("%w: ApplyBatch: nil fill function", ErrNilArgument)
	}
	st := rowStates.Get().(*rowState)
	st.w.start(t, "ApplyBatch")
	errs, err = st.w.applyRows(ctx, rows, opts, func(i int) (built, error) {
		st.begin()
		fill(i, RowWriter{st, st.gen})
		return st.end("ApplyBatch", rows[i])
	})
	st.w.done()
	st.w.slab = nil // the rows' mutations are the caller's now
	rowStates.Put(st)
	return errs, err
}

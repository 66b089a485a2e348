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
// errs is nil when every row was written, otherwise one entry per row;
// a non-nil err means every request failed. w is valid only until fill
// returns.
//
// Costs and rationale: docs/api-notes.md#ttltableapplybatch.
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

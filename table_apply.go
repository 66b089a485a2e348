package ttl

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"
)

// The write methods that take their rows whole (Apply, ApplyBulk) or fill
// many (ApplyBatch): each only its own loop over the write pipeline
// (writeCall).

// Apply applies m to the row atomically, with the timestamps its lifetimes
// give at the clock's now. If any change in m is invalid, Apply sends
// nothing and returns an error naming it. opts are passed to Bigtable
// (bigtable.GetCondMutationResult works as usual).
func (t *Table) Apply(ctx context.Context, row string, m *Mutation, opts ...bigtable.ApplyOption) error {
	if err := t.check(ctx, "Apply"); err != nil {
		return err
	}
	var c writeCall
	c.start(t, "Apply")
	defer c.done()
	c.begin(row)
	b, err := c.build(m, topLevel)
	if err != nil {
		return err
	}
	return c.apply(ctx, row, b, opts)
}

// ApplyBulk applies muts[i] to rows[i], each atomically, all with the
// timestamps their lifetimes give at one reading of the clock. An invalid
// mutation is not sent and its error is reported at its index; the others
// are applied. Conditional mutations cannot be applied in bulk.
//
// Rows are built and sent in the groups the bigtable client would send as
// one request each (at most 100,000 changes), so that the built mutations
// of only one group are in memory at a time. On a table with a schedule
// (WithSchedule), every row is built first, their entries written in one
// request, and only then the groups sent; if the entries fail, no row is
// sent, and err and every row's entry in errs wrap ErrSchedule.
//
// Costs and rationale: docs/api-notes.md#ttltableapplybulk.
func (t *Table) ApplyBulk(ctx context.Context, rows []string, muts []*Mutation, opts ...bigtable.ApplyOption) (errs []error, err error) {
	if err := t.check(ctx, "ApplyBulk"); err != nil {
		return nil, err
	}
	if len(rows) != len(muts) {
		return nil, fmt.Errorf("%w: ApplyBulk: %d rows but %d mutations", ErrInvalidMutation, len(rows), len(muts))
	}
	var c writeCall
	c.start(t, "ApplyBulk")
	defer c.done()
	return c.applyRows(ctx, rows, opts, func(i int) (built, error) {
		if m := muts[i]; m != nil && m.isCond() {
			return built{}, fmt.Errorf("%w: conditional mutations cannot be applied in bulk (row %q)", ErrInvalidMutation, rows[i])
		}
		return c.build(muts[i], topLevel)
	})
}

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
	st.release()
	rowStates.Put(st)
	return errs, err
}

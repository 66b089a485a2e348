package ttl

import (
	"context"

	"cloud.google.com/go/bigtable"
)

// The write pipeline: every write call (Apply, ApplyRow, ApplyBatch,
// ApplyBulk, and with them Mutation.Add and RowWriter.Add) goes through a
// writeCall, which takes the steps all of them share, in one place. Each
// method keeps only its own loop: how a row is built (from a Mutation,
// or by a fill function) and whether there are many.

// A writeCall is one write call on its way to Bigtable. It reads the
// clock once (start), builds each row at that reading with its
// cellWriter, which adds the row's schedule entries as it stamps the
// cells, drops the entries of a row refused (refuse), writes the entries
// before any data (DESIGN.md, "Schedules"), sends the rows (apply,
// applyRows), and turns the server's routing refusal of a conditional
// mutation into ErrTransactionNotAllowed. It lives on its caller's stack,
// or in a rowState, so that a call allocates nothing for it.
type writeCall struct {
	cellWriter
	name string // the call, as its errors name it
	mark int    // the entries before those of the row being built
}

// start makes c a call named name of t: one reading of the clock, and,
// on a table with a schedule, a batch for the entries.
func (c *writeCall) start(t *Table, name string) {
	c.cellWriter.start(t, t.now())
	c.name = name
	if t.schedule != nil {
		c.sched = newBatch()
	}
}

// done ends the call: its entries' batch goes back to the pool.
func (c *writeCall) done() {
	if c.sched != nil {
		freeBatch(c.sched)
		c.sched, c.row = nil, ""
	}
}

// begin starts building row: the entries added from now on are its.
func (c *writeCall) begin(row string) {
	if c.sched != nil {
		c.row, c.mark = row, c.sched.Len()
	}
}

// refuse drops the row being built, built so far as b, which is not
// written: its entries and, if it is the slab's, its mutation.
func (c *writeCall) refuse(b built) {
	if c.sched != nil {
		c.sched.Trim(c.mark)
	}
	c.drop(b, nil)
}

// entries writes the call's entries, if the table has a schedule; every
// write sends them before its data.
func (c *writeCall) entries(ctx context.Context) error {
	if c.sched == nil {
		return nil
	}
	return c.t.writeEntries(ctx, c.sched, c.name)
}

// The operation a refused conditional mutation names (ErrTransactionNotAllowed).
const condApply = "Apply of a conditional mutation (a CheckAndMutateRow)"

// apply sends row, built as b, the one row of the call, after its
// entries. A single-row transaction the server refuses for routing (only
// a conditional mutation is one) is reported as ErrTransactionNotAllowed.
func (c *writeCall) apply(ctx context.Context, row string, b built, opts []bigtable.ApplyOption) error {
	if err := c.entries(ctx); err != nil {
		return err
	}
	return c.t.transaction(c.t.tbl.Apply(ctx, row, b.m, opts...), condApply)
}

// applyRows builds each of rows with build, given its index, in order,
// and sends them as ApplyBulk says: in groups as they are built, or,
// with a schedule, all of them after their entries. A row build refuses
// is not sent and has its error at its index. It returns ApplyBulk's
// results.
func (c *writeCall) applyRows(ctx context.Context, rows []string, opts []bigtable.ApplyOption, build func(i int) (built, error)) ([]error, error) {
	w := bulkWriter{tbl: c.t.tbl, opts: opts, rows: rows}
	if c.sched != nil {
		w.hold(len(rows))
	}
	for i := range rows {
		c.refill(len(rows) - i)
		c.begin(rows[i])
		b, err := build(i)
		if err != nil {
			c.refuse(b)
			w.fail(i, err)
			continue
		}
		w.add(ctx, i, c.keep(b))
	}
	if c.sched != nil {
		w.release(ctx, c.entries)
	}
	w.send(ctx)
	return w.result()
}

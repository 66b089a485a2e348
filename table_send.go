package ttl

import (
	"context"

	"cloud.google.com/go/bigtable"
)

// maxBulkChanges is the most changes the bigtable client sends in one
// MutateRows request (its maxMutations); it groups rows greedily, never
// splitting one, and ApplyBulk groups them the same way.
const maxBulkChanges = 100_000

// A bulkWriter sends the rows of one ApplyBulk call group by group and
// collects their errors.
type bulkWriter struct {
	tbl  bigtable.TableAPI
	opts []bigtable.ApplyOption
	rows []string // the call's

	group bulkGroup // the rows to send next

	errs     []error // nil until a row fails; then one entry per row
	groups   int     // requests sent
	failed   int     // requests that failed as a whole
	firstErr error   // the first such request's error

	// With a schedule, the rows are built, and held, until the entries
	// of all of them are written (see release).
	holding bool
	held    []heldRow
}

// A heldRow is a row built and not yet sent: row i of the call.
type heldRow struct {
	i int
	b built
}

// hold makes add hold the rows, of a call of n, instead of sending them.
func (w *bulkWriter) hold(n int) {
	w.holding, w.held = true, make([]heldRow, 0, n)
}

// release writes the call's entries, whose rows are held, with entries,
// then sends the rows; if the entries fail, no row is sent and each has
// the error, which is the call's (as a request that failed as a whole).
func (w *bulkWriter) release(ctx context.Context, entries func(context.Context) error) {
	held := w.held
	w.holding, w.held = false, nil
	if len(held) == 0 {
		return
	}
	if err := entries(ctx); err != nil {
		for _, h := range held {
			w.fail(h.i, err)
		}
		w.groups++
		w.failed++
		w.firstErr = err
		return
	}
	for _, h := range held {
		w.add(ctx, h.i, h.b)
	}
}

// fail records the error of row i.
func (w *bulkWriter) fail(i int, err error) {
	if w.errs == nil {
		w.errs = make([]error, len(w.rows))
	}
	w.errs[i] = err
}

// add adds row i, built as b, to the group, sending the group first if b
// would overfill it.
func (w *bulkWriter) add(ctx context.Context, i int, b built) {
	if w.holding {
		w.held = append(w.held, heldRow{i, b})
		return
	}
	if w.group.changes+b.n > maxBulkChanges {
		w.send(ctx)
	}
	w.group.add(i, w.rows, b)
}

// send sends the group, if it has rows, records its errors at its rows'
// indexes, and empties it.
func (w *bulkWriter) send(ctx context.Context) {
	g := &w.group
	if len(g.muts) == 0 {
		return
	}
	w.groups++
	rowErrs, err := w.tbl.ApplyBulk(ctx, g.keys(w.rows), g.muts, w.opts...)
	for j := range g.muts {
		i := g.at(j)
		switch {
		case err != nil:
			w.fail(i, err)
		case j < len(rowErrs) && rowErrs[j] != nil:
			w.fail(i, rowErrs[j])
		}
	}
	if err != nil {
		w.failed++
		if w.firstErr == nil {
			w.firstErr = err
		}
	}
	g.reset()
}

// result is ApplyBulk's: the per-row errors, and an error of the call when
// every request failed.
func (w *bulkWriter) result() ([]error, error) {
	if w.groups > 0 && w.failed == w.groups {
		return w.errs, w.firstErr
	}
	return w.errs, nil
}

// bulkGroup is the rows ApplyBulk sends in one request. Until a row of
// the call is left out (its mutation is invalid), they are a run of the
// call's rows, sent as they are; after, a copy with their indexes.
type bulkGroup struct {
	lo      int                  // index in the call of the group's first row
	muts    []*bigtable.Mutation // built, one per row
	copied  bool                 // whether rows and index hold the group's rows
	rows    []string
	index   []int // of each row in ApplyBulk's arguments
	changes int
}

// add adds row i of the call's rows, built as b.
func (g *bulkGroup) add(i int, rows []string, b built) {
	n := len(g.muts)
	switch {
	case g.muts == nil:
		g.muts = make([]*bigtable.Mutation, 0, min(len(rows)-i, maxBulkChanges))
		g.lo = i
	case n == 0:
		g.lo = i
	case !g.copied && i != g.lo+n:
		// A row was left out: from now on, the group is a list.
		g.rows = append(g.rows[:0], rows[g.lo:g.lo+n]...)
		g.index = g.index[:0]
		for j := range n {
			g.index = append(g.index, g.lo+j)
		}
		g.copied = true
	}
	if g.copied {
		g.rows = append(g.rows, rows[i])
		g.index = append(g.index, i)
	}
	g.muts = append(g.muts, b.m)
	g.changes += b.n
}

// keys returns the group's row keys.
func (g *bulkGroup) keys(rows []string) []string {
	if g.copied {
		return g.rows
	}
	return rows[g.lo : g.lo+len(g.muts) : g.lo+len(g.muts)]
}

// at returns the index in the call of the group's row j.
func (g *bulkGroup) at(j int) int {
	if g.copied {
		return g.index[j]
	}
	return g.lo + j
}

// reset empties the group, letting its mutations go.
func (g *bulkGroup) reset() {
	clear(g.muts)
	g.muts, g.rows, g.index, g.copied, g.changes = g.muts[:0], g.rows[:0], g.index[:0], false, 0
}

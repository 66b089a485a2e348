package move

import (
	"context"
	"fmt"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
)

// Start prepares the family for the move, before its Start, once every
// process is configured with it: in a move from DefaultExpiration it
// rewrites the old cells stamped at or above the boundary in the new
// encoding (each only if still there unchanged, recorded in
// Options.Checkpoint first so that no cell is rewritten twice), then it
// sets the family's GC policy to the move's. It refuses while misplaced
// cells remain. With Options.Schedule, a move whose Old gives the old
// cells another expiry than their old rule (a shorter one, or one where
// they had none) first writes each old cell's entry at that expiry.
//
// A dry run (Options.DryRun) refuses what the step would refuse: misplaced
// cells without a checkpoint, or a checkpoint of other work.
func (f *Family) Start(ctx context.Context) (*Report, error) {
	if err := f.ownCheckpoint(ctx, "Start", f.startWork()); err != nil {
		return nil, err
	}
	r, err := f.counted(ctx, "Start")
	if err != nil {
		return r, err
	}
	opts := f.opts
	if err := f.reschedule(ctx, r); err != nil {
		return r, err
	}
	if r.Misplaced.Cells > 0 {
		if opts.Checkpoint == nil {
			return r, fmt.Errorf("move.Family.Start: %w", &policy.OptionError{Err: fmt.Errorf("%w: %s stamped above the boundary must be rewritten, and that needs a checkpoint: a rewritten cell cannot be told from one still to rewrite",
				ttl.ErrInvalidOption, text.Plural(int(r.Misplaced.Cells), "old cell", "old cells")), Option: Checkpoint})
		}
		if opts.DryRun {
			r.Actions = append(r.Actions, fmt.Sprintf("rewrite %s stamped at or above the boundary", text.Plural(int(r.Misplaced.Cells), "old cell", "old cells")))
		} else {
			if err := f.rewriteMisplaced(ctx, r); err != nil {
				return r, err
			}
			r.Actions = append(r.Actions, fmt.Sprintf("rewrote %s stamped at or above the boundary", text.Plural(int(r.Rewritten), "old cell", "old cells")))
			if r.Kept > 0 {
				return r, fmt.Errorf("%w: move.Family.Start: %s stamped above the boundary could not be rewritten (changed meanwhile, or a newer cell would be outranked); the policy is unchanged",
					policy.ErrDataLoss, text.Plural(int(r.Kept), "old cell", "old cells"))
			}
		}
	}
	if !samePolicy(r.Found, r.Window) && !samePolicy(r.Found, r.Final) {
		if err := f.setPolicy(ctx, r, r.Window); err != nil {
			return r, err
		}
	}
	if len(r.Actions) == 0 {
		r.Actions = append(r.Actions, "nothing to do: the family has the move's policy")
	}
	return r, nil
}

// rewriteMisplaced rewrites, before the start of a move from
// DefaultExpiration, the old cells stamped on the new side in the new
// encoding. A rewritten cell stays on the new side and cannot be told from
// one still to rewrite: the checkpoint's record of the changes made is
// what keeps a resumed run from rewriting a cell twice.
func (f *Family) rewriteMisplaced(ctx context.Context, r *Report) error {
	oldSide, newSide, _ := f.rule.Sides()
	entries := f.newEntryWriter()
	c := converter{data: f.data, family: f.family, profile: f.opts.AppProfile, rec: f.recorder(f.startRec), entries: entries, plan: func(row bigtable.Row) ([]conversion, int64) {
		var out []conversion
		for _, it := range row[f.family] {
			to, ok := oldSide.Restamp(newSide, it.Timestamp)
			switch {
			case ok && to == it.Timestamp:
				continue // already where the new encoding stamps it
			case !ok:
				to = it.Timestamp // kept where it is: counted as kept
			}
			out = append(out, conversion{Row: row.Key(), Column: it.Column, From: it.Timestamp, To: to, value: it.Value})
		}
		return out, 0
	}}
	filter := bigtable.ChainFilters(bigtable.ColumnRangeFilter(f.family, "", ""), newSide.Span.Filter())
	done, _, err := c.run(ctx, filter, f.startWork(), f.opts)
	r.Rewritten, r.Kept = done.Rewritten, done.Kept
	if s := entries.action(); s != "" {
		r.Actions = append(r.Actions, s)
	}
	if err != nil {
		return fmt.Errorf("move: table %q, family %q: rewriting the misplaced cells stopped (run Start again with the same checkpoint): %w", f.table, f.family, err)
	}
	return nil
}

package move

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/text"
)

// Rewriting a move's old cells in the new encoding, now rather than when
// they expire: Family.Rewrite for the whole family, RewriteRow for one row
// of a pipeline. Each cell is rewritten as cell.go rewrites one.

// rewritable refuses a move whose old cells cannot be rewritten in the
// new encoding: times to times only. Sequence numbers have no times, and
// versions rewritten as times would collapse into one cell.
func rewritable(m ttl.Move, r rules.Move) error {
	if !r.Rewritable() {
		return fmt.Errorf("%w: %v: cells cannot be rewritten between sequence numbers and times; the old cells stay readable by their rule until they expire",
			ttl.ErrInvalidOption, m)
	}
	return nil
}

// Rewrite rewrites, after the move's Start, the cells of the family that
// are live by the old rule in the new encoding, so that the move can end now rather
// than when they expire: each keeps its value and expiry, and is rewritten
// only if still there unchanged and without outranking a newer cell of its
// column (see RewriteRow). The family is read shard by shard with
// Options.Scan. With Options.Checkpoint, each batch of changes is recorded
// before it is made and each shard's progress after: an interrupted run
// given the same checkpoint resumes where it stopped, finds out which of
// the recorded changes were made, makes the others, and counts each
// exactly once. A cell rewritten is no longer an old cell, so nothing is
// rewritten twice. With Options.DryRun it counts and writes nothing.
//
// Moves between sequence numbers and times cannot be rewritten: their old
// cells stay readable by their rule.
func (f *Family) Rewrite(ctx context.Context) (*Report, error) {
	r, err := f.report(ctx, "Rewrite")
	if err != nil {
		return r, err
	}
	if err := rewritable(f.m, f.rule); err != nil {
		return r, fmt.Errorf("move.Family.Rewrite: %w", err)
	}
	if !r.Started {
		return r, fmt.Errorf("%w: move.Family.Rewrite: the move starts at %s; until then the old encoding is still written", ttl.ErrInvalidOption, text.Time(f.m.Start))
	}
	work := f.rewriteWork()
	if err := f.ownCheckpoint(ctx, "Rewrite", work); err != nil {
		return r, err
	}
	oldSide, newSide, _ := f.rule.Sides()
	lagging := r.Now.Add(-f.m.Skew)
	entries := f.newEntryWriter()
	if f.opts.DryRun {
		entries = nil
	}
	c := converter{data: f.data, family: f.family, dryRun: f.opts.DryRun, profile: f.opts.AppProfile, rec: f.recorder(f.rewriteRec), entries: entries, plan: func(row bigtable.Row) ([]conversion, int64) {
		var out []conversion
		var expired int64
		for _, it := range row[f.family] {
			switch to, ok := oldSide.Restamp(newSide, it.Timestamp); {
			case !oldSide.Span.Contains(it.Timestamp):
			case !oldSide.LiveAt(it.Timestamp, 0, lagging):
				expired++
			case ok:
				out = append(out, conversion{Row: row.Key(), Column: it.Column, From: it.Timestamp, To: to, value: it.Value})
			default:
				// Live, but its new timestamp would fall on the old side:
				// kept where it is, as RewriteRow counts it.
				out = append(out, conversion{Row: row.Key(), Column: it.Column, From: it.Timestamp, To: it.Timestamp})
			}
		}
		return out, expired
	}}
	done, read, err := c.run(ctx, RewriteFilter(f.m, f.family), work, f.opts)
	r.Rewritten, r.Kept, r.Read = done.Rewritten, done.Kept, read
	if err != nil && read.Shards == 0 {
		// The journal was never opened: nothing was read or rewritten,
		// and nothing is reported done.
		return r, fmt.Errorf("move.Family.Rewrite: table %q, family %q: %w", f.table, f.family, err)
	}
	verb, left := "rewrote", "left (changed meanwhile, or below a newer cell)"
	if f.opts.DryRun {
		verb, left = "would rewrite", "would be left (below a newer cell)"
	}
	r.Actions = append(r.Actions, fmt.Sprintf("%s %s in the new encoding; %s %s; %s already expired",
		verb, text.Plural(int(done.Rewritten), "old cell", "old cells"), text.Plural(int(done.Kept), "cell", "cells"), left, text.Plural(int(done.Expired), "cell", "cells")))
	if s := entries.action(); s != "" {
		r.Actions = append(r.Actions, s)
	}
	switch {
	case err != nil:
		return r, fmt.Errorf("move: table %q, family %q: the rewrite stopped after %d of %d shards (resume it with the same checkpoint): %w",
			f.table, f.family, read.ShardsRead, read.Planned(), err)
	}
	return r, nil
}

// RewriteFilter returns the filter to read a family's old cells with for
// RewriteRow: the cells below or above the move's boundary that the old
// rule reads, with their values. An invalid move's filter passes nothing.
func RewriteFilter(m ttl.Move, family string) bigtable.Filter {
	r, err := rules.Of(m)
	if err != nil {
		return bigtable.BlockAllFilter()
	}
	oldSide, _, _ := r.Move.Sides()
	return bigtable.ChainFilters(bigtable.ColumnRangeFilter(family, "", ""), oldSide.Span.Filter())
}

// RewriteRow rewrites in the new encoding the cells of family in row, read
// through tbl with RewriteFilter, that are live by the old rule of m for a
// reader whose clock lags now by the move's Skew (as Finish judges): each
// keeps its value and its expiry, and is rewritten only if it is still
// there unchanged and no cell of its column stamped between its old and
// new timestamps would be outranked (a newer value stays on top). With
// dryRun it only counts. This is Rewrite's work for one row, for
// pipelines that spread the rewrite over many machines.
func RewriteRow(ctx context.Context, tbl bigtable.TableAPI, family string, m ttl.Move, row bigtable.Row, now time.Time, dryRun bool) (Counts, error) {
	return RewriteRowScheduled(ctx, tbl, nil, family, m, row, now, dryRun)
}

// RewriteRowScheduled is RewriteRow for a table with a schedule (package
// schedule; Options.Schedule): before it rewrites the row's cells, it
// writes the entries of those it will rewrite with an expiry to sched, the
// schedule table, in one request. A failed entry write rewrites nothing
// and returns its error: the row's cells are still old, and a retry
// writes the entries, then rewrites them. A nil sched writes no entry; a
// dry run writes nothing.
func RewriteRowScheduled(ctx context.Context, tbl, sched bigtable.TableAPI, family string, m ttl.Move, row bigtable.Row, now time.Time, dryRun bool) (Counts, error) {
	r, err := rules.Of(m)
	if err != nil {
		return Counts{}, err
	}
	if err := rewritable(m, *r.Move); err != nil {
		return Counts{}, err
	}
	var done Counts
	oldSide, newSide, _ := r.Move.Sides()
	if sched != nil && !rules.IsNilPointer(sched) && !dryRun {
		if err := rowEntries(ctx, sched, family, oldSide, newSide, row, now.Add(-m.Skew)); err != nil {
			return done, err
		}
	}
	for _, it := range row[family] { // by column, newest first: a newer cell moves before an older one
		if !oldSide.Span.Contains(it.Timestamp) {
			continue
		}
		if !oldSide.LiveAt(it.Timestamp, 0, now.Add(-m.Skew)) {
			done.Expired++
			continue
		}
		to, ok := oldSide.Restamp(newSide, it.Timestamp)
		if !ok {
			done.Kept++
			continue
		}
		if dryRun {
			done.Rewritten++
			continue
		}
		_, qualifier := rules.SplitColumn(it.Column)
		moved, err := moveCell(ctx, tbl, row.Key(), family, qualifier, it.Timestamp, to, it.Value, "", "")
		if err != nil {
			return done, err
		}
		if moved {
			done.Rewritten++
		} else {
			done.Kept++
		}
	}
	return done, nil
}

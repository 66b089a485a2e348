package move

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// The schedule entries of the cells the steps rewrite (Options.Schedule):
// a rewritten cell keeps its expiry, but a sweep that reads the schedule
// finds a row only by an entry, and the old cell's, if it has one, may
// have been written by a writer that did not know the schedule. The
// entries of a batch are written before it, as the library's writers
// write theirs before the data.

// checkSchedule refuses a schedule the move cannot use: named as the
// table, or for a move none of whose cells expires at an instant.
func checkSchedule(table, family string, m ttl.Move, r rules.Move, opts Options) error {
	if opts.Schedule == nil || rules.IsNilPointer(opts.Schedule) {
		if opts.ScheduleTable != "" {
			return fmt.Errorf("%w: Options.ScheduleTable %q names a schedule table, but Options.Schedule is nil", ttl.ErrNilArgument, opts.ScheduleTable)
		}
		return nil
	}
	if opts.ScheduleTable == table {
		return fmt.Errorf("%w: table %q: the schedule table must be another table: its entries would be written among the data's rows", ttl.ErrInvalidOption, table)
	}
	if !r.Strategy().ExpiresAtInstant() {
		return fmt.Errorf("%w: table %q, family %q: under %v no cell expires at an instant, so a schedule (Options.Schedule) has nothing to index",
			ttl.ErrInvalidOption, table, family, m)
	}
	return nil
}

// newEntryWriter returns the writer of the entries of cells rewritten in
// the new encoding of the move, or nil without a schedule.
func (f *Family) newEntryWriter() *entryWriter {
	if f.opts.Schedule == nil || rules.IsNilPointer(f.opts.Schedule) {
		return nil
	}
	_, newSide, _ := f.rule.Sides()
	name := f.opts.ScheduleTable
	if name == "" {
		name = "the schedule table"
	} else {
		name = fmt.Sprintf("schedule table %q", name)
	}
	return &entryWriter{tbl: f.opts.Schedule, name: name, expiry: newSide.Expiry}
}

// An entryWriter writes the schedule entries of conversions, for the
// shards' workers at once.
type entryWriter struct {
	tbl     bigtable.TableAPI
	name    string                                     // for messages
	expiry  func(bigtable.Timestamp) (time.Time, bool) // the new side's
	written atomic.Int64                               // entries written
}

// action says what the writer wrote, for a report's actions; "" for a
// nil writer.
func (e *entryWriter) action() string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("wrote %s to %s, each batch's before its cells", text.Plural(int(e.written.Load()), "schedule entry", "schedule entries"), e.name)
}

// write writes, in one request, the entries of the conversions that
// rewrite a cell (not those that keep it where it is) and whose new
// timestamp expires. A nil writer writes nothing. Entries are idempotent:
// a batch settled after a failure writes them again.
func (e *entryWriter) write(ctx context.Context, convs []conversion) error {
	if e == nil {
		return nil
	}
	var b schedule.Batch
	for _, cv := range convs {
		if cv.To == cv.From {
			continue
		}
		if t, ok := e.expiry(cv.To); ok {
			b.Add(cv.Row, t)
		}
	}
	if err := b.Write(ctx, e.tbl); err != nil {
		return fmt.Errorf("move: writing %s to %s before rewriting %s: none of them was rewritten: %w",
			text.Plural(b.Len(), "schedule entry", "schedule entries"), e.name, text.Plural(len(convs), "cell", "cells"), err)
	}
	e.written.Add(int64(b.Len()))
	return nil
}

// rowEntries writes to sched, in one request, the entries of the cells of
// family in row that RewriteRow rewrites with an expiry: old cells live at
// lagging whose new timestamp falls on the new side.
func rowEntries(ctx context.Context, sched bigtable.TableAPI, family string, oldSide, newSide rules.Side, row bigtable.Row, lagging time.Time) error {
	var b schedule.Batch
	for _, it := range row[family] {
		if !oldSide.Span.Contains(it.Timestamp) || !oldSide.LiveAt(it.Timestamp, 0, lagging) {
			continue
		}
		if to, ok := oldSide.Restamp(newSide, it.Timestamp); ok {
			if t, ok := newSide.Expiry(to); ok {
				b.Add(row.Key(), t)
			}
		}
	}
	if err := b.Write(ctx, sched); err != nil {
		return fmt.Errorf("move: row %q: writing %s before rewriting its cells: none of them was rewritten: %w",
			row.Key(), text.Plural(b.Len(), "schedule entry", "schedule entries"), err)
	}
	return nil
}

// rescheduleBatch is the most entries a worker of reschedule writes in one
// request.
const rescheduleBatch = 500

// reschedule writes, for a move whose Old gives the old cells another
// expiry than their old rule did (rules.Move.Reschedules), the entry of
// each old cell at that expiry, so that a sweep reading the schedule finds
// it when it now expires: Start's work with a schedule. Entries are
// idempotent, so a run again writes them again. A dry run only says so.
func (f *Family) reschedule(ctx context.Context, r *Report) error {
	if f.opts.Schedule == nil || rules.IsNilPointer(f.opts.Schedule) || !f.rule.Reschedules() {
		return nil
	}
	name := "the schedule table"
	if f.opts.ScheduleTable != "" {
		name = fmt.Sprintf("schedule table %q", f.opts.ScheduleTable)
	}
	if f.opts.DryRun {
		r.Actions = append(r.Actions, fmt.Sprintf("write the schedule entries of the old cells to %s at the expiry the move gives them", name))
		return nil
	}
	oldSide, _, _ := f.rule.Sides()
	filter := bigtable.ChainFilters(bigtable.ColumnRangeFilter(f.family, "", ""), oldSide.Span.Filter(), bigtable.StripValueFilter())
	shards, err := scan.Shards(ctx, f.data)
	written := 0
	if err == nil {
		_, err = scan.Run(ctx, shards, f.opts.Scan, func(ctx context.Context, s scan.Shard, c *scan.ShardProgress) (int, error) {
			return f.rescheduleShard(ctx, s, filter, c)
		}, func(_ int, n int) error { written += n; return nil })
	}
	r.Actions = append(r.Actions, fmt.Sprintf("wrote %s to %s at the expiry the move gives the old cells", text.Plural(written, "schedule entry", "schedule entries"), name))
	if err != nil {
		return fmt.Errorf("move: table %q, family %q: writing the schedule entries of the old cells stopped (run Start again): %w", f.table, f.family, err)
	}
	return nil
}

// rescheduleShard writes the entries of shard s's old cells, as reschedule
// says, and returns how many it wrote.
func (f *Family) rescheduleShard(ctx context.Context, s scan.Shard, filter bigtable.Filter, c *scan.ShardProgress) (int, error) {
	var b schedule.Batch
	n := 0
	flush := func() error {
		if err := b.Write(ctx, f.opts.Schedule); err != nil {
			return err
		}
		n += b.Len()
		b.Reset()
		return nil
	}
	_, err := scan.ReadShard(ctx, f.data, s, filter, c, func(row bigtable.Row) error {
		for _, it := range row[f.family] {
			if at, ok := f.rule.Rescheduled(it.Timestamp); ok {
				b.Add(row.Key(), at)
			}
		}
		if b.Len() >= rescheduleBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	return n, flush()
}

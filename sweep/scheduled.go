package sweep

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// A scheduled round reads the schedule (Options.Schedule) instead of the
// whole table: its shards are the schedule's salts. In each, it reads the
// entries of the seconds its window covers, then the rows they name, in
// key order, through the round's filter, and judges each row as a
// scanning round does. A salt's record says the last row judged (After),
// as a shard's says the last row read, so that a resumed round skips the
// rows it judged before.

// rowsPerRead is the most rows a scheduled round reads in one request.
const rowsPerRead = 200

// entryFilter passes one cell of each entry, without its value: a round
// needs only the entries' keys.
var entryFilter = bigtable.ChainFilters(bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())

// scheduled reports whether the sweep's rounds read the schedule.
func (s *Sweeper) scheduled() bool { return s.o.Schedule != nil && !s.o.Reconcile }

// scheduleWork returns what the checkpoint's work adds for a sweep given
// a schedule, so that a scheduled, a reconcile and a scanning sweep each
// refuse the others' checkpoints.
func (s *Sweeper) scheduleWork() string {
	switch {
	case s.o.Schedule == nil:
		return ""
	case s.o.Reconcile:
		return fmt.Sprintf(", reconciled with schedule table %q", s.o.ScheduleTable)
	}
	return fmt.Sprintf(", read through schedule table %q", s.o.ScheduleTable)
}

// checkSchedule reports schedule options a sweep cannot work with.
func (s *Sweeper) checkSchedule() error {
	o := s.o
	hasTable := o.Schedule != nil && !rules.IsNilPointer(o.Schedule)
	switch {
	case o.Schedule != nil && !hasTable:
		return fmt.Errorf("%w: the schedule of table %q is a nil table", ttl.ErrNilArgument, s.table)
	case hasTable && o.ScheduleTable == "":
		return fmt.Errorf("%w: the schedule of table %q has no name: set ScheduleTable with Schedule", ttl.ErrInvalidOption, s.table)
	case !hasTable && o.ScheduleTable != "":
		return fmt.Errorf("%w: schedule table %q of table %q is named but not given: set Schedule with ScheduleTable", ttl.ErrInvalidOption, o.ScheduleTable, s.table)
	case hasTable && o.ScheduleTable == s.table:
		return fmt.Errorf("%w: schedule table %q is the table swept: a schedule is a table of its own", ttl.ErrInvalidOption, o.ScheduleTable)
	case o.Reconcile && !hasTable:
		return fmt.Errorf("%w: a reconcile sweep of table %q needs its schedule: set Schedule and ScheduleTable", ttl.ErrInvalidOption, s.table)
	}
	return nil
}

// ownsEntries reports whether the sweep's rounds may delete the entries
// they serve, the table's families being those found (with their GC
// policies): see OwnsEntries. Without an admin client the families are
// not known, and entries go by the schedule's GC.
func (s *Sweeper) ownsEntries(found map[string]bigtable.GCPolicy) bool {
	return OwnsEntries(found, func(name string) bool {
		return slices.ContainsFunc(s.fams, func(f family) bool { return f.name == name })
	})
}

// OwnsEntries reports whether a sweep of the families swept reports true
// for may delete the schedule entries it serves, in a table whose
// families have the GC policies given: when it sweeps every family that
// may hold cells with entries (rules.MayHoldEntries): those GC collects by
// age, and those with no GC, as a family in a ttl.Move has while its old
// cells wait. An entry names a row and a second, not a family: a sweep of
// some families that deleted it would hide the cells of the others from a
// scheduled sweep of those. A Sweeper applies it itself; a sweep run
// elsewhere (the Beam job) asks it too.
func OwnsEntries(policies map[string]bigtable.GCPolicy, swept func(family string) bool) bool {
	return rules.OwnsEntries(policies, swept)
}

// split returns the shards of a new round: the table's own, or the
// schedule's salts.
func (r *run) split(ctx context.Context) ([]scan.Shard, error) {
	if !r.s.scheduled() {
		return scan.Shards(ctx, r.s.data)
	}
	return saltShards(), nil
}

// saltShards returns the shards of a scheduled round: salt i's entries
// are shard i.
func saltShards() []scan.Shard {
	out := make([]scan.Shard, schedule.Salts)
	for i := range out {
		out[i] = scan.Shard{Start: fmt.Sprintf("%02x#", i), End: fmt.Sprintf("%02x#", i+1)}
	}
	return out
}

// salt reads shard i of a scheduled round: salt i's entries, then the rows
// they name after after, a few hundred a request and a few requests at
// once (readRows), judging each row read in key order and recording the
// rows in batches, as shard does.
func (r *run) salt(ctx context.Context, i int, after string, t *tally, c *scan.ShardProgress) error {
	served, err := r.entries(ctx, i, c)
	if err != nil {
		return err
	}
	rows := make([]string, 0, len(served))
	for row := range served {
		if row > after {
			rows = append(rows, row)
		}
	}
	sort.Strings(rows)
	b := batch{after: after}
	err = r.readRows(ctx, rows, c, func(chunk []string, read []bigtable.Row) error {
		// The rows of the chunk up to the one read, read or not (a row
		// with nothing expired in the window is not returned), are
		// served: their entries go with the row's batch.
		next := 0
		serve := func(upTo string) {
			for ; next < len(chunk) && chunk[next] <= upTo; next++ {
				if r.s.o.Delete {
					b.entries = append(b.entries, served[chunk[next]]...)
				}
			}
		}
		for _, row := range read {
			serve(row.Key())
			if err := r.judge(ctx, i, t, &b, row); err != nil {
				return err
			}
		}
		serve(chunk[len(chunk)-1])
		b.after = chunk[len(chunk)-1]
		if b.full(r.s.o.Batch) {
			return r.flush(ctx, i, t, &b, false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return r.flush(ctx, i, t, &b, true)
}

// entries reads salt's entries of the round's window, and returns the
// rows they name, each with the keys of its entries that a round that
// deletes deletes once it served the row (when it may: ownsEntries):
// those whose second this sweep has served whole by the window's end,
// starting after the start of the span its checkpoint's rounds served
// without a gap (state.Start) and ending by Until. An entry whose second
// straddles Until names cells the next round reports, and that round
// deletes it. One whose second starts by the span's start may name cells
// that expired before it, which this sweep never read, and a sweep of the
// same schedule further behind still needs: GC collects it.
func (r *run) entries(ctx context.Context, salt int, c *scan.ShardProgress) (map[string][]string, error) {
	out := map[string][]string{}
	var bad error
	read, err := scan.ReadSet(ctx, r.s.o.Schedule, schedule.Range(salt, r.round.From, r.round.Until), entryFilter, c, func(row bigtable.Row) error {
		e, err := schedule.Parse(row.Key())
		if err != nil {
			bad = fmt.Errorf("sweep: schedule table %q holds a key that is no entry; delete it: %w", r.s.o.ScheduleTable, err)
			return bad
		}
		keys := out[e.Row]
		if r.deletesEntries && e.Slot.After(r.start) && !e.Slot.Add(schedule.Slot).After(r.round.Until) {
			keys = append(keys, row.Key())
		}
		out[e.Row] = keys
		return nil
	})
	r.addRead(read)
	if err != nil && err != bad {
		err = fmt.Errorf("sweep: reading the entries of schedule table %q: %w", r.s.o.ScheduleTable, err)
	}
	return out, err
}

// unschedule deletes the schedule's entries keys, served.
func (r *run) unschedule(ctx context.Context, keys []string) error {
	if err := schedule.Delete(ctx, r.s.o.Schedule, r.s.o.ScheduleTable, keys); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

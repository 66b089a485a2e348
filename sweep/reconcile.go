package sweep

import (
	"context"
	"fmt"
	"sort"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// A reconcile round (Options.Reconcile) is a scanning round that delivers
// only what a scheduled sweep does not: the events whose cell has no
// entry in the schedule. An event is scheduled when the schedule holds
// the entry of (its row, the second of its Expired): for a cell event its
// cell, for a column or row event the cell that expired last, which makes
// the event. A scheduled round whose window holds that expiry reads the
// row for that entry, finds nothing live after it, and reports the same
// event. An earlier cell of the column or row with an entry of its own
// does not make the event scheduled: the scheduled round that read it
// found the column or row still live.
//
// In a row written both by writers that schedule and by writers that do
// not, a scheduled round reads the whole row for any entry and reports
// every cell of it that expired in its window, entries or not: a cell
// without an entry in a row read for another's is reported by both
// sweeps, with the same ID. Nothing is reported by neither.

// expiries returns the expiry of each expired cell of cols.
func expiries(cols []column) []time.Time {
	var out []time.Time
	for _, c := range cols {
		for _, cell := range c.expired {
			out = append(out, cell.expiry)
		}
	}
	return out
}

// reconcile keeps in b the events and deletions the schedule has no entry
// for, looked up in one read: it drops the events a scheduled sweep
// reports, counting the rest in its tally, and the deletions of rows
// where a cell has an entry, which a scheduled sweep has yet to read.
func (r *run) reconcile(ctx context.Context, b *batch) error {
	want := map[string]bool{}
	for _, e := range b.events {
		want[schedule.Key(e.Row, e.Expired)] = false
	}
	for k, row := range b.keys {
		for _, t := range b.expiries[k] {
			want[schedule.Key(row, t)] = false
		}
	}
	if len(want) == 0 {
		return nil
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	read, err := scan.ReadSet(ctx, r.s.o.Schedule, bigtable.RowList(keys), entryFilter, nil, func(row bigtable.Row) error {
		want[row.Key()] = true
		return nil
	})
	r.addRead(read)
	if err != nil {
		return fmt.Errorf("sweep: looking up %d entries in schedule table %q: %w", len(keys), r.s.o.ScheduleTable, err)
	}
	events := b.events[:0]
	for _, e := range b.events {
		if !want[schedule.Key(e.Row, e.Expired)] {
			events = append(events, e)
		}
	}
	b.events = events
	b.tally.Unscheduled = int64(len(events))
	var dk []string
	var dm []*bigtable.Mutation
	var de [][]time.Time
rows:
	for k, row := range b.keys {
		for _, t := range b.expiries[k] {
			if want[schedule.Key(row, t)] {
				continue rows
			}
		}
		dk, dm, de = append(dk, row), append(dm, b.muts[k]), append(de, b.expiries[k])
	}
	b.keys, b.muts, b.expiries = dk, dm, de
	return nil
}

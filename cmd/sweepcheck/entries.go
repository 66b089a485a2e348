package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/schedule"
)

// entriesCmd reads the family without a filter and the schedule, and
// fails if a cell stored in the family has no entry: the schedule's
// promise that no data is stored without its entry (written first, and
// kept by GC at least as long as the cell). The family is under
// OneSecond, whose timestamps are the expiries. It reads the schedule
// first: a sweep that deletes deletes a row's cells before their entries,
// so a cell still stored when the family is read had its entry when the
// schedule was.
func entriesCmd(ctx context.Context, fs *flag.FlagSet, stdout io.Writer) func() error {
	table := fs.String("table", "sessions", "the data table")
	family := fs.String("family", "sess", "family, under OneSecond")
	sched := fs.String("schedule", "", "the schedule table")
	return func() error {
		if *sched == "" {
			return fmt.Errorf("-schedule: want the schedule table")
		}
		raw, done, err := openTable(ctx, *table)
		if err != nil {
			return err
		}
		defer done()
		st, done2, err := openTable(ctx, *sched)
		if err != nil {
			return err
		}
		defer done2()
		have := map[string]bool{}
		err = st.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			have[r.Key()] = true
			return true
		}, bigtable.RowFilter(bigtable.StripValueFilter()))
		if err != nil {
			return fmt.Errorf("reading schedule table %q: %w", *sched, err)
		}
		want := map[string]bool{}
		var cells int
		err = raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			for _, it := range r[*family] {
				cells++
				want[schedule.Key(r.Key(), it.Timestamp.Time())] = true
			}
			return true
		}, bigtable.RowFilter(bigtable.FamilyFilter(*family)))
		if err != nil {
			return fmt.Errorf("reading table %q: %w", *table, err)
		}
		var missing []string
		for k := range want {
			if !have[k] {
				missing = append(missing, k)
			}
		}
		sort.Strings(missing)
		fmt.Fprintf(stdout, "%d cells stored in %s:%s, %d entries in %s; %d cells without their entry\n",
			cells, *table, *family, len(have), *sched, len(missing))
		if len(missing) > 0 {
			return fmt.Errorf("cells stored without their entry, the first: %q", missing[0])
		}
		return nil
	}
}

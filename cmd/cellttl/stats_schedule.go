package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/schedule"
)

// stats -schedule TABLE: the entries of a schedule table, counted by the
// second they are due, behind -now (their cells have expired: a sweep
// reads them, GC deletes them after the grace) or ahead of it, in the
// buckets of stats' histograms. It reads the schedule only, not the
// table.

// statsScheduleFlag defines stats' -schedule.
func statsScheduleFlag(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.schedule, "schedule", "", "count the entries of this schedule `table` of the table, by when they are\n"+
		"due, instead of auditing the table (it reads the schedule only)")
}

// runStatsSchedule runs stats -schedule.
func runStatsSchedule(ctx context.Context, c *config, strategies map[string]ttl.Strategy, stdout, stderr io.Writer) int {
	if len(strategies) > 0 {
		if code := scheduleAhead(c, "stats", strategies, stderr); code != exitOK {
			return code
		}
	} else if c.schedule == c.table {
		return fail(stderr, "stats", fmt.Errorf("%w: table %q: the schedule table must be another table", ttl.ErrInvalidOption, c.table))
	}
	k, err := connect(ctx, c, c.schedule)
	if err != nil {
		return fail(stderr, "stats", err)
	}
	defer k.close()
	if !slices.Contains(k.found.names, schedule.Family) {
		err = fmt.Errorf("%w: schedule table %q has no family %q", ttl.ErrUnknownFamily, c.schedule, schedule.Family)
		if !k.found.exists {
			err = fmt.Errorf("%w: schedule table %q does not exist", ttl.ErrUnknownFamily, c.schedule)
		}
		return fail(stderr, "stats", err)
	}
	if err := k.openData(ctx, c); err != nil {
		return fail(stderr, "stats", err)
	}
	progress := newProgress(c, stderr)
	st, err := audit.CountSchedule(ctx, k.admin, k.data.Open(c.schedule), c.schedule, c.table,
		audit.Options{AllBuckets: c.allBuckets, Scan: progress.options(c)})
	progress.end()
	if st == nil {
		return fail(stderr, "stats", err)
	}
	return printStats(c, stdout, stderr, st, renderScheduleStats, err)
}

// renderScheduleStats prints what stats -schedule found.
func renderScheduleStats(w io.Writer, st *audit.ScheduleReport) {
	state := "every shard read"
	switch {
	case st.Read.Stopped():
		state = fmt.Sprintf("the scan stopped after %d of %d shards: the counts below are partial", st.Read.ShardsRead, st.Read.Planned())
	case st.Read.Estimate():
		state = fmt.Sprintf("estimates from a sample of %d ranges of %d shards", st.Read.Sampled, st.Read.Shards)
	}
	b := bound(st.Read)
	fmt.Fprintf(w, "schedule table %q of table %q at %s: %s; GC policy %s\n", st.Schedule, st.Table, text.Time(st.Now), state, st.Policy)
	fmt.Fprintf(w, "  entries: %s%d (%s%d behind, due before now: their cells have expired; %s%d ahead)\n", b, st.Entries, b, st.Behind, b, st.Ahead)
	var parts []string
	for _, bk := range st.Due {
		if bk.Entries > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s%d", bucketLabel(st.Now, audit.Bucket{From: bk.From, Until: bk.Until}), b, bk.Entries))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  due: %s\n", strings.Join(parts, "; "))
	}
	if st.Foreign > 0 {
		fmt.Fprintf(w, "  %s%s not an entry's: is %q a schedule table?\n", b, text.Plural(int(st.Foreign), "row key is", "row keys are"), st.Schedule)
	}
	if st.Read.Reads > 0 {
		fmt.Fprintf(w, "  scan: %s\n", st.Read)
	}
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
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

// dueEdges are the edges of the histogram of due times, as durations
// from now: stats' histograms' (audit's).
var dueEdges = [...]time.Duration{
	-30 * 24 * time.Hour, -7 * 24 * time.Hour, -24 * time.Hour, -time.Hour,
	0,
	time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour, 365 * 24 * time.Hour,
}

// A dueBucket counts the entries due in [From, Until); a zero From or
// Until is an open end, which JSON leaves out.
type dueBucket struct {
	From    time.Time
	Until   time.Time
	Entries int64
}

// MarshalJSON leaves an open end out.
func (b dueBucket) MarshalJSON() ([]byte, error) {
	from, until := text.OpenEnds(b.From, b.Until)
	return json.Marshal(struct {
		From    *time.Time `json:"from,omitempty"`
		Until   *time.Time `json:"until,omitempty"`
		Entries int64      `json:"entries"`
	}{from, until, b.Entries})
}

// scheduleStats is what stats -schedule found.
type scheduleStats struct {
	// Schedule and Table name the schedule table and its data table.
	Schedule string `json:"schedule"`
	Table    string `json:"table"`
	// Now is the instant that divides behind from ahead.
	Now time.Time `json:"now"`
	// Policy is the GC policy of the schedule's family.
	Policy string `json:"policy"`
	// Entries counts the entries; Behind those due before Now, Ahead the
	// others.
	Entries int64 `json:"entries"`
	Behind  int64 `json:"behind"`
	Ahead   int64 `json:"ahead"`
	// Foreign counts the rows whose key is not an entry's.
	Foreign int64 `json:"foreign_rows"`
	// Due is the histogram of the entries by the second they are due:
	// the buckets that count some, every one with -all-buckets.
	Due []dueBucket `json:"due"`
	// Read is what the scan read; an estimate's counts are scaled.
	Read scan.Stats `json:"read"`
}

// dueTally is one shard's count.
type dueTally struct {
	due              [len(dueEdges) + 1]int64
	behind, ahead    int64
	foreign, entries int64
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
	tool, err := policy.New(k.admin, nil, c.schedule, nil, policy.Options{})
	if err != nil {
		return fail(stderr, "stats", err)
	}
	policies, err := tool.Policies(ctx)
	if err != nil {
		return fail(stderr, "stats", err)
	}
	if err := k.openData(ctx, c); err != nil {
		return fail(stderr, "stats", err)
	}
	st := &scheduleStats{Schedule: c.schedule, Table: c.table, Now: c.judgedAt(), Policy: policy.Describe(policies[schedule.Family])}
	progress := newProgress(c, stderr)
	err = st.count(ctx, k.data.Open(c.schedule), progress.options(c), c.allBuckets)
	progress.end()
	return printStats(c, stdout, stderr, st, renderScheduleStats, err)
}

// count reads the schedule's entries, one cell a row, and counts them.
func (st *scheduleStats) count(ctx context.Context, entries bigtable.TableAPI, o scan.Options, all bool) error {
	var sum dueTally
	filter := bigtable.ChainFilters(bigtable.FamilyFilter(schedule.Family), bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())
	read, err := scan.ReadTable(ctx, entries, filter, o,
		func() *dueTally { return new(dueTally) },
		func(t *dueTally, r bigtable.Row) { t.add(r.Key(), st.Now) },
		func(t *dueTally) { sum.merge(t) })
	st.Read = read
	f := read.Scale()
	scale := func(n int64) int64 { return int64(float64(n)*f + 0.5) }
	st.Entries, st.Behind, st.Ahead, st.Foreign = scale(sum.entries), scale(sum.behind), scale(sum.ahead), scale(sum.foreign)
	for i, n := range sum.due {
		b := dueBucket{Entries: scale(n)}
		if i > 0 {
			b.From = st.Now.Add(dueEdges[i-1])
		}
		if i < len(dueEdges) {
			b.Until = st.Now.Add(dueEdges[i])
		}
		if all || b.Entries > 0 {
			st.Due = append(st.Due, b)
		}
	}
	if st.Due == nil {
		st.Due = []dueBucket{}
	}
	if err != nil {
		return fmt.Errorf("schedule table %q: the scan stopped after %d of %d shards: %w", st.Schedule, read.ShardsRead, read.Planned(), err)
	}
	return nil
}

// add counts the row key of the schedule.
func (t *dueTally) add(key string, now time.Time) {
	e, err := schedule.Parse(key)
	if err != nil {
		t.foreign++
		return
	}
	t.entries++
	d := e.Slot.Sub(now)
	if d < 0 {
		t.behind++
	} else {
		t.ahead++
	}
	t.due[sort.Search(len(dueEdges), func(i int) bool { return d < dueEdges[i] })]++
}

// merge adds o's counts to t.
func (t *dueTally) merge(o *dueTally) {
	for i := range t.due {
		t.due[i] += o.due[i]
	}
	t.behind += o.behind
	t.ahead += o.ahead
	t.foreign += o.foreign
	t.entries += o.entries
}

// renderScheduleStats prints what stats -schedule found.
func renderScheduleStats(w io.Writer, st *scheduleStats) {
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

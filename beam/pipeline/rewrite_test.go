package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/scan"
)

// The move the rewrite tests make: family sess, whose cells carry real
// write times, moves to OneSecond, started ten minutes before now; the old
// cells live 30 minutes after their write, for readers whose clocks lag by
// up to a minute.
var (
	moveStart = now.Add(-10 * time.Minute)
	theMove   = ttl.Move{From: nil, To: ttl.OneSecond(), Start: moveStart, Old: ttl.For(30 * time.Minute), Skew: time.Minute}
)

// rewriteConfig is the move, as the pipeline takes it.
func rewriteConfig(table string) pipeline.RewriteConfig {
	return pipeline.RewriteConfig{
		Table:  pipeline.Table{Project: "proj", Instance: "inst", Table: table},
		Family: "sess", To: "onesecond", From: "none", Old: "for:30m",
		Start: moveStart, Skew: time.Minute, Now: now,
	}
}

// A moveCell is a cell of the moving family, as written and as the
// rewrite should leave it.
type moveCell struct {
	row, column string
	ts, want    bigtable.Timestamp
	value       string
}

func (c moveCell) String() string { return fmt.Sprintf("%s %s @%d %q", c.row, c.column, c.ts, c.value) }

// moveCounts is what the rewrite of the cells fillMove writes should count.
type moveCounts struct{ rewritten, kept, expired int64 }

// fillMove creates table, with the moving family sess and a family meta
// the move does not touch, and fills it with rows of old cells of every
// kind: live (rewritten, their expiry kept: 30 minutes after their write),
// several live versions of a column, expired (left alone), live for a
// lagging reader only (rewritten), and live but below a newer cell of the
// new encoding that the rewritten cell would outrank (kept). It returns
// the cells of sess, each with the timestamp the rewrite should leave it
// at, and the counts it should report.
func fillMove(t *testing.T, admin *bigtable.AdminClient, client *bigtable.Client, table string) ([]moveCell, moveCounts) {
	t.Helper()
	createTable(t, admin, table, map[string]bigtable.GCPolicy{"sess": nil, "meta": nil})
	var cells []moveCell
	var want moveCounts
	keys := make([]string, rows)
	muts := make([]*bigtable.Mutation, rows)
	for i := range keys {
		keys[i] = fmt.Sprintf("user#%04d", i)
		m := bigtable.NewMutation()
		// set writes an old cell written at the instant d before now,
		// rewritten or not.
		set := func(column string, d time.Duration, rewritten bool) {
			c := moveCell{row: keys[i], column: "sess:" + column, ts: bigtable.Time(now.Add(-d)),
				value: fmt.Sprintf("%s-%d-%v", column, i, d)}
			c.want = c.ts
			if rewritten {
				c.want = bigtable.Time(now.Add(-d + 30*time.Minute))
			}
			cells = append(cells, c)
			m.Set("sess", column, c.ts, []byte(c.value))
		}
		// live, expiring in 18 minutes or less
		set("a", 12*time.Minute+time.Duration(i%60)*time.Second, true)
		want.rewritten++
		if i%3 == 0 { // expired an hour and a half ago or more
			set("b", 2*time.Hour+time.Duration(i)*time.Second, false)
			want.expired++
		}
		if i%4 == 0 { // two live versions of a column: both rewritten
			set("c", 15*time.Minute, true)
			set("c", 25*time.Minute, true)
			want.rewritten += 2
		}
		if i%5 == 0 { // live, below a cell written the new way since the start
			set("d", 20*time.Minute, false)
			want.kept++
			newer := moveCell{row: keys[i], column: "sess:d", ts: bigtable.Time(now.Add(5 * time.Minute)), value: "new"}
			newer.want = newer.ts
			cells = append(cells, newer)
			m.Set("sess", "d", newer.ts, []byte(newer.value))
		}
		if i%7 == 0 { // expired 30s ago, live for a reader a minute behind
			set("e", 30*time.Minute+30*time.Second, true)
			want.rewritten++
		}
		if i%9 == 0 { // expired 90s ago: for every reader
			set("f", 30*time.Minute+90*time.Second, false)
			want.expired++
		}
		m.Set("meta", "m", bigtable.Time(now.Add(-time.Hour)), []byte("meta"))
		muts[i] = m
	}
	applyBulk(t, client.Open(table), keys, muts)
	return cells, want
}

// storedCells returns every cell of table, families sess and meta, as
// "row family:column @timestamp value", sorted.
func storedCells(t *testing.T, client *bigtable.Client, table string) []string {
	t.Helper()
	var out []string
	err := client.Open(table).ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, items := range r {
			for _, it := range items {
				out = append(out, moveCell{row: r.Key(), column: it.Column, ts: it.Timestamp, value: string(it.Value)}.String())
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// expectedCells returns the cells of a table filled by fillMove, each at
// the timestamp the rewrite leaves it at (rewritten) or as written.
func expectedCells(cells []moveCell, rewritten bool) []string {
	out := make([]string, 0, len(cells)+rows)
	for _, c := range cells {
		if rewritten {
			c.ts = c.want
		}
		out = append(out, c.String())
	}
	for i := range rows {
		out = append(out, moveCell{row: fmt.Sprintf("user#%04d", i), column: "meta:m", ts: bigtable.Time(now.Add(-time.Hour)), value: "meta"}.String())
	}
	slices.Sort(out)
	return out
}

// runRewrite runs the rewrite pipeline on Prism, in this process, and
// returns the totals it wrote, after checking that its counters count the
// same.
func runRewrite(t *testing.T, cfg pipeline.RewriteConfig) *pipeline.RewriteResult {
	t.Helper()
	var r pipeline.RewriteResult
	counters := runPipeline(t, func(ctx context.Context, s beam.Scope) (beam.PCollection, error) {
		return pipeline.Rewrite(ctx, s, cfg)
	}, &r)
	got := moveCounts{counters["cells_rewritten"], counters["cells_kept"], counters["cells_expired"]}
	if want := (moveCounts{r.Rewritten, r.Kept, r.Expired}); got != want {
		t.Errorf("counters %+v; the totals %+v", got, want)
	}
	if n := counters["shards_read"]; n != int64(r.Read.ShardsRead) {
		t.Errorf("counter shards_read %d; the totals %d", n, r.Read.ShardsRead)
	}
	return &r
}

// checkCounts checks the counts of a rewrite, and that it read every
// shard, of several, once.
func checkCounts(t *testing.T, what string, got *pipeline.RewriteResult, want moveCounts) {
	t.Helper()
	if g := (moveCounts{got.Rewritten, got.Kept, got.Expired}); g != want {
		t.Errorf("%s: rewritten, kept, expired %+v; want %+v", what, g, want)
	}
	if s := got.Read; s.Shards < 2 || s.ShardsRead != s.Shards || s.Reads != s.Shards || !got.Complete() || s.RowsSeen != rows {
		t.Errorf("%s: scan %+v: want several shards, each read once, complete, %d rows seen", what, s, rows)
	}
}

// diffCells reports the first difference between two lists of cells.
func diffCells(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("cell %d is %s, want %s", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d cells, want %d", len(got), len(want))
	}
	return ""
}

// TestRewriteMatchesTheLibrary runs the rewrite pipeline on a family of
// real timestamps moving to OneSecond: a dry run, which changes nothing
// and counts what the library's dry run counts; the rewrite, which moves every
// live old cell once to its expiry (its write time + 30m), keeps its
// value, leaves the expired old cells, the kept ones and the other family
// alone, and leaves the table as the library's move.Family.Rewrite leaves an identical one;
// and a second run, which rewrites nothing. move.Family.Plan then finds no live
// old cell but the kept ones.
func TestRewriteMatchesTheLibrary(t *testing.T) {
	ctx := context.Background()
	admin, client := newEmulator(t)
	cells, want := fillMove(t, admin, client, "events")
	fillMove(t, admin, client, "events_lib")
	before, after := expectedCells(cells, false), expectedCells(cells, true)
	if diff := diffCells(storedCells(t, client, "events"), before); diff != "" {
		t.Fatalf("the table as filled: %s", diff)
	}

	// A dry run reads only the old cells and makes no conditional
	// mutation: it counts as rewritten the cells a rewrite keeps below a
	// newer cell, as the library's dry run does.
	dryReport, err := rewriteWithLibrary(ctx, admin, client, "events_lib", move.Options{DryRun: true, Scan: scan.Options{Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rewriteConfig("events")
	cfg.DryRun = true
	dry := runRewrite(t, cfg)
	checkCounts(t, "dry run", dry, moveCounts{rewritten: want.rewritten + want.kept, expired: want.expired})
	if dry.Rewritten != dryReport.Rewritten || dry.Kept != dryReport.Kept {
		t.Errorf("the library's dry run would rewrite %d and keep %d; the pipeline's %d and %d",
			dryReport.Rewritten, dryReport.Kept, dry.Rewritten, dry.Kept)
	}
	if dry.Read.RowsReturned != rows {
		t.Errorf("dry run: %d rows with old cells; want all %d", dry.Read.RowsReturned, rows)
	}
	if !dry.DryRun || dry.Table != "events" || dry.Family != "sess" || !dry.Now.Equal(now) || dry.Move != theMove.String() {
		t.Errorf("dry run: result %+v", dry)
	}
	if diff := diffCells(storedCells(t, client, "events"), before); diff != "" {
		t.Fatalf("the dry run changed the table: %s", diff)
	}

	got := runRewrite(t, rewriteConfig("events"))
	checkCounts(t, "rewrite", got, want)
	if got.DryRun {
		t.Error("the rewrite says it was a dry run")
	}
	stored := storedCells(t, client, "events")
	if diff := diffCells(stored, after); diff != "" {
		t.Errorf("after the rewrite: %s", diff)
	}

	report, err := rewriteWithLibrary(ctx, admin, client, "events_lib", move.Options{Scan: scan.Options{Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	if report.Rewritten != got.Rewritten || report.Kept != got.Kept {
		t.Errorf("the library's rewrite rewrote %d and kept %d; the pipeline %d and %d", report.Rewritten, report.Kept, got.Rewritten, got.Kept)
	}
	if diff := diffCells(stored, storedCells(t, client, "events_lib")); diff != "" {
		t.Errorf("the pipeline's table and the library's rewrite's differ: %s", diff)
	}

	again := runRewrite(t, rewriteConfig("events"))
	checkCounts(t, "second run", again, moveCounts{rewritten: 0, kept: want.kept, expired: want.expired})
	if diff := diffCells(storedCells(t, client, "events"), after); diff != "" {
		t.Errorf("the second run changed the table: %s", diff)
	}

	f, err := move.New(admin, client.Open("events"), "events", "sess", theMove, move.Options{Scan: scan.Options{Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := f.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plan.OldLive.Cells != want.kept || plan.OldExpired.Cells != want.expired {
		t.Errorf("move.Family.Plan after the rewrite: %d old cells live, %d expired; want the %d kept, the %d expired",
			plan.OldLive.Cells, plan.OldExpired.Cells, want.kept, want.expired)
	}
	t.Logf("%d shards; dry run %+v; rewrite %+v; second run %+v", got.Read.Shards, dry.Counts, got.Counts, again.Counts)
}

// TestRewriteAfterFailedAttempt rewrites the family after an attempt that
// failed part way (as a failed bundle would leave it): the cells the
// attempt rewrote are not rewritten again, the rest are, and the table
// ends as if the attempt had not failed; the counts are only the second
// attempt's.
func TestRewriteAfterFailedAttempt(t *testing.T) {
	ctx := context.Background()
	admin, client := newEmulator(t)
	cells, want := fillMove(t, admin, client, "events")
	data := client.Open("events")
	var first move.Counts
	err := data.ReadRows(ctx, bigtable.NewRange("", "user#0100"), func(r bigtable.Row) bool {
		n, err := move.RewriteRow(ctx, data, "sess", theMove, r, now, false)
		if err != nil {
			t.Fatal(err)
		}
		first.Add(n)
		return true
	}, bigtable.RowFilter(move.RewriteFilter(theMove, "sess")))
	if err != nil {
		t.Fatal(err)
	}
	if first.Rewritten == 0 {
		t.Fatal("the first attempt rewrote nothing")
	}

	got := runRewrite(t, rewriteConfig("events"))
	checkCounts(t, "rewrite", got, moveCounts{rewritten: want.rewritten - first.Rewritten, kept: want.kept, expired: want.expired})
	if diff := diffCells(storedCells(t, client, "events"), expectedCells(cells, true)); diff != "" {
		t.Errorf("after the rewrite: %s", diff)
	}
}

// TestRewriteRefusesBadConfig checks that a rewrite move.Family.Rewrite would
// refuse, or that the workers could not run, fails while the pipeline is
// built.
func TestRewriteRefusesBadConfig(t *testing.T) {
	admin, client := newEmulator(t)
	fillMove(t, admin, client, "events")
	with := func(change func(*pipeline.RewriteConfig)) pipeline.RewriteConfig {
		cfg := rewriteConfig("events")
		change(&cfg)
		return cfg
	}
	for _, tc := range []struct {
		name string
		cfg  pipeline.RewriteConfig
		want string
	}{
		{"to seqnum", with(func(c *pipeline.RewriteConfig) { c.To = "seqnum:2" }), "cannot be rewritten between sequence numbers and times"},
		{"from seqnum", with(func(c *pipeline.RewriteConfig) { c.From = "seqnum:2" }), "cannot be rewritten between sequence numbers and times"},
		{"not started", with(func(c *pipeline.RewriteConfig) { c.Start = now.Add(time.Hour) }), "the move starts at 2030-04-30T10:00:00Z, after the instant the rewrite judges by (2030-04-30T09:00:00Z)"},
		{"not started now", with(func(c *pipeline.RewriteConfig) {
			c.Start, c.Now = time.Now().Add(time.Hour).Truncate(time.Second), time.Time{}
		}), "until then the old encoding is still written"},
		{"no move", with(func(c *pipeline.RewriteConfig) { c.From = "onesecond" }), "moves go from a family without a strategy"},
		{"no start", with(func(c *pipeline.RewriteConfig) { c.Start = time.Time{} }), "Start must be a whole millisecond"},
		{"bad to", with(func(c *pipeline.RewriteConfig) { c.To = "hourly" }), `the strategy moved to: strategy "hourly"`},
		{"no from", with(func(c *pipeline.RewriteConfig) { c.From = "" }), "the strategy moved from is missing"},
		{"bad old", with(func(c *pipeline.RewriteConfig) { c.Old = "for:0s" }), "the old cells' rule: for:0s: want a positive duration"},
		{"no family", with(func(c *pipeline.RewriteConfig) { c.Family = "" }), "needs the family being moved"},
		{"missing family", with(func(c *pipeline.RewriteConfig) { c.Family = "clicks" }), `table "events" has no family "clicks"`},
		{"missing table", with(func(c *pipeline.RewriteConfig) { c.Table.Table = "nope" }), `table "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := pipeline.Rewrite(context.Background(), s, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// rewriteWithLibrary rewrites family sess of table with the library's own
// step, move.Family.Rewrite, for the pipeline's counts to be compared with.
func rewriteWithLibrary(ctx context.Context, admin *bigtable.AdminClient, client *bigtable.Client, table string, opts move.Options) (*move.Report, error) {
	f, err := move.New(admin, client.Open(table), table, "sess", theMove, opts)
	if err != nil {
		return nil, err
	}
	return f.Rewrite(ctx)
}

package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/schedule"
)

// TestRewriteWritesEntries runs the rewrite with a schedule table: every
// old cell it rewrites gets its entry at its expiry (its write time +
// 30m), and so does a live old cell kept below a newer one (a stale entry,
// which a sweep reads and reports nothing of); the expired ones get none.
func TestRewriteWritesEntries(t *testing.T) {
	ctx := context.Background()
	admin, client := newEmulator(t)
	cells, want := fillMove(t, admin, client, "events")
	createTable(t, admin, "events_schedule", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(0)})
	cfg := rewriteConfig("events")
	cfg.Schedule = "events_schedule"
	r := runRewrite(t, cfg)
	checkCounts(t, "rewrite", r, want)
	if r.Schedule != "events_schedule" {
		t.Errorf("the result's schedule %q", r.Schedule)
	}
	wantEntries := map[string]bigtable.Timestamp{}
	for _, c := range cells {
		expiry := c.ts.Time().Add(30 * time.Minute)
		switch {
		case c.want != c.ts:
			expiry = c.want.Time()
		case c.column == "sess:d" && c.value != "new":
		default:
			continue
		}
		wantEntries[schedule.Key(c.row, expiry)] = schedule.Timestamp(expiry)
	}
	got := map[string]bigtable.Timestamp{}
	err := client.Open("events_schedule").ReadRows(ctx, bigtable.InfiniteRange(""), func(row bigtable.Row) bool {
		for _, it := range row[schedule.Family] {
			got[row.Key()] = it.Timestamp
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(wantEntries) {
		t.Errorf("%d entries, want %d", len(got), len(wantEntries))
	}
	for k, ts := range wantEntries {
		if got[k] != ts {
			t.Errorf("entry %q at %d, want %d", k, got[k], ts)
			break
		}
	}
}

// TestRewriteRefusesBadSchedule checks that a schedule table the rewrite
// cannot write to fails while the pipeline is built.
func TestRewriteRefusesBadSchedule(t *testing.T) {
	admin, client := newEmulator(t)
	fillMove(t, admin, client, "events")
	createTable(t, admin, "other", map[string]bigtable.GCPolicy{"x": nil})
	for _, tc := range []struct{ schedule, want string }{
		{"events", `table "events": the schedule table must be another table`},
		{"nosuch", `schedule table "nosuch": policy: table not found: table "nosuch" does not exist`},
		{"other", `schedule table "other" has no family "e"`},
	} {
		cfg := rewriteConfig("events")
		cfg.Schedule = tc.schedule
		_, s := beam.NewPipelineWithRoot()
		_, err := pipeline.Rewrite(context.Background(), s, cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("schedule %q: error %v; want one containing %q", tc.schedule, err, tc.want)
		}
	}
}

package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// newSchedule starts an emulator and fills the schedule table
// events_schedule of table events with rows entries, due from hours
// behind now to days ahead of it, and one row whose key is not an
// entry's. It returns the pipeline's table (events) and what
// audit.CountSchedule counts of the schedule at now.
func newSchedule(t *testing.T) (pipeline.Table, *audit.ScheduleReport) {
	t.Helper()
	admin, client := newEmulator(t)
	createTable(t, admin, "events_schedule", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Hour)})
	sched := client.Open("events_schedule")
	keys := make([]string, rows+1)
	muts := make([]*bigtable.Mutation, rows+1)
	salts := map[int]bool{}
	for i := range rows {
		// From about 3 hours behind now to about 3 days ahead.
		due := now.Add(time.Duration(i-rows/20) * time.Duration(i%7+1) * 73 * time.Second)
		keys[i], muts[i] = schedule.Key(fmt.Sprintf("user#%04d", i), due), schedule.Mutation(due)
		salts[schedule.Salt(fmt.Sprintf("user#%04d", i))] = true
	}
	keys[rows], muts[rows] = "not-an-entry", schedule.Mutation(now)
	applyBulk(t, sched, keys, muts)
	if len(salts) < 2 {
		t.Fatalf("the entries are in %d salt, want several", len(salts))
	}

	want, err := audit.CountSchedule(context.Background(), admin, sched, "events_schedule", "events",
		audit.Options{Scan: scan.Options{Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	if want.Entries != rows || want.Behind == 0 || want.Ahead == 0 || want.Foreign != 1 || want.Policy != "maxage=1h" {
		t.Fatalf("audit.CountSchedule counted %+v: want %d entries, behind and ahead, 1 foreign row, maxage=1h", want, rows)
	}
	return pipeline.Table{Project: "proj", Instance: "inst", Table: "events"}, want
}

// runAuditSchedule runs the schedule's count on Prism, in this process,
// and returns the report it wrote.
func runAuditSchedule(t *testing.T, cfg pipeline.AuditScheduleConfig) *audit.ScheduleReport {
	t.Helper()
	var r audit.ScheduleReport
	counters := runPipeline(t, func(ctx context.Context, s beam.Scope) (beam.PCollection, error) {
		return pipeline.AuditSchedule(ctx, s, cfg)
	}, &r)
	if counters["shards_read"] != int64(r.Read.Shards) || counters["rows_returned"] != int64(r.Read.RowsReturned) {
		t.Errorf("counters %v; the report read %+v", counters, r.Read)
	}
	return &r
}

// TestAuditScheduleMatchesCountSchedule runs the pipeline on a schedule
// of entries in several salts, behind and ahead of now, and a foreign
// row, and checks that its report is audit.CountSchedule's at the same
// instant, as JSON, and that it read every shard, of several.
func TestAuditScheduleMatchesCountSchedule(t *testing.T) {
	tbl, want := newSchedule(t)
	got := runAuditSchedule(t, pipeline.AuditScheduleConfig{Table: tbl, Schedule: "events_schedule", Now: now})

	g := got.Read
	if g.Shards < 2 || g.ShardsRead != g.Shards || g.Reads != g.Shards || !g.Complete() || g.RowsReturned != rows+1 {
		t.Errorf("scan %+v: want several shards, each read once, complete, %d rows", g, rows+1)
	}
	// The emulator samples row keys at random: the two scans split the
	// schedule into different shards.
	want.Read.Shards, want.Read.ShardsRead, want.Read.Reads = g.Shards, g.ShardsRead, g.Reads
	gotJSON, wantJSON := indent(t, got), indent(t, want)
	if gotJSON != wantJSON {
		t.Errorf("the pipeline's report differs from audit.CountSchedule's:\npipeline:\n%s\naudit.CountSchedule:\n%s", gotJSON, wantJSON)
	}
	t.Log(got)
}

// TestAuditScheduleNow checks that a zero Now is the time the pipeline
// is built: the entries, due in 2030, are all ahead of it.
func TestAuditScheduleNow(t *testing.T) {
	tbl, _ := newSchedule(t)
	before := time.Now()
	got := runAuditSchedule(t, pipeline.AuditScheduleConfig{Table: tbl, Schedule: "events_schedule"})
	if got.Now.Before(before) || got.Now.After(time.Now()) || got.Now.Location() != time.UTC {
		t.Errorf("report at %v; want the time the pipeline was built, in UTC", got.Now)
	}
	if got.Entries != rows || got.Ahead != rows || got.Foreign != 1 {
		t.Errorf("%d entries, %d ahead of now, %d foreign rows; want %d, all ahead, and 1", got.Entries, got.Ahead, got.Foreign, rows)
	}
}

// indent returns v as the cellttl command prints it with -format json.
func indent(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditScheduleRefusesBadConfig checks that a schedule the workers
// could not count fails while the pipeline is built, with its sentinel.
func TestAuditScheduleRefusesBadConfig(t *testing.T) {
	admin, _ := newEmulator(t)
	createTable(t, admin, "other", map[string]bigtable.GCPolicy{"x": nil})
	tbl := pipeline.Table{Project: "proj", Instance: "inst", Table: "events"}
	for _, tc := range []struct {
		name string
		cfg  pipeline.AuditScheduleConfig
		is   error
		want string
	}{
		{"no table", pipeline.AuditScheduleConfig{Table: pipeline.Table{Project: "proj", Instance: "inst"}, Schedule: "s"}, nil, "needs a project, an instance and a table"},
		{"no schedule", pipeline.AuditScheduleConfig{Table: tbl}, ttl.ErrInvalidOption, `table "events": no schedule table to count`},
		{"the table", pipeline.AuditScheduleConfig{Table: tbl, Schedule: "events"}, ttl.ErrInvalidOption, `table "events": the schedule table must be another table`},
		{"missing", pipeline.AuditScheduleConfig{Table: tbl, Schedule: "nosuch"}, nil, `schedule table "nosuch": policy: table not found`},
		{"no family", pipeline.AuditScheduleConfig{Table: tbl, Schedule: "other"}, policy.ErrFamilyMismatch, `schedule table "other" has no family "e"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := pipeline.AuditSchedule(context.Background(), s, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("error %v; want one containing %q (%v)", err, tc.want, tc.is)
			}
		})
	}
}

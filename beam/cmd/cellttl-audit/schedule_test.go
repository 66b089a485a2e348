package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
)

// newSchedule creates, in the emulator newEmulator started, the schedule
// table events_schedule of table events: entries in several salts, due
// behind and ahead of now, and a row whose key is not an entry's. It
// returns audit.CountSchedule's report of it at now.
func newSchedule(t *testing.T, now time.Time) *audit.ScheduleReport {
	t.Helper()
	ctx := context.Background()
	admin, err := bigtable.NewAdminClient(ctx, "proj", "inst")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTable(ctx, "events_schedule"); err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateColumnFamily(ctx, "events_schedule", schedule.Family); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetGCPolicy(ctx, "events_schedule", schedule.Family, schedule.Policy(time.Hour)); err != nil {
		t.Fatal(err)
	}
	client, err := bigtable.NewClient(ctx, "proj", "inst")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sched := client.Open("events_schedule")
	var keys []string
	var muts []*bigtable.Mutation
	for i := range 300 {
		due := now.Add(time.Duration(i-20) * time.Duration(i%5+1) * 97 * time.Second)
		keys, muts = append(keys, schedule.Key(fmt.Sprintf("user#%03d", i), due)), append(muts, schedule.Mutation(due))
	}
	keys, muts = append(keys, "not-an-entry"), append(muts, schedule.Mutation(now))
	errs, err := sched.ApplyBulk(ctx, keys, muts)
	if err != nil || errs != nil {
		t.Fatal(err, errs)
	}
	want, err := audit.CountSchedule(ctx, admin, sched, "events_schedule", "events",
		audit.Options{Scan: scan.Options{Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	if want.Entries != 300 || want.Behind == 0 || want.Ahead == 0 || want.Foreign != 1 {
		t.Fatalf("audit.CountSchedule counted %s, %d foreign", want, want.Foreign)
	}
	return want
}

// TestRunSchedule runs -schedule on Prism against the emulator: it exits
// 0, says where it wrote the count, and the file holds the JSON `cellttl
// stats -schedule -format json` prints (audit.CountSchedule's report,
// indented), but for the shards the emulator's random samples split the
// schedule into.
func TestRunSchedule(t *testing.T) {
	newEmulator(t)
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	want := newSchedule(t, now)
	out := filepath.Join(t.TempDir(), "schedule.json")
	code, stderr := runCmd(t, "-project", "proj", "-instance", "inst", "-table", "events", "-schedule", "events_schedule",
		"-output", out, "-now", "2030-04-30T09:00:00Z")
	if want := `cellttl-audit: wrote the count of schedule table "events_schedule" of table "events" to ` + out + "\n"; code != 0 || !strings.HasSuffix(stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 0 and %q", code, stderr, want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got audit.ScheduleReport
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v in:\n%s", err, b)
	}
	if !got.Read.Complete() || got.Read.Reads != got.Read.Shards {
		t.Errorf("the count read %+v: want every shard read once", got.Read)
	}
	want.Read.Shards, want.Read.ShardsRead, want.Read.Reads = got.Read.Shards, got.Read.ShardsRead, got.Read.Reads
	wantJSON, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(wantJSON)+"\n" {
		t.Errorf("the file holds:\n%s\nwant:\n%s", b, wantJSON)
	}
}

// TestRunScheduleRefused checks that -schedule with -family or -values
// is a bad command line (exit 2, with the usage), that writes nothing,
// and that a schedule table that does not exist fails the job (exit 1).
func TestRunScheduleRefused(t *testing.T) {
	newEmulator(t)
	out := filepath.Join(t.TempDir(), "schedule.json")
	base := []string{"-project", "proj", "-instance", "inst", "-table", "events", "-schedule", "events_schedule", "-output", out}
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"family", []string{"-family", "sess=onesecond"}, 2, "cellttl-audit: -schedule counts the schedule's entries, which belong to no family: -family cannot go with it\nusage:"},
		{"values", []string{"-values"}, 2, "cellttl-audit: -schedule reads the schedule's row keys only: -values cannot go with it\nusage:"},
		{"missing schedule", nil, 1, `cellttl-audit: pipeline: schedule table "events_schedule": `},
		{"the table", []string{"-schedule", "events"}, 1, `cellttl-audit: ttl: invalid option: pipeline: table "events": the schedule table must be another table`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := runCmd(t, append(append([]string{}, base...), tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the count was written")
			}
		})
	}
}

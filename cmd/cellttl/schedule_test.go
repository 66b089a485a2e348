package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/schedule"
)

// TestEnsureCheckSchedule checks ensure -schedule and check -schedule: a
// schedule table to create is refused without -create, shown in a dry
// run, created with -create -apply under OneSecond's policy with the
// families' longest grace, and then matches; a shorter grace is a
// mismatch that ensure fixes.
func TestEnsureCheckSchedule(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour), "clicks": bigtable.MaxAgePolicy(50 * time.Hour)})
	ctx := context.Background()
	fams := []string{"-family", "sess=grace:1h:onesecond", "-family", "clicks=grace:2h:default:48h", "-schedule", "sched"}
	tableExists := func() bool {
		_, err := e.Admin.TableInfo(ctx, "sched")
		return err == nil
	}

	stdout, stderr, code := cellttl(with("check", fams...)...)
	assert.Equal(t, exitMismatch, code, stderr)
	assert.Contains(t, stdout, "schedule table \"sched\" of table \"t\"\nFAMILY")
	assert.Regexp(t, `e +Grace\(OneSecond\(\), 2h0m0s\) +missing +maxage=2h +missing`, stdout)
	assert.Contains(t, stderr, `cellttl check: ttl: column family does not match its strategy: schedule table "sched" of table "t" does not exist`)
	assert.Contains(t, stderr, `"cellttl ensure -schedule sched" shows what it would change`)

	stdout, stderr, code = cellttl(with("ensure", append(fams, "-apply")...)...)
	assert.Equal(t, exitMismatch, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "cellttl ensure: schedule table \"sched\" does not exist\ncellttl ensure: refused, nothing changed; give -create to create it (check the name first)\n", stderr)
	assert.False(t, tableExists())

	stdout, stderr, code = cellttl(with("ensure", append(fams, "-create")...)...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "schedule of table \"t\":\ntable \"sched\" at ")
	assert.Contains(t, stdout, "table does not exist, would be created with its families; dry run, nothing changed; would make 1 change")
	assert.Contains(t, stdout, "dry run: nothing changed; run again with -apply")
	assert.False(t, tableExists(), "a dry run created the schedule")

	stdout, stderr, code = cellttl(with("ensure", append(fams, "-create", "-apply", "-format", "json")...)...)
	require.Equal(t, exitOK, code, stderr)
	var plans struct {
		Table, Schedule struct {
			Table    string `json:"table"`
			Families []struct {
				Family, Want string
				Done         bool
			} `json:"families"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &plans), stdout)
	assert.Equal(t, "t", plans.Table.Table)
	assert.Equal(t, "sched", plans.Schedule.Table)
	require.Len(t, plans.Schedule.Families, 1)
	assert.Equal(t, schedule.Family, plans.Schedule.Families[0].Family)
	assert.Equal(t, "maxage=2h", plans.Schedule.Families[0].Want)
	assert.True(t, plans.Schedule.Families[0].Done)

	stdout, stderr, code = cellttl(with("check", append(fams, "-format", "json")...)...)
	require.Equal(t, exitOK, code, stderr)
	var checked struct {
		Schedule struct {
			Table   string `json:"table"`
			Found   string `json:"found"`
			Matches bool   `json:"matches"`
		} `json:"schedule"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &checked), stdout)
	assert.Equal(t, "sched", checked.Schedule.Table)
	assert.Equal(t, "maxage=2h", checked.Schedule.Found)
	assert.True(t, checked.Schedule.Matches)

	// A longer grace on a family: the schedule's policy is then too short.
	require.NoError(t, e.Admin.SetGCPolicy(ctx, "t", "sess", bigtable.MaxAgePolicy(3*time.Hour)))
	longer := []string{"-family", "sess=grace:3h:onesecond", "-schedule", "sched"}
	stdout, stderr, code = cellttl(with("check", longer...)...)
	assert.Equal(t, exitMismatch, code)
	assert.Regexp(t, `e +Grace\(OneSecond\(\), 3h0m0s\) +maxage=2h +maxage=3h +mismatch`, stdout)
	assert.Contains(t, stderr, "found maxage=2h, want maxage=3h")
	_, stderr, code = cellttl(with("ensure", append(longer, "-apply")...)...)
	require.Equal(t, exitOK, code, stderr)
	_, stderr, code = cellttl(with("check", longer...)...)
	assert.Equal(t, exitOK, code, stderr)
}

// TestEnsureScheduleRefusesFirst checks that ensure -schedule refuses a
// schedule that cannot work before it changes anything, the table's
// families included.
func TestEnsureScheduleRefusesFirst(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-family", "sess=onesecond", "-schedule", "t"}, `cellttl ensure: ttl: invalid option: table "t": the schedule table must be another table`},
		{[]string{"-family", "sess=onesecond", "-family", "v=seqnum:2", "-schedule", "s", "-create"},
			`cellttl ensure: ttl: invalid option: table "t": family "v" (SequenceNumbers(2)) has no cell that expires at an instant`},
	} {
		stdout, stderr, code := cellttl(with("ensure", append(tt.args, "-apply")...)...)
		assert.Equal(t, exitUsage, code, tt.msg)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tt.msg)
	}
	assert.Equal(t, map[string]string{"sess": ""}, policies(t, e.Admin), "nothing changed")
}

// TestMoveRewriteSchedule checks move rewrite -schedule: a schedule
// table that does not exist is refused before anything is written, one
// named as the table is a bad command line, and the rewrite writes the
// entry of every cell it rewrites.
func TestMoveRewriteSchedule(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	ctx := context.Background()
	now := time.Now()
	written := now.Add(-10 * time.Minute).Truncate(time.Millisecond)
	for _, row := range []string{"user#0", "user#1"} {
		put(t, raw, row, "sess", "token", written)
	}
	start := now.Add(-time.Minute).Truncate(time.Second)
	rewrite := func(extra ...string) []string {
		return moveArgs("rewrite", start, append([]string{"-apply"}, extra...)...)
	}

	_, stderr, code := cellttl(rewrite("-schedule", "t")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `cellttl move rewrite: move.New: ttl: invalid option: table "t": the schedule table must be another table: its entries would be written among the data's rows`)

	_, stderr, code = cellttl(rewrite("-schedule", "sched")...)
	assert.Equal(t, exitMismatch, code)
	assert.Equal(t, "cellttl move rewrite: schedule table \"sched\" does not exist\n"+
		"cellttl move rewrite: refused, nothing changed; \"cellttl ensure -schedule sched -create\" creates it\n", stderr)
	row, err := raw.ReadRow(ctx, "user#0")
	require.NoError(t, err)
	assert.Equal(t, bigtable.Time(written), row["sess"][0].Timestamp, "nothing rewritten")

	sched := e.TableForTest(t, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(0)})
	stdout, stderr, code := cellttl(rewrite("-schedule", "sched")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "rewrote 2 old cells in the new encoding")
	assert.Contains(t, stdout, `wrote 2 schedule entries to schedule table "sched", each batch's before its cells`)
	expiry := written.Add(30 * time.Minute)
	for _, r := range []string{"user#0", "user#1"} {
		entry, err := sched.ReadRow(ctx, schedule.Key(r, expiry))
		require.NoError(t, err)
		require.Len(t, entry[schedule.Family], 1, r)
		assert.Equal(t, schedule.Timestamp(expiry), entry[schedule.Family][0].Timestamp, r)
	}
}

// TestStatsSchedule checks stats -schedule: it counts the schedule's
// entries behind and ahead of -now, by when they are due, in text and
// JSON, says how many keys are not entries', and refuses a schedule that
// does not exist or is the table itself.
func TestStatsSchedule(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	ctx := context.Background()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	sched := e.TableForTest(t, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Hour)})
	put := func(key string, ts bigtable.Timestamp) {
		m := bigtable.NewMutation()
		m.Set(schedule.Family, schedule.Column, ts, nil)
		require.NoError(t, sched.Apply(ctx, key, m))
	}
	for _, d := range []time.Duration{-2 * time.Hour, -30 * time.Minute, 10 * time.Minute, 20 * time.Minute, 3 * time.Hour} {
		expiry := now.Add(d)
		put(schedule.Key(fmt.Sprintf("row%v", d), expiry), schedule.Timestamp(expiry))
	}
	put("not-an-entry", bigtable.Time(now))
	args := []string{"-schedule", "sched", "-now", "2030-04-30T09:00:00Z", "-quiet"}

	stdout, stderr, code := cellttl(with("stats", args...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `schedule table "sched" of table "t" at 2030-04-30T09:00:00.000Z: every shard read; GC policy maxage=1h`+"\n")
	assert.Contains(t, stdout, "  entries: 5 (2 behind, due before now: their cells have expired; 3 ahead)\n")
	assert.Contains(t, stdout, "  due: 1h to 1d ago: 1; less than 1h ago: 1; within 1h: 2; in 1h to 1d: 1\n")
	assert.Contains(t, stdout, `  1 row key is not an entry's: is "sched" a schedule table?`)

	stdout, stderr, code = cellttl(with("stats", append(args, "-format", "json", "-family", "sess=grace:1h:onesecond")...)...)
	require.Equal(t, exitOK, code, stderr)
	var st struct {
		Entries, Behind, Ahead int64
		Foreign                int64 `json:"foreign_rows"`
		Due                    []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &st), stdout)
	assert.Equal(t, [4]int64{5, 2, 3, 1}, [4]int64{st.Entries, st.Behind, st.Ahead, st.Foreign})
	require.Len(t, st.Due, 4, "the buckets that count some")
	assert.Equal(t, map[string]any{"from": "2030-04-29T09:00:00Z", "until": "2030-04-30T08:00:00Z", "entries": 1.0}, st.Due[0])
	stdout, _, code = cellttl(with("stats", append(args, "-format", "json", "-all-buckets")...)...)
	require.Equal(t, exitOK, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &st), stdout)
	assert.Len(t, st.Due, 11, "every bucket")

	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-schedule", "missing"}, exitMismatch, `cellttl stats: ttl: unknown column family: schedule table "missing" does not exist`},
		{[]string{"-schedule", "t"}, exitUsage, `cellttl stats: ttl: invalid option: table "t": the schedule table must be another table`},
		{[]string{"-schedule", "sched", "-family", "v=seqnum:1"}, exitUsage, `family "v" (SequenceNumbers(1)) has no cell that expires at an instant`},
	} {
		stdout, stderr, code := cellttl(with("stats", tt.args...)...)
		assert.Equal(t, tt.code, code, tt.msg)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tt.msg)
	}
}

// TestSweepSchedule checks sweep -schedule and -reconcile: a scheduled
// round reports the cells whose rows have entries, a reconcile round only
// the one written without an entry, counted as unscheduled in text and
// JSON; and the refusals of a schedule that cannot work.
func TestSweepSchedule(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour)})
	ctx := context.Background()
	sched := e.TableForTest(t, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Hour)})
	e.TableForTest(t, "short", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(time.Second)})
	at := func(d time.Duration) time.Time { return sweepBase.Add(d) }
	for i, row := range []string{"r0", "r1", "r2"} {
		expiry := at(time.Duration(i+1) * 10 * time.Second)
		put(t, raw, row, "sess", "token", expiry)
		if row != "r2" { // r2 is written without its entry
			require.NoError(t, sched.Apply(ctx, schedule.Key(row, expiry), schedule.Mutation(expiry)))
		}
	}
	sweepClock(t, at(time.Minute))
	args := func(extra ...string) []string {
		return with("sweep", append([]string{"-family", "sess=grace:1h:onesecond", "-since", sweepBase.Format(time.RFC3339), "-quiet"}, extra...)...)
	}
	rows := func(stdout string) (out []string, report map[string]any) {
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &v), line)
			if r, ok := v["report"]; ok {
				report = r.(map[string]any)
				continue
			}
			out = append(out, v["row"].(string))
		}
		return out, report
	}

	stdout, stderr, code := cellttl(args("-schedule", "sched", "-format", "json")...)
	require.Equal(t, exitOK, code, stderr)
	got, report := rows(stdout)
	assert.ElementsMatch(t, []string{"r0", "r1"}, got, "a scheduled round reads the rows the entries name")
	assert.Equal(t, 0.0, report["unscheduled"])

	stdout, stderr, code = cellttl(args("-schedule", "sched", "-reconcile", "-format", "json")...)
	require.Equal(t, exitOK, code, stderr)
	got, report = rows(stdout)
	assert.Equal(t, []string{"r2"}, got, "a reconcile round reports what has no entry")
	assert.Equal(t, 1.0, report["unscheduled"])
	assert.Contains(t, stderr, `cellttl sweep: 1 event had no entry in schedule table "sched": some writer writes without ttl.WithSchedule`)

	_, stderr, code = cellttl(args("-schedule", "sched", "-reconcile")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, ", 1 with no entry in the schedule")

	for _, tt := range []struct {
		name  string
		extra []string
		code  int
		msg   string
	}{
		{"reconcile without a schedule", []string{"-reconcile"}, exitUsage, "cellttl sweep: -reconcile reports what has no entry in the schedule: give the schedule with -schedule TABLE"},
		{"the table itself", []string{"-schedule", "t"}, exitUsage, `schedule table "t" is the table swept`},
		{"missing", []string{"-schedule", "nosuch"}, exitMismatch, "cellttl sweep: schedule table \"nosuch\" does not exist\ncellttl sweep: refused, nothing read; \"cellttl ensure -schedule nosuch -create -apply\" sets it up\n"},
		{"too short a policy", []string{"-schedule", "short"}, exitMismatch, `"cellttl ensure -schedule short -apply" sets up the schedule table's policy`},
	} {
		stdout, stderr, code := cellttl(args(tt.extra...)...)
		assert.Equal(t, tt.code, code, tt.name)
		assert.NotContains(t, stdout, "cell expired", tt.name)
		assert.Contains(t, stderr, tt.msg, tt.name)
	}
}

// TestEnsureScheduleRefusals checks how ensure -schedule ends when a plan
// is refused: a change of the table's families that would lose data
// leaves the schedule unlooked at; a shorter grace, which would delete
// entries a sweep behind by more than it still reads, is refused (exit
// 3, nothing changed) unless -allow-data-loss.
func TestEnsureScheduleRefusals(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour)})
	ctx := context.Background()
	now := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	sched := e.TableForTest(t, "sched", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(24 * time.Hour)})
	old := now.Add(-2 * time.Hour)
	require.NoError(t, sched.Apply(ctx, schedule.Key("r", old), schedule.Mutation(old)))
	schedPolicy := func() string {
		info, err := e.Admin.TableInfo(ctx, "sched")
		require.NoError(t, err)
		return info.FamilyInfos[0].FullGCPolicy.String()
	}

	// A data family whose change would lose cells: refused before the schedule.
	put(t, raw, "r", "sess", "token", now.Add(-45*time.Minute))
	stdout, stderr, code := cellttl(with("ensure", "-family", "sess=default:30m", "-schedule", "sched", "-now", "2030-04-30T09:00:00Z", "-apply", "-quiet")...)
	assert.Equal(t, exitMismatch, code, stderr)
	assert.NotContains(t, stdout, "schedule of table")
	assert.Contains(t, stderr, `cellttl ensure: the schedule table "sched" was not looked at`)
	assert.Equal(t, "age() > 1d", schedPolicy())

	args := []string{"-family", "sess=grace:1h:onesecond", "-schedule", "sched", "-now", "2030-04-30T09:00:00Z", "-quiet"}
	stdout, stderr, code = cellttl(with("ensure", append(args, "-apply")...)...)
	assert.Equal(t, exitMismatch, code, stderr)
	assert.Contains(t, stdout, "schedule of table \"t\":\ntable \"sched\" at 2030-04-30T09:00:00.000Z: 1 change refused, nothing changed")
	assert.Contains(t, stderr, `cellttl ensure: ttl: change would delete or hide existing data: table "sched": family "e" (Grace(OneSecond(), 1h0m0s)): found maxage=1d, want maxage=1h: 1 entry stamped`)
	assert.Contains(t, stderr, "cellttl ensure: the schedule was refused, nothing changed in it; run again with -allow-data-loss to accept the loss")
	assert.Equal(t, "age() > 1d", schedPolicy())

	_, stderr, code = cellttl(with("ensure", append(args, "-apply", "-allow-data-loss")...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "age() > 1h", schedPolicy())
}

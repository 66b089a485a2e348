package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/beam/pipeline"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// ghosts is how many stale entries the schedules hold of rows that do not
// exist (never written, or deleted since): they report nothing.
const ghosts = 40

// newScheduledTables starts an emulator for the test, fills the tables
// named with the same cells (fillSweepTable), of rows rows, and gives each
// a schedule, named by schedTable, that holds what writers given
// ttl.WithSchedule would have written (fillSchedule).
func newScheduledTables(t *testing.T, rows int, names ...string) (*bigtable.AdminClient, map[string]*bigtable.Table) {
	t.Helper()
	admin, tables := newSweepTablesOf(t, rows, names...)
	client, err := pipeline.Table{Project: "proj", Instance: "inst"}.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	for _, name := range names {
		sched := createSchedule(t, admin, client, schedTable(name))
		tables[schedTable(name)] = sched
		fillSchedule(t, tables[name], sched)
	}
	return admin, tables
}

// schedTable returns the name of table's schedule.
func schedTable(table string) string { return table + "_sched" }

// createSchedule creates a schedule table, its family without a GC
// policy (as the swept family clicks has none, which Once checks), and
// returns it.
func createSchedule(t *testing.T, admin *bigtable.AdminClient, client *bigtable.Client, name string) *bigtable.Table {
	t.Helper()
	createTable(t, admin, name, map[string]bigtable.GCPolicy{schedule.Family: nil})
	return client.Open(name)
}

// fillSchedule writes to sched an entry for each row of data and second
// in which a cell of a swept family expires, as writers given
// ttl.WithSchedule write them, and stale entries: of rows that do not
// exist, and of rows at seconds in which none of their cells expires (a
// cell renewed since), in the window and beside it.
func fillSchedule(t *testing.T, data, sched *bigtable.Table) {
	t.Helper()
	var b schedule.Batch
	err := data.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for family, items := range r {
			s, ok := sweepStrategies[family]
			if !ok {
				continue
			}
			for _, it := range items {
				if expiry, ok := s.ExpiresAt(it.Timestamp); ok {
					b.Add(r.Key(), expiry)
				}
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ghosts {
		b.Add(fmt.Sprintf("ghost#%03d", i), sweepFrom.Add(time.Duration(i+1)*time.Minute))
	}
	for i := 0; i < 100; i += 7 { // rows with a Forever cell: nothing expires at these seconds
		b.Add(fmt.Sprintf("user#%04d", i), sweepFrom.Add(time.Duration(i)*time.Minute+500*time.Millisecond))
	}
	if err := b.Write(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
}

// scheduledConfig returns the round's configuration for table, read
// through its schedule.
func scheduledConfig(t *testing.T, table string) pipeline.SweepConfig {
	cfg := sweepConfig(t, table)
	cfg.Schedule = schedTable(table)
	return cfg
}

// TestSweepScheduledMatchesOnce runs the scheduled pipeline at each
// granularity on a table whose schedule names every expiring cell, and
// stale rows too, and checks that its events are, line for line, those of
// Once's scheduled round and of Once's scanning round on the same table;
// that its counts are the scheduled round's, its reads included (the
// entries' with the rows'); and that it read every salt.
func TestSweepScheduledMatchesOnce(t *testing.T) {
	admin, tables := newScheduledTables(t, sweepRows, "events")
	for _, tc := range []struct {
		g      sweep.Granularity
		values bool
		min    int // the fewest events expected
	}{
		{g: sweep.Cell, values: true, min: 500},
		{g: sweep.Column, min: 300},
		{g: sweep.Row, min: 100},
	} {
		t.Run(fmt.Sprintf("%v,values=%v", tc.g, tc.values), func(t *testing.T) {
			cfg := scheduledConfig(t, "events")
			cfg.Granularity, cfg.Values, cfg.WriteTimes = tc.g, tc.values, true
			want, wantLines := sweepOnce(t, admin, tables["events"], cfg)
			scan := cfg
			scan.Schedule = ""
			_, scanLines := sweepOnce(t, admin, tables["events"], scan)
			got, gotLines, counters := runSweep(t, cfg)

			if len(wantLines) < tc.min {
				t.Fatalf("Once delivered %d events; the table should make at least %d", len(wantLines), tc.min)
			}
			if !reflect.DeepEqual(gotLines, wantLines) {
				t.Errorf("the pipeline's %d events differ from Once's scheduled round's %d:\n%s", len(gotLines), len(wantLines), diffLines(gotLines, wantLines))
			}
			if !reflect.DeepEqual(gotLines, scanLines) {
				t.Errorf("the pipeline's %d events differ from Once's scanning round's %d:\n%s", len(gotLines), len(scanLines), diffLines(gotLines, scanLines))
			}
			if got.Events != want.Events || got.Events != int64(len(gotLines)) || counters["events"] != got.Events {
				t.Errorf("events: result %d, file %d, counter %d; Once's %d", got.Events, len(gotLines), counters["events"], want.Events)
			}
			if got.Expired != want.Expired {
				t.Errorf("expired %+v; Once's %+v", got.Expired, want.Expired)
			}
			if got.Schedule != cfg.Schedule || got.EntriesDeleted != 0 || got.Delete || !got.From.Equal(want.From) || !got.Until.Equal(want.Until) {
				t.Errorf("result %+v; want the scheduled round of Once's report %+v", got, want)
			}
			g, w := got.Read, want.Read
			if g.Reads != w.Reads || g.RowsReturned != w.RowsReturned || g.CellsReturned != w.CellsReturned || g.RowsSeen != w.RowsSeen || g.CellsSeen != w.CellsSeen {
				t.Errorf("read %+v; Once's %+v", g, w)
			}
			if g.Shards != schedule.Salts || g.ShardsRead != g.Shards || g.Reads <= g.Shards || !got.Complete() || counters["shards_read"] != schedule.Salts {
				t.Errorf("read %+v (counter %d): want every salt read, its entries then its rows, complete", g, counters["shards_read"])
			}
		})
	}
}

// TestSweepScheduledStale: a schedule whose entries are all stale, of
// rows that do not exist or hold nothing that expires then, reports
// nothing, though it counts the entries read; with Delete, it deletes
// every entry, served, and no cell.
func TestSweepScheduledStale(t *testing.T) {
	admin, tables := newSweepTablesOf(t, 60, "events")
	collectByAge(t, admin, "events")
	client, err := pipeline.Table{Project: "proj", Instance: "inst"}.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sched := createSchedule(t, admin, client, schedTable("events"))
	var b schedule.Batch
	for i := range ghosts {
		b.Add(fmt.Sprintf("ghost#%03d", i), sweepFrom.Add(time.Duration(i+1)*time.Minute))
	}
	// A row whose cell was renewed past the round after its entry was
	// written, beside a Forever cell.
	m := bigtable.NewMutation()
	for col, life := range map[string]ttl.Lifetime{"a": ttl.Until(sweepUntil.Add(time.Hour)), "keep": ttl.Forever} {
		ts, err := ttl.OneSecond().Timestamp(sweepFrom, life)
		if err != nil {
			t.Fatal(err)
		}
		m.Set("sess", col, ts, []byte("v"))
	}
	applyBulk(t, tables["events"], []string{"live#1"}, []*bigtable.Mutation{m})
	b.Add("live#1", sweepFrom.Add(time.Minute))
	if err := b.Write(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	before := allCells(t, tables["events"])
	cfg := scheduledConfig(t, "events")
	cfg.Delete = true
	got, lines, counters := runSweep(t, cfg)
	if got.Events != 0 || len(lines) != 0 || got.Expired.Cells != 0 || got.Deleted != 0 {
		t.Errorf("result %+v, %d lines; want no event and no cell", got, len(lines))
	}
	if got.Read.RowsReturned != b.Len() || !got.Complete() {
		t.Errorf("read %+v; want the %d entries read, and no row returned", got.Read, b.Len())
	}
	if got.EntriesDeleted != int64(b.Len()) || counters["entries_deleted"] != got.EntriesDeleted {
		t.Errorf("deleted %d entries (counter %d); want the %d served", got.EntriesDeleted, counters["entries_deleted"], b.Len())
	}
	if left := allCells(t, sched); left != "" {
		t.Errorf("entries left:\n%s", left)
	}
	if after := allCells(t, tables["events"]); after != before {
		t.Error("a round with only stale entries deleted cells")
	}
}

// TestSweepScheduledDeletesAsOnceDoes sweeps with deletion, through their
// schedules, two tables of the same cells, one with the pipeline and one
// with Once's scheduled round, and checks that they report the same
// events and leave the same cells and the same entries: the served ones
// deleted, those whose second straddles the round's end kept. Then that
// the same round, run again, finds nothing.
func TestSweepScheduledDeletesAsOnceDoes(t *testing.T) {
	admin, tables := newScheduledTables(t, sweepRows, "a", "b")
	collectByAge(t, admin, "a", "b")
	entriesBefore := strings.Count(allCells(t, tables[schedTable("a")]), "\n")
	cfg := scheduledConfig(t, "a")
	cfg.Granularity, cfg.WriteTimes, cfg.Delete = sweep.Column, true, true
	got, gotLines, counters := runSweep(t, cfg)
	cfg.Table.Table, cfg.Schedule = "b", schedTable("b")
	_, wantLines := sweepOnce(t, admin, tables["b"], cfg)

	gotLines, wantLines = inTable(t, gotLines, "t"), inTable(t, wantLines, "t")
	if !reflect.DeepEqual(gotLines, wantLines) {
		t.Errorf("the pipeline's %d events differ from Once's %d:\n%s", len(gotLines), len(wantLines), diffLines(gotLines, wantLines))
	}
	if a, b := allCells(t, tables["a"]), allCells(t, tables["b"]); a != b {
		t.Errorf("the tables differ after the deletions:\npipeline:\n%s\nOnce:\n%s", a, b)
	}
	sa, sb := allCells(t, tables[schedTable("a")]), allCells(t, tables[schedTable("b")])
	if sa != sb {
		t.Errorf("the schedules differ after the deletions:\npipeline:\n%s\nOnce:\n%s", sa, sb)
	}
	left := strings.Count(sa, "\n")
	if got.Deleted < 100 || counters["rows_deleted"] != got.Deleted || got.EntriesDeleted < int64(got.Deleted) ||
		counters["entries_deleted"] != got.EntriesDeleted || int64(entriesBefore-left) != got.EntriesDeleted {
		t.Errorf("deleted in %d rows (counter %d), %d entries (counter %d) of %d, %d left",
			got.Deleted, counters["rows_deleted"], got.EntriesDeleted, counters["entries_deleted"], entriesBefore, left)
	}
	// The entry of a cell that expires at Until itself: its second ends
	// after Until, and names cells the next round reports.
	straddling := schedule.Key("user#0003", sweepUntil)
	if !strings.Contains(sa, fmt.Sprintf("%q", straddling)) {
		t.Errorf("the straddling entry %q was deleted", straddling)
	}
	// No served entry is left: none whose second lies within the window,
	// begun after From and ended by Until. (One begun before From may
	// name a cell a sweep further behind needs.)
	err := tables[schedTable("a")].ReadRows(context.Background(), schedule.Ranges(sweepFrom, sweepUntil), func(r bigtable.Row) bool {
		e, err := schedule.Parse(r.Key())
		if err != nil || e.Slot.After(sweepFrom) && !e.Slot.Add(schedule.Slot).After(sweepUntil) {
			t.Errorf("entry %q left (%v)", r.Key(), err)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}

	again := scheduledConfig(t, "a")
	again.Delete = true
	r, lines, _ := runSweep(t, again)
	if r.Events != 0 || len(lines) != 0 || r.Deleted != 0 || r.Expired.Cells != 0 || !r.Complete() {
		t.Errorf("the round again: %+v, %d lines; want nothing", r, len(lines))
	}
}

// TestSweepScheduledRefused: a schedule that is missing, not a schedule,
// or the table swept is refused while the pipeline is built; a key in it
// that is no entry fails the job, which reports nothing.
func TestSweepScheduledRefused(t *testing.T) {
	admin, _ := newSweepTablesOf(t, 20, "events")
	createTable(t, admin, "other", map[string]bigtable.GCPolicy{"x": nil})
	for _, tc := range []struct {
		name     string
		schedule string
		want     string
		is       error
	}{
		{"missing", "nope", `schedule table "nope": policy: table not found: table "nope" does not exist`, policy.ErrTableNotFound},
		{"not a schedule", "other", `schedule table "other" has no family "e"`, policy.ErrFamilyMismatch},
		{"the table swept", "events", `table "events": the schedule table must be another table`, ttl.ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sweepConfig(t, "events")
			cfg.Schedule = tc.schedule
			_, s := beam.NewPipelineWithRoot()
			_, err := pipeline.Sweep(context.Background(), s, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v; want one wrapping %v", err, tc.is)
			}
		})
	}
	t.Run("a key that is no entry", func(t *testing.T) {
		client, err := pipeline.Table{Project: "proj", Instance: "inst"}.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		sched := createSchedule(t, admin, client, schedTable("events"))
		m := bigtable.NewMutation()
		m.Set(schedule.Family, schedule.Column, 0, nil)
		// The prefix of an entry of user#0001's, in the window, and a row
		// of another salt.
		key := schedule.Key("user#0001", sweepFrom.Add(time.Minute))
		other := "other"
		for schedule.Salt(other) == schedule.Salt("user#0001") {
			other += "+"
		}
		bad := key[:len(key)-len("user#0001")] + other
		if err := sched.Apply(context.Background(), bad, m); err != nil {
			t.Fatal(err)
		}
		err = runFailing(t, scheduledConfig(t, "events"))
		if err == nil || !strings.Contains(err.Error(), "holds a key that is no entry") {
			t.Errorf("error %v; want the bad key's", err)
		}
	})
}

// TestSweepScheduledDeleteFails: a scheduled job whose deletions fail
// fails. When the rows' deletions fail (a family deleted once the events'
// file is opened), no entry is deleted: the same round run again reads
// the same rows. Prism may then run the entries' step though the rows'
// failed, and report its refusal (afterDeletedFn) first. When the
// entries' deletions fail (the schedule table deleted then), the job
// fails after the rows' cells are deleted.
func TestSweepScheduledDeleteFails(t *testing.T) {
	for _, tc := range []struct {
		name     string
		delete   func(admin *bigtable.AdminClient) error
		want, or string
	}{
		{"rows", func(admin *bigtable.AdminClient) error {
			return admin.DeleteColumnFamily(context.Background(), "events", "g")
		}, "deleting the expired cells of row", "the expired cells of a row were not deleted: no entry is deleted"},
		{"entries", func(admin *bigtable.AdminClient) error {
			return admin.DeleteTable(context.Background(), schedTable("events"))
		}, `entries served from schedule table "events_sched"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admin, tables := newScheduledTables(t, 100, "events")
			collectByAge(t, admin, "events")
			entries := allCells(t, tables[schedTable("events")])
			cfg := scheduledConfig(t, "events")
			cfg.Delete, cfg.Output = true, "hook://events.jsonl"
			setHook(t, func() error { return tc.delete(admin) }, nil)
			err := runFailing(t, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) && (tc.or == "" || !strings.Contains(err.Error(), tc.or)) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
			if tc.name == "rows" {
				if left := allCells(t, tables[schedTable("events")]); left != entries {
					t.Error("entries were deleted though the rows' deletions failed")
				}
			}
		})
	}
}

// TestSweepScheduledKeepsOthersEntries: a round that sweeps some of the
// families GC collects by age deletes the expired cells it reports but
// none of the entries it served, which name rows, not families: the
// other families' scheduled sweeps still need them.
func TestSweepScheduledKeepsOthersEntries(t *testing.T) {
	admin, tables := newScheduledTables(t, sweepRows, "events")
	// An age the test's cells never reach, so that GC, now started on the
	// real clock, deletes nothing.
	if err := admin.SetGCPolicy(context.Background(), "events", "clicks", bigtable.MaxAgePolicy(1_000_000*time.Hour)); err != nil {
		t.Fatal(err)
	}
	before := allCells(t, tables[schedTable("events")])
	cfg := scheduledConfig(t, "events")
	cfg.Delete = true
	cfg.Families = map[string]string{"sess": sweepSpecs["sess"]}
	got, lines, _ := runSweep(t, cfg)
	if len(lines) == 0 || got.Deleted == 0 {
		t.Fatalf("%d events, deleted in %d rows: want the expired sessions reported and deleted", len(lines), got.Deleted)
	}
	if got.EntriesDeleted != 0 {
		t.Errorf("deleted %d entries, want none: family clicks is aged and not swept", got.EntriesDeleted)
	}
	if after := allCells(t, tables[schedTable("events")]); after != before {
		t.Error("the schedule changed")
	}
}

// collectByAge gives the swept families of tables a GC policy by age and
// the others a version limit, as a table whose families all live by time
// beside one of versions: a sweep that deletes then owns the entries it
// serves (sweep.OwnsEntries), where a family with no GC, such as one in
// a move, may still need them.
func collectByAge(t *testing.T, admin *bigtable.AdminClient, tables ...string) {
	t.Helper()
	for _, table := range tables {
		for _, family := range []string{"sess", "clicks", "g", "meta"} {
			p := bigtable.MaxVersionsPolicy(1)
			if sweepSpecs[family] != "" {
				p = bigtable.MaxAgePolicy(1_000_000 * time.Hour)
			}
			if err := admin.SetGCPolicy(context.Background(), table, family, p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

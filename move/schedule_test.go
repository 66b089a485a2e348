package move_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// scheduleTable creates the schedule table "s" beside x's table.
func (x *moveTable) scheduleTable() *bigtable.Table {
	return x.e.TableForTest(x.t, "s", map[string]bigtable.GCPolicy{schedule.Family: schedule.Policy(0)})
}

// entries returns the schedule's entries: each key with its cell's
// timestamp.
func entries(t *testing.T, sched bigtable.TableAPI) map[string]bigtable.Timestamp {
	t.Helper()
	out := map[string]bigtable.Timestamp{}
	err := sched.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, it := range r[schedule.Family] {
			out[r.Key()] = it.Timestamp
		}
		return true
	})
	require.NoError(t, err)
	return out
}

// entry returns the key and timestamp of the entry of row's cells that
// expire at expiry.
func entry(row string, expiry time.Time) (string, bigtable.Timestamp) {
	return schedule.Key(row, expiry), schedule.Timestamp(expiry)
}

// TestRewriteWritesEntries checks that every cell the rewrite moves gets
// its schedule entry, at its expiry, and that a cell expired or kept where
// it is gets none, nor does a dry run write any.
func TestRewriteWritesEntries(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	sched := x.scheduleTable()
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(2 * time.Hour)}
	x.put("a", "c", "v", testkit.MS(start.Add(-time.Hour)))      // expires at +1h
	x.put("a", "d", "v", testkit.MS(start.Add(-time.Hour)))      // the same expiry: one entry
	x.put("b", "c", "v", testkit.MS(start.Add(-30*time.Minute))) // expires at +1h30m
	x.put("z", "c", "v", testkit.MS(start.Add(-3*time.Hour)))    // expired at -1h

	opts := x.opts(time.Minute)
	opts.Schedule, opts.ScheduleTable = sched, "s"
	opts.DryRun = true
	r, err := x.family(x.raw, m, opts).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), r.Rewritten)
	assert.Empty(t, entries(t, sched), "a dry run writes no entry")
	assert.NotContains(t, r.Actions[len(r.Actions)-1], "schedule")

	opts.DryRun = false
	r, err = x.family(x.raw, m, opts).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{3, 0}, [2]int64{r.Rewritten, r.Kept})
	ka, ta := entry("a", start.Add(time.Hour))
	kb, tb := entry("b", start.Add(90*time.Minute))
	assert.Equal(t, map[string]bigtable.Timestamp{ka: ta, kb: tb}, entries(t, sched))
	assert.Contains(t, r.Actions, `wrote 2 schedule entries to schedule table "s", each batch's before its cells`)
}

// flakySchedule is a schedule table whose writes fail while broken is set.
type flakySchedule struct {
	bigtable.TableAPI
	broken atomic.Bool
	writes atomic.Int64
}

var errScheduleDown = errors.New("schedule down")

func (f *flakySchedule) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	f.writes.Add(1)
	if f.broken.Load() {
		return errScheduleDown
	}
	return f.TableAPI.Apply(ctx, row, m, opts...)
}

func (f *flakySchedule) ApplyBulk(ctx context.Context, rows []string, ms []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	f.writes.Add(1)
	if f.broken.Load() {
		return nil, errScheduleDown
	}
	return f.TableAPI.ApplyBulk(ctx, rows, ms, opts...)
}

// TestRewriteScheduleFails checks that a failed entry write rewrites no
// cell of its batch and stops the rewrite, and that a run given the same
// checkpoint writes the entries, then rewrites every cell once.
func TestRewriteScheduleFails(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	sched := &flakySchedule{TableAPI: x.scheduleTable()}
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(2 * time.Hour)}
	rows := []string{"a", "b", "c"}
	for i, row := range rows {
		x.put(row, "c", row, testkit.MS(start.Add(-time.Duration(i+1)*time.Minute)))
	}
	file := scan.FileCheckpoint(filepath.Join(t.TempDir(), "rewrite.json"))
	opts := x.opts(time.Minute)
	opts.Schedule, opts.ScheduleTable, opts.Checkpoint = sched, "s", file
	tbl := testkit.Tablets{TableAPI: x.raw} // one shard
	sched.broken.Store(true)
	r, err := x.family(tbl, m, opts).Rewrite(ctx)
	require.ErrorIs(t, err, errScheduleDown)
	assert.Contains(t, err.Error(), `the rewrite stopped after 0 of 1 shards (resume it with the same checkpoint): shard ["", end): move: writing 3 schedule entries to schedule table "s" before rewriting 3 cells: none of them was rewritten: `)
	assert.Equal(t, int64(0), r.Rewritten)
	for i, row := range rows {
		assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-time.Duration(i+1) * time.Minute))}, x.stamps(row, "c"), "row %s unchanged", row)
	}

	sched.broken.Store(false)
	r, err = x.family(tbl, m, opts).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), r.Rewritten, "every cell counted once")
	want := map[string]bigtable.Timestamp{}
	for i, row := range rows {
		expiry := start.Add(-time.Duration(i+1)*time.Minute + 2*time.Hour)
		assert.Equal(t, []bigtable.Timestamp{testkit.MS(expiry)}, x.stamps(row, "c"), "row %s moved once", row)
		k, ts := entry(row, expiry)
		want[k] = ts
	}
	assert.Equal(t, want, entries(t, sched))
}

// TestStartWritesEntries checks that Start's rewrite of misplaced cells
// writes their entries, and none for a Forever cell; and that a crash
// after the batch was recorded, before its entries, settles them on the
// next run.
func TestStartWritesEntries(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, bigtable.MaxAgePolicy(48*time.Hour))
	sched := &flakySchedule{TableAPI: x.scheduleTable()}
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}
	x.put("b", "c", "long", testkit.MS(start.Add(23*time.Hour)))
	x.put("c", "c", "forever", ttl.MaxTimestamp-ms48h())
	x.put("d", "c", "longer", testkit.MS(start.Add(25*time.Hour)))

	file := scan.FileCheckpoint(filepath.Join(t.TempDir(), "start.json"))
	opts := x.opts(-time.Hour)
	opts.Scan.Workers = 1
	opts.Schedule, opts.ScheduleTable, opts.Checkpoint = sched, "s", file
	sched.broken.Store(true)
	_, err := x.family(testkit.Tablets{TableAPI: x.raw}, m, opts).Start(ctx)
	require.ErrorIs(t, err, errScheduleDown)
	assert.Contains(t, err.Error(), "(run Start again with the same checkpoint)")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(23 * time.Hour))}, x.stamps("b", "c"), "no cell rewritten")
	assert.Equal(t, "age() > 2d", x.policy(), "the policy is unchanged")

	sched.broken.Store(false)
	r, err := x.family(testkit.Tablets{TableAPI: x.raw}, m, opts).Start(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), r.Rewritten)
	kb, tb := entry("b", start.Add(71*time.Hour))
	kd, td := entry("d", start.Add(73*time.Hour))
	assert.Equal(t, map[string]bigtable.Timestamp{kb: tb, kd: td}, entries(t, sched), "a Forever cell has no entry")
	assert.Contains(t, r.Actions, `wrote 2 schedule entries to schedule table "s", each batch's before its cells`)
}

// TestNewRefusesSchedule checks that a schedule the move cannot use is
// refused before anything is read.
func TestNewRefusesSchedule(t *testing.T) {
	x := newMoveTable(t, nil)
	sched := x.scheduleTable()
	toTime := ttl.Move{To: ttl.OneSecond(), Start: start}
	for _, tt := range []struct {
		name string
		m    ttl.Move
		opts move.Options
		want error
		msg  string
	}{
		{"the data table", toTime, move.Options{Schedule: sched, ScheduleTable: "t"}, ttl.ErrInvalidOption, `table "t": the schedule table must be another table`},
		{"to sequence numbers, the old cells kept for ever", ttl.Move{To: ttl.SequenceNumbers(2), Start: start}, move.Options{Schedule: sched},
			ttl.ErrInvalidOption, `family "f": under Move{`},
		{"a name without a table", toTime, move.Options{ScheduleTable: "s"}, ttl.ErrNilArgument, `Options.ScheduleTable "s" names a schedule table, but Options.Schedule is nil`},
		{"a nil table", toTime, move.Options{Schedule: (*bigtable.Table)(nil), ScheduleTable: "s"}, ttl.ErrNilArgument, "Options.Schedule is nil"},
	} {
		_, err := move.New(x.e.Admin, x.raw, "t", "f", tt.m, tt.opts)
		if assert.ErrorIs(t, err, tt.want, tt.name) {
			assert.Contains(t, err.Error(), tt.msg, tt.name)
		}
	}
}

// TestRewriteRowScheduled checks that RewriteRowScheduled writes the
// entries of the cells it rewrites before them, and that a failed entry
// write rewrites nothing and a retry of the row rewrites every cell.
func TestRewriteRowScheduled(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	sched := &flakySchedule{TableAPI: x.scheduleTable()}
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(2 * time.Hour)}
	x.put("r", "c", "v", testkit.MS(start.Add(-time.Hour)))
	x.put("r", "d", "v", testkit.MS(start.Add(-90*time.Minute)))
	x.put("r", "e", "v", testkit.MS(start.Add(-3*time.Hour))) // expired
	read := func() bigtable.Row {
		row, err := x.raw.ReadRow(ctx, "r", bigtable.RowFilter(move.RewriteFilter(m, "f")))
		require.NoError(t, err)
		return row
	}
	now := start.Add(time.Minute)

	n, err := move.RewriteRowScheduled(ctx, x.raw, sched, "f", m, read(), now, true)
	require.NoError(t, err)
	assert.Equal(t, move.Counts{Rewritten: 2, Expired: 1}, n)
	assert.Zero(t, sched.writes.Load(), "a dry run writes no entry")

	sched.broken.Store(true)
	n, err = move.RewriteRowScheduled(ctx, x.raw, sched, "f", m, read(), now, false)
	require.ErrorIs(t, err, errScheduleDown)
	assert.Contains(t, err.Error(), `move: row "r": writing 2 schedule entries before rewriting its cells: none of them was rewritten: `)
	assert.Equal(t, move.Counts{}, n)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-time.Hour))}, x.stamps("r", "c"), "nothing rewritten")

	sched.broken.Store(false)
	n, err = move.RewriteRowScheduled(ctx, x.raw, sched, "f", m, read(), now, false)
	require.NoError(t, err)
	assert.Equal(t, move.Counts{Rewritten: 2, Expired: 1}, n)
	kc, tc := entry("r", start.Add(time.Hour))
	kd, td := entry("r", start.Add(30*time.Minute))
	assert.Equal(t, map[string]bigtable.Timestamp{kc: tc, kd: td}, entries(t, sched))
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(time.Hour))}, x.stamps("r", "c"))
}

// TestStartReschedulesOldCells (issue 33.2): a move whose Old gives the
// old cells another expiry than their old rule (shorter, or one where
// they had none) writes, at Start with a schedule, each old cell's entry
// at the expiry the move gives it, which a sweep reading the schedule
// needs; a dry run writes none, and a move that keeps the old expiry
// writes none.
func TestStartReschedulesOldCells(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		m       ttl.Move
		entries int
	}{
		{"Default(1h) to OneSecond, Old: For(20m)",
			ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.OneSecond(), Start: start, Old: ttl.For(20 * time.Minute)}, 2},
		{"no strategy to OneSecond, Old: For(20m)",
			ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(20 * time.Minute)}, 2},
		{"no strategy to SequenceNumbers, Old: For(20m)",
			ttl.Move{To: ttl.SequenceNumbers(2), Start: start, Old: ttl.For(20 * time.Minute)}, 2},
		{"Default(1h) to OneSecond, the old rule kept", ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.OneSecond(), Start: start}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := newMoveTable(t, nil)
			sched := x.scheduleTable()
			x.put("a", "c", "v", testkit.MS(start.Add(-50*time.Minute))) // old expiry start+10m under Default(1h)
			x.put("b", "c", "v", testkit.MS(start.Add(-45*time.Minute)))
			opts := x.opts(-40 * time.Minute)
			opts.Schedule, opts.ScheduleTable = sched, "s"
			opts.DryRun = true
			_, err := x.family(x.raw, tt.m, opts).Start(ctx)
			require.NoError(t, err)
			assert.Empty(t, entries(t, sched), "a dry run writes no entry")

			opts.DryRun = false
			r, err := x.family(x.raw, tt.m, opts).Start(ctx)
			require.NoError(t, err)
			if tt.entries == 0 {
				assert.Empty(t, entries(t, sched))
				return
			}
			ka, ta := entry("a", start.Add(-30*time.Minute))
			kb, tb := entry("b", start.Add(-25*time.Minute))
			assert.Equal(t, map[string]bigtable.Timestamp{ka: ta, kb: tb}, entries(t, sched))
			assert.Contains(t, r.Actions, `wrote 2 schedule entries to schedule table "s" at the expiry the move gives the old cells`)
		})
	}
}

// TestStartRescheduledSweeps (issue 33.2): cells written under
// Default(1h) by a table with a schedule, then moved to OneSecond with
// Old: For(20m) by Start with the schedule, expire 40 minutes sooner: a
// sweep reading the schedule reports them when a scanning sweep does,
// and a reconcile finds nothing unscheduled.
func TestStartRescheduledSweeps(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	sched := x.scheduleTable()
	x.clock.Set(start.Add(-50 * time.Minute))
	tbl, err := ttl.NewTable(x.raw, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)}, ttl.WithSchedule(sched), ttl.WithClock(x.clock.Now))
	require.NoError(t, err)
	require.NoError(t, tbl.Apply(ctx, "a", testkit.Set("f", "c", "v", ttl.Default)))

	m := ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.OneSecond(), Start: start, Old: ttl.For(20 * time.Minute)}
	opts := x.opts(-40 * time.Minute)
	opts.Schedule, opts.ScheduleTable = sched, "s"
	_, err = x.family(x.raw, m, opts).Start(ctx)
	require.NoError(t, err)

	x.clock.Set(start.Add(-20 * time.Minute))
	sweeps := map[string]sweep.Options{
		"scanning":  {},
		"scheduled": {Schedule: sched, ScheduleTable: "s"},
		"reconcile": {Schedule: sched, ScheduleTable: "s", Reconcile: true},
	}
	for name, o := range sweeps {
		o.Since, o.Margin, o.Scan.Now = start.Add(-time.Hour), time.Second, x.clock.Now
		s, err := sweep.New(x.e.Admin, x.raw, "t", map[string]ttl.Strategy{"f": m}, o)
		require.NoError(t, err, name)
		var got []string
		r, err := s.Once(ctx, func(_ context.Context, events []sweep.Event) error {
			for _, e := range events {
				got = append(got, e.Row+" "+e.Expired.UTC().Format(time.RFC3339))
			}
			return nil
		})
		require.NoError(t, err, name)
		if name == "reconcile" {
			assert.Empty(t, got, "reconcile: nothing unscheduled")
			assert.Zero(t, r.Unscheduled, name)
			continue
		}
		assert.Equal(t, []string{"a " + start.Add(-30*time.Minute).UTC().Format(time.RFC3339)}, got, name)
	}
}

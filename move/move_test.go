package move_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// start is the moves' start in these tests: a day after testkit.Base.
var start = testkit.Base.Add(24 * time.Hour)

// moveTable is a table "t" with one family "f" of the given policy on a
// fresh emulator, and a fake clock for the steps.
type moveTable struct {
	t     *testing.T
	e     *emulator.Emulator
	raw   *bigtable.Table
	clock *testkit.Clock
}

func newMoveTable(t *testing.T, p bigtable.GCPolicy) *moveTable {
	e := emulator.StartForTest(t)
	return &moveTable{t, e, e.TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": p}), testkit.NewClock(testkit.Base)}
}

// family returns the steps of moving family "f" of "t", read through
// data, by m.
func (x *moveTable) family(data bigtable.TableAPI, m ttl.Move, opts move.Options) *move.Family {
	x.t.Helper()
	f, err := move.New(x.e.Admin, data, "t", "f", m, opts)
	require.NoError(x.t, err)
	return f
}

// put writes a raw cell of row.
func (x *moveTable) put(row, column, value string, ts bigtable.Timestamp) {
	x.t.Helper()
	m := bigtable.NewMutation()
	m.Set("f", column, ts, []byte(value))
	require.NoError(x.t, x.raw.Apply(context.Background(), row, m))
}

// stamps returns the timestamps of row's cells of column, newest first.
func (x *moveTable) stamps(row, column string) []bigtable.Timestamp {
	x.t.Helper()
	var out []bigtable.Timestamp
	for _, it := range testkit.RawRow(x.t, x.raw, row)["f"] {
		if it.Column == "f:"+column {
			out = append(out, it.Timestamp)
		}
	}
	return out
}

func (x *moveTable) opts(at time.Duration) move.Options {
	x.clock.Set(start.Add(at))
	return move.Options{Scan: scan.Options{Now: x.clock.Now}}
}

// policy returns the GC policy of "f" as the client prints it.
func (x *moveTable) policy() string {
	x.t.Helper()
	info, err := x.e.Admin.TableInfo(context.Background(), "t")
	require.NoError(x.t, err)
	for _, f := range info.FamilyInfos {
		if f.Name == "f" {
			return f.FullGCPolicy.String()
		}
	}
	x.t.Fatal(`no family "f"`)
	return ""
}

// TestMoveToolsRealToOneSecond takes a family of real timestamps through a
// whole move: plan, start, a refused finish, a rewrite, the finish.
func TestMoveToolsRealToOneSecond(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(time.Hour), Skew: time.Minute}
	x.put("a", "c", "expired", testkit.MS(start.Add(-4*time.Hour)))
	x.put("b", "c", "live", testkit.MS(start.Add(-30*time.Minute)))
	x.put("b", "d", "live-too", testkit.MS(start.Add(-10*time.Minute)))

	r, err := x.family(x.raw, m, x.opts(-2*time.Hour)).Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, "never", policy.Describe(r.Found))
	assert.Equal(t, "maxage=1h", policy.Describe(r.Window))
	assert.Equal(t, "maxage=1s", policy.Describe(r.Final))
	assert.False(t, r.Started)
	assert.Equal(t, int64(2), r.OldLive.Cells, "judged two hours before the start")
	assert.Equal(t, int64(1), r.OldExpired.Cells)
	assert.Equal(t, start.Add(time.Hour+time.Minute), r.EndsBy)
	assert.True(t, r.Read.Complete())
	assert.Contains(t, r.Blockers, "the move has not started: it cannot finish before "+start.Format("2006-01-02T15:04:05.000Z"))

	statuses, err := checkPolicies(ctx, x.e.Admin, "t", map[string]ttl.Strategy{"f": m})
	assert.ErrorIs(t, err, policy.ErrFamilyMismatch)
	assert.Contains(t, statuses[0].String(), "found never, want maxage=1h (or maxage=1s once the move is finished)")

	_, err = x.family(x.raw, m, move.Options{DryRun: true, Scan: scan.Options{Now: x.clock.Now}}).Start(ctx)
	require.NoError(t, err)
	assert.Equal(t, "", x.policy(), "a dry run changes nothing")
	r, err = x.family(x.raw, m, x.opts(-time.Hour)).Start(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"GC policy never → maxage=1h"}, r.Actions)
	assert.Equal(t, "age() > 1h", x.policy())
	_, err = checkPolicies(ctx, x.e.Admin, "t", map[string]ttl.Strategy{"f": m})
	assert.NoError(t, err)

	_, err = x.family(x.raw, m, x.opts(-time.Minute)).Finish(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "not started")
	_, err = x.family(x.raw, m, x.opts(time.Minute)).Finish(ctx)
	assert.ErrorIs(t, err, policy.ErrDataLoss, "two old cells live until +30m and +50m")
	_, err = x.family(x.raw, m, x.opts(-time.Minute)).Rewrite(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "a rewrite waits for the start")

	r, err = x.family(x.raw, m, x.opts(time.Minute)).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), r.Rewritten)
	assert.Equal(t, int64(0), r.Kept)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(30 * time.Minute))}, x.stamps("b", "c"), "stored as its expiry")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(50 * time.Minute))}, x.stamps("b", "d"))
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-4 * time.Hour))}, x.stamps("a", "c"), "an expired cell is left to GC")

	// A second rewrite finds no old cell to rewrite.
	r, err = x.family(x.raw, m, x.opts(2*time.Minute)).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(0), r.Rewritten)

	r, err = x.family(x.raw, m, x.opts(2*time.Minute)).Finish(ctx)
	require.NoError(t, err)
	assert.Equal(t, "age() > 1000000", x.policy())
	assert.Equal(t, "maxage=1s", policy.Describe(r.Found))
	for _, s := range []ttl.Strategy{m, ttl.OneSecond()} {
		_, err = checkPolicies(ctx, x.e.Admin, "t", map[string]ttl.Strategy{"f": s})
		assert.NoError(t, err, "%v", s)
	}

	// The cells read the same through the move and through OneSecond.
	for _, s := range []ttl.Strategy{m, ttl.OneSecond()} {
		tbl, err := ttl.NewTable(x.raw, map[string]ttl.Strategy{"f": s}, ttl.WithClock(x.clock.Now))
		require.NoError(t, err)
		row, err := tbl.ReadRow(ctx, "b")
		require.NoError(t, err)
		assert.Equal(t, []string{"f:c=live", "f:d=live-too"}, testkit.Values(row), "%v", s)
	}
}

// TestRewriteMoveKeepsNewerCells checks that a rewrite never lets an old
// value outrank a newer one of its column, and never rewrites a cell a
// writer changed.
func TestRewriteMoveKeepsNewerCells(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(2 * time.Hour)}
	x.put("r", "c", "old", testkit.MS(start.Add(-time.Hour)))       // would be stored at +1h
	x.put("r", "c", "newer", testkit.MS(start.Add(30*time.Minute))) // a OneSecond cell written after the start, expiring at +30m
	x.put("r", "d", "old-d", testkit.MS(start.Add(-time.Hour)))

	r, err := x.family(x.raw, m, x.opts(time.Minute)).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.Rewritten)
	assert.Equal(t, int64(1), r.Kept)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(30 * time.Minute)), testkit.MS(start.Add(-time.Hour))}, x.stamps("r", "c"),
		"the old value stays below the newer one")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(time.Hour))}, x.stamps("r", "d"))
}

// failingCheckpoint saves through cp until failAfter saves, then fails:
// the process dies there.
type failingCheckpoint struct {
	scan.Checkpoint
	failAfter int
	saves     int
}

var errCrash = errors.New("crash")

func (c *failingCheckpoint) Save(ctx context.Context, r *scan.Record) error {
	if c.saves++; c.saves > c.failAfter {
		return errCrash
	}
	return c.Checkpoint.Save(ctx, r)
}

// TestRewriteMoveResumes interrupts a rewrite at each of its first
// checkpoint saves (the process dies: before a batch of changes is
// recorded, after it is made, at the end of a shard), resumes it with the
// same checkpoint, and checks that every cell moved once and was counted
// once.
func TestRewriteMoveResumes(t *testing.T) {
	ctx := context.Background()
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(2 * time.Hour)}
	rows := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for failAfter := 1; failAfter <= 12; failAfter++ {
		x := newMoveTable(t, nil)
		for i, row := range rows {
			x.put(row, "c", row, testkit.MS(start.Add(-time.Duration(i+1)*time.Minute)))
		}
		tbl := testkit.Tablets{TableAPI: x.raw, Keys: []string{"b", "d", "f", "h"}} // 5 shards
		file := scan.FileCheckpoint(filepath.Join(t.TempDir(), "rewrite.json"))
		opts := x.opts(time.Minute)
		opts.Scan.Workers = 1
		opts.Checkpoint = &failingCheckpoint{Checkpoint: file, failAfter: failAfter}
		first, err := x.family(tbl, m, opts).Rewrite(ctx)
		require.ErrorIs(t, err, errCrash, "after %d saves", failAfter)
		assert.False(t, first.Read.Complete())

		opts.Checkpoint = file
		second, err := x.family(tbl, m, opts).Rewrite(ctx)
		require.NoError(t, err)
		assert.True(t, second.Read.Complete())
		assert.Equal(t, int64(len(rows)), second.Rewritten, "failAfter=%d: every cell counted once, across both runs", failAfter)
		for i, row := range rows {
			want := testkit.MS(start.Add(-time.Duration(i+1)*time.Minute + 2*time.Hour))
			assert.Equal(t, []bigtable.Timestamp{want}, x.stamps(row, "c"), "failAfter=%d: row %s moved once", failAfter, row)
		}
	}
}

// TestStartMoveRewritesMisplacedCells moves a DefaultExpiration family
// holding a future-stamped cell: the plan finds it, the start rewrites it
// once, even when interrupted and run again.
func TestStartMoveRewritesMisplacedCells(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, bigtable.MaxAgePolicy(48*time.Hour))
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}
	x.put("a", "c", "plain", testkit.MS(start.Add(-time.Hour)))
	x.put("b", "c", "long", testkit.MS(start.Add(23*time.Hour)))             // For(72h) an hour before the start
	x.put("c", "c", "forever", ttl.MaxTimestamp-ms48h())                     // Forever
	x.put("d", "c", "longer", testkit.MS(start.Add(24*time.Hour+time.Hour))) // and another

	r, err := x.family(x.raw, m, x.opts(-2*time.Hour)).Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), r.Misplaced.Cells)
	tool, err := policy.New(x.e.Admin, x.raw, "t", map[string]ttl.Strategy{"f": m}, policy.Options{DryRun: true, Scan: scan.Options{Now: x.clock.Now}})
	require.NoError(t, err)
	_, err = tool.Ensure(ctx)
	assert.NoError(t, err, "maxage=2d is the move's own policy: nothing to change")

	_, err = x.family(x.raw, m, x.opts(-time.Hour)).Start(ctx)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "rewriting misplaced cells needs a checkpoint")

	file := scan.FileCheckpoint(filepath.Join(t.TempDir(), "start.json"))
	opts := x.opts(-time.Hour)
	opts.Scan.Workers = 1
	opts.Checkpoint = &failingCheckpoint{Checkpoint: file, failAfter: 2} // the record, the batch; dies once it is made
	_, err = x.family(testkit.Tablets{TableAPI: x.raw}, m, opts).Start(ctx)
	require.ErrorIs(t, err, errCrash)
	opts.Checkpoint = file
	r, err = x.family(testkit.Tablets{TableAPI: x.raw}, m, opts).Start(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), r.Rewritten, "the resumed run finds the recorded batch made, and counts it")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(23*time.Hour + 48*time.Hour))}, x.stamps("b", "c"), "moved once, to its expiry")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(25*time.Hour + 48*time.Hour))}, x.stamps("d", "c"))
	assert.Equal(t, []bigtable.Timestamp{ttl.MaxTimestamp}, x.stamps("c", "c"), "Forever is OneSecond's Forever")
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-time.Hour))}, x.stamps("a", "c"))

	// Once Start's checkpoint records its work done, the cells above
	// the boundary are the rewritten ones, and another start does nothing.
	plan := x.opts(-time.Minute)
	plan.Checkpoint = file
	r, err = x.family(x.raw, m, plan).Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(0), r.Misplaced.Cells)
	assert.Equal(t, int64(3), r.New.Cells)
	r, err = x.family(testkit.Tablets{TableAPI: x.raw}, m, plan).Start(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(0), r.Rewritten)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(23*time.Hour + 48*time.Hour))}, x.stamps("b", "c"))
}

func ms48h() bigtable.Timestamp { return bigtable.Timestamp((48 * time.Hour).Microseconds()) }

// TestRewriteMoveCountsWhatItKeeps: a live old cell whose new timestamp
// would fall on the old side is kept where it is, and counted as kept, as
// RewriteRow counts it.
func TestRewriteMoveCountsWhatItKeeps(t *testing.T) {
	ctx := context.Background()
	x := newMoveTable(t, nil)
	m := ttl.Move{To: ttl.DefaultExpiration(48 * time.Hour), Start: start, Old: ttl.For(30 * time.Minute)}
	x.put("r", "c", "v", testkit.MS(start.Add(-15*time.Minute)))
	r, err := x.family(x.raw, m, x.opts(10*time.Minute)).Rewrite(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{0, 1}, [2]int64{r.Rewritten, r.Kept}, "expiring at +15m, it would be stamped 48h before: below the boundary")
	row, err := x.raw.ReadRow(ctx, "r", bigtable.RowFilter(move.RewriteFilter(m, "f")))
	require.NoError(t, err)
	n, err := move.RewriteRow(ctx, x.raw, "f", m, row, start.Add(10*time.Minute), false)
	require.NoError(t, err)
	assert.Equal(t, move.Counts{Kept: 1}, n)
	assert.Equal(t, []bigtable.Timestamp{testkit.MS(start.Add(-15 * time.Minute))}, x.stamps("r", "c"))
}

// TestPlanMoveThatNeverEnds: in a move between sequence numbers and times
// whose old cells never expire, nothing can end them but a finish with data
// loss (they cannot be rewritten), and the plan says so instead of
// suggesting a rewrite.
func TestPlanMoveThatNeverEnds(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		m  ttl.Move
		ts bigtable.Timestamp
	}{
		{ttl.Move{From: ttl.SequenceNumbers(1), To: ttl.OneSecond(), Start: start, Old: ttl.Forever}, 5000},
		{ttl.Move{To: ttl.SequenceNumbers(2), Start: start, Old: ttl.Forever}, testkit.MS(start.Add(-time.Hour))},
	} {
		x := newMoveTable(t, nil)
		x.put("a", "c", "old", tt.ts)
		r, err := x.family(x.raw, tt.m, x.opts(time.Minute)).Plan(ctx)
		require.NoError(t, err)
		require.Len(t, r.Blockers, 1, "%v", tt.m)
		assert.Contains(t, r.Blockers[0], "the move never ends by itself", "%v", tt.m)
		assert.NotContains(t, r.Blockers[0], "rewrite them", "%v", tt.m)
		_, err = x.family(x.raw, tt.m, move.Options{Scan: scan.Options{Now: x.clock.Now}}).Rewrite(ctx)
		assert.ErrorIs(t, err, ttl.ErrInvalidOption, "%v cannot be rewritten", tt.m)
	}
}

// checkPolicies is policy.New then Tool.Check: the move's families, as
// the policy tool sees them.
func checkPolicies(ctx context.Context, admin *bigtable.AdminClient, table string, families map[string]ttl.Strategy) ([]policy.Status, error) {
	tool, err := policy.New(admin, nil, table, families, policy.Options{})
	if err != nil {
		return nil, err
	}
	return tool.Check(ctx)
}

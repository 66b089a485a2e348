package counters_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// counterTable makes a ttl.Table on a fresh emulator table with a counter
// family "hits" (Counter(OneSecond()), an aggregate of int64 sums), a
// counter family "daily" (Counter(DefaultExpiration(48h))) and a plain
// family "sess" (OneSecond()), reading clock.
func counterTable(t *testing.T, clock *testkit.Clock) (*ttl.Table, *bigtable.Table) {
	t.Helper()
	e := emulator.StartForTest(t)
	sum := bigtable.AggregateType{Input: bigtable.Int64Type{}, Aggregator: bigtable.SumAggregator{}}
	require.NoError(t, e.Admin.CreateTableFromConf(context.Background(), &bigtable.TableConf{TableID: "t", ColumnFamilies: map[string]bigtable.Family{
		"hits":  {ValueType: sum},
		"daily": {ValueType: sum},
		"sess":  {},
	}}))
	raw := e.Client.Open("t")
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{
		"hits":  ttl.Counter(ttl.OneSecond()),
		"daily": ttl.Counter(ttl.DefaultExpiration(48 * time.Hour)),
		"sess":  ttl.OneSecond(),
	}, ttl.WithClock(clock.Now))
	require.NoError(t, err)
	return tbl, raw
}

// TestCounterWindows adds to a counter over 25 seconds in windows of 10
// seconds: each window's increments merge into one cell, stamped with its
// expiry (end + Keep) under OneSecond and 48h before it under
// DefaultExpiration, and the windows read back with their sums.
func TestCounterWindows(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := counterTable(t, clock)
	w := ttl.Window{Size: 10 * time.Second, Keep: 50 * time.Second}
	for range 25 {
		require.NoError(t, tbl.Apply(ctx, "u", testkit.Add("hits", "req", 1, w)))
		require.NoError(t, tbl.Apply(ctx, "u", testkit.Add("daily", "req", 2, w)))
		clock.Advance(time.Second)
	}
	stored := testkit.Cells(testkit.RawRow(t, raw, "u"))
	require.Len(t, stored, 6, "one cell per window and family")
	assert.Equal(t, testkit.MS(testkit.Base.Add(30*time.Second+50*time.Second)), stored[3].TS, "hits: the newest window's expiry")
	assert.Equal(t, testkit.MS(testkit.Base.Add(30*time.Second+50*time.Second-48*time.Hour)), stored[0].TS, "daily: its expiry less the default")

	got, err := tbl.ReadCounter(ctx, "u", "hits", "req", w)
	require.NoError(t, err)
	assert.Equal(t, []ttl.WindowCount{
		{Start: testkit.Base.Add(20 * time.Second), End: testkit.Base.Add(30 * time.Second), Expires: testkit.Base.Add(80 * time.Second), Sum: 5},
		{Start: testkit.Base.Add(10 * time.Second), End: testkit.Base.Add(20 * time.Second), Expires: testkit.Base.Add(70 * time.Second), Sum: 10},
		{Start: testkit.Base, End: testkit.Base.Add(10 * time.Second), Expires: testkit.Base.Add(60 * time.Second), Sum: 10},
	}, got)
	for _, n := range []struct {
		n    int
		want int64
	}{{1, 5}, {2, 15}, {3, 25}, {6, 25}} {
		sum, err := tbl.SumCounter(ctx, "u", "hits", "req", w, n.n)
		require.NoError(t, err)
		assert.Equal(t, n.want, sum, "the last %d windows", n.n)
	}
	sum, err := tbl.SumCounter(ctx, "u", "daily", "req", w, 2)
	require.NoError(t, err)
	assert.Equal(t, int64(30), sum)

	// Each window expires Keep after it ends: at base+60s the first.
	clock.Set(testkit.Base.Add(60 * time.Second))
	got, err = tbl.ReadCounter(ctx, "u", "hits", "req", w)
	require.NoError(t, err)
	assert.Len(t, got, 2)
	clock.Set(testkit.Base.Add(80 * time.Second))
	got, err = tbl.ReadCounter(ctx, "u", "hits", "req", w)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestCounterRefusals: every write or read that does not fit the family
// is refused with its sentinel, and writes nothing.
func TestCounterRefusals(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := counterTable(t, clock)
	w := ttl.Window{Size: time.Minute, Keep: time.Hour}
	set := ttl.NewMutation()
	set.Set("hits", "req", []byte("1"), ttl.For(time.Hour))
	replace := ttl.NewMutation()
	replace.Replace("hits", "req", []byte("1"), ttl.For(time.Hour))
	for _, tt := range []struct {
		name string
		m    *ttl.Mutation
		want error
	}{
		{"Add to a plain family", testkit.Add("sess", "req", 1, w), ttl.ErrCounter},
		{"Add to a family without a strategy", testkit.Add("meta", "req", 1, w), ttl.ErrCounter},
		{"Set in a counter family", set, ttl.ErrCounter},
		{"Replace in a counter family", replace, ttl.ErrCounter},
		{"a window that does not divide a day", testkit.Add("hits", "req", 1, ttl.Window{Size: 7 * time.Minute, Keep: time.Hour}), ttl.ErrLifetime},
		{"a window of 36 hours", testkit.Add("hits", "req", 1, ttl.Window{Size: 36 * time.Hour}), ttl.ErrLifetime},
		{"a window of no size", testkit.Add("hits", "req", 1, ttl.Window{Keep: time.Hour}), ttl.ErrLifetime},
		{"a window of a fraction of a millisecond", testkit.Add("hits", "req", 1, ttl.Window{Size: 1500 * time.Microsecond}), ttl.ErrLifetime},
		{"a negative keep", testkit.Add("hits", "req", 1, ttl.Window{Size: time.Minute, Keep: -time.Second}), ttl.ErrLifetime},
		{"a window and keep past a Duration", testkit.Add("hits", "req", 1, ttl.Window{Size: 100000 * 24 * time.Hour, Keep: 200 * 365 * 24 * time.Hour}), ttl.ErrOutOfRange},
	} {
		err := tbl.Apply(ctx, "u", tt.m)
		assert.ErrorIs(t, err, tt.want, tt.name)
		assert.ErrorContains(t, err, "req", "%s: the message names the column", tt.name)
	}
	assert.Empty(t, testkit.RawRow(t, raw, "u"), "nothing written")

	_, err := ttl.NewTable(raw, map[string]ttl.Strategy{"hits": ttl.Counter(ttl.SequenceNumbers(3))})
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	_, err = ttl.NewTable(raw, map[string]ttl.Strategy{"hits": ttl.Counter(nil)})
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	_, err = ttl.NewTable(raw, map[string]ttl.Strategy{"hits": ttl.Counter(ttl.Counter(ttl.OneSecond()))})
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy)
	_, err = ttl.NewTable(raw, map[string]ttl.Strategy{"hits": ttl.Move{From: ttl.Counter(ttl.DefaultExpiration(time.Hour)), To: ttl.Counter(ttl.OneSecond()), Start: testkit.Base}})
	assert.ErrorIs(t, err, ttl.ErrInvalidStrategy, "a counter family cannot be moved")

	_, err = tbl.ReadCounter(ctx, "u", "sess", "req", w)
	assert.ErrorIs(t, err, ttl.ErrCounter)
	// A misspelled family is unknown, not "not a Counter family" (issue
	// 28), and the nearest Counter family is suggested.
	_, err = tbl.SumCounter(ctx, "u", "hitz", "req", w, 2)
	assert.ErrorIs(t, err, ttl.ErrUnknownFamily)
	assert.NotErrorIs(t, err, ttl.ErrCounter)
	assert.EqualError(t, err, `ttl: unknown column family: "hitz" is not a family of the table (column "req"): a counter is read from a family given Counter(...) in NewTable's families (did you mean "hits"?)`)
	_, err = tbl.ReadCounter(ctx, "u", "visits", "req", w)
	assert.ErrorIs(t, err, ttl.ErrUnknownFamily)
	assert.NotContains(t, err.Error(), "did you mean", "no Counter family within two edits")
	_, err = tbl.SumCounter(ctx, "u", "hits", "req", w, 62)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "62 windows of a minute need Keep of 61 minutes")
	_, err = tbl.SumCounter(ctx, "u", "hits", "req", w, 0)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	_, err = tbl.SumCounter(ctx, "u", "hits", "req", ttl.Window{Size: time.Millisecond, Keep: time.Hour}, 9223372036856)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption, "(n−1) × Size past a Duration is refused, not wrapped around")

	inc := ttl.NewReadModifyWrite()
	inc.Increment("hits", "req", 1)
	_, err = tbl.ApplyReadModifyWrite(ctx, "u", inc)
	assert.ErrorIs(t, err, ttl.ErrCounter)
	inc = ttl.NewReadModifyWrite()
	inc.Increment("sess", "req", 1)
	_, err = tbl.ApplyReadModifyWrite(ctx, "u", inc)
	assert.ErrorIs(t, err, ttl.ErrServerTimestamp)
	assert.ErrorContains(t, err, "count in a Counter family with Mutation.Add", "the refusal points to counters")
	_, err = tbl.Touch(ctx, "u", "hits", "req", ttl.For(time.Hour))
	assert.ErrorIs(t, err, ttl.ErrCounter)
	assert.Empty(t, testkit.RawRow(t, raw, "u"), "nothing written")
}

// TestCounterReadMargin: a table's read margin hides a window's cell that
// much before its expiry, so a sum needs Keep to cover it as well.
func TestCounterReadMargin(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	_, raw := counterTable(t, clock)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"hits": ttl.Counter(ttl.OneSecond())},
		ttl.WithClock(clock.Now), ttl.WithReadMargin(5*time.Second))
	require.NoError(t, err)
	exact := ttl.Window{Size: 10 * time.Second, Keep: 50 * time.Second}
	_, err = tbl.SumCounter(ctx, "u", "hits", "req", exact, 6)
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	assert.ErrorContains(t, err, "plus the read margin (5s)")

	w := ttl.Window{Size: 10 * time.Second, Keep: 55 * time.Second}
	for range 60 {
		require.NoError(t, tbl.Apply(ctx, "u", testkit.Add("hits", "req", 1, w)))
		clock.Advance(time.Second)
	}
	// At base+60s the last 6 windows are those from base+10s: 50 adds,
	// the oldest of them 5s from being hidden by the margin.
	sum, err := tbl.SumCounter(ctx, "u", "hits", "req", w, 6)
	require.NoError(t, err)
	assert.Equal(t, int64(50), sum)
}

// TestCounterReservedColumn: under RecordWriteTime the columns starting
// with "\xff\xff" hold write times; an Add there is refused as a Set is.
func TestCounterReservedColumn(t *testing.T) {
	clock := testkit.NewClock(testkit.Base)
	_, raw := counterTable(t, clock)
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"hits": ttl.Counter(ttl.OneSecond())},
		ttl.WithClock(clock.Now), ttl.RecordWriteTime())
	require.NoError(t, err)
	err = tbl.Apply(context.Background(), "u", testkit.Add("hits", "\xff\xffreq", 1, ttl.Window{Size: time.Minute}))
	assert.ErrorIs(t, err, ttl.ErrReservedColumn)
	assert.Empty(t, testkit.RawRow(t, raw, "u"), "nothing written")
}

// TestCounterInBulkAndConditions: an Add is a blind write: it batches in
// ApplyBulk, and it may be a branch of a conditional mutation.
func TestCounterInBulkAndConditions(t *testing.T) {
	ctx := context.Background()
	tbl, _ := counterTable(t, testkit.NewClock(testkit.Base))
	w := ttl.Window{Size: time.Minute, Keep: time.Hour}
	m := testkit.Add("hits", "req", 3, w)
	errs, err := tbl.ApplyBulk(ctx, []string{"a", "b", "a"}, []*ttl.Mutation{m, m, testkit.Add("sess", "req", 1, w)})
	require.NoError(t, err)
	require.Len(t, errs, 3)
	assert.NoError(t, errs[0])
	assert.NoError(t, errs[1])
	assert.ErrorIs(t, errs[2], ttl.ErrCounter, "only the bad row is refused")
	require.NoError(t, tbl.Apply(ctx, "a", ttl.NewCondMutation(nil, m, nil)), "a has a live cell")
	for row, want := range map[string]int64{"a": 6, "b": 3} {
		sum, err := tbl.SumCounter(ctx, row, "hits", "req", w, 1)
		require.NoError(t, err)
		assert.Equal(t, want, sum, row)
	}
}

package reads_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// Reads through a Table: the caller's filter applied after the expiry
// filter, Bigtable's other read options, the read filter each kind of
// table builds, and the expiry ExpiresAt reports.

// TestRowFilterAfterExpiry checks that the caller's filter sees only live
// cells: a per-row limit of one returns the first live cell, where applied
// before expiry filtering it would take the expired one and return
// nothing.
func TestRowFilterAfterExpiry(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil, ttl.OtherFamilies())
	m := ttl.NewMutation()
	m.Set("f", "a", []byte("soon"), ttl.For(time.Minute))
	m.Set("f", "b", []byte("later"), ttl.For(time.Hour))
	require.NoError(t, tbl.Apply(ctx, "r", m))
	clock.Advance(time.Minute)

	r, err := tbl.ReadRow(ctx, "r", ttl.RowFilter(bigtable.CellsPerRowLimitFilter(1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"f:b=later"}, testkit.Values(r))
	assert.Equal(t, "(timestamp_range(1903770060001000,0) | cells_per_row_limit(1))",
		bigtable.ChainFilters(tbl.ReadFilter(clock.Now()), bigtable.CellsPerRowLimitFilter(1)).String())
}

// TestReadOptions checks that Bigtable's other read options keep working
// and that no option can drop the expiry filter.
func TestReadOptions(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil)
	for i := 0; i < 5; i++ {
		require.NoError(t, tbl.Apply(ctx, fmt.Sprintf("r%d", i), testkit.Set("f", "c", "live", ttl.For(time.Hour))))
		m := bigtable.NewMutation()
		m.Set("f", "old", testkit.MS(testkit.Base), []byte("expired")) // expires at base
		require.NoError(t, raw.Apply(ctx, fmt.Sprintf("r%d", i), m))
	}
	var keys []string
	collect := func(r bigtable.Row) bool {
		keys = append(keys, r.Key())
		assert.Equal(t, []string{"f:c=live"}, testkit.Values(r))
		return true
	}
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), collect, bigtable.LimitRows(2)))
	assert.Equal(t, []string{"r0", "r1"}, keys)

	keys = nil
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), collect, bigtable.ReverseScan(), bigtable.LimitRows(3)))
	assert.Equal(t, []string{"r4", "r3", "r2"}, keys)

	var stats *bigtable.FullReadStats
	_, err := tbl.ReadRow(ctx, "r0", bigtable.WithFullReadStats(func(s *bigtable.FullReadStats) { stats = s }))
	require.NoError(t, err)
	assert.NotNil(t, stats, "WithFullReadStats callback")

	keys = nil
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		keys = append(keys, r.Key())
		return len(keys) < 2
	}))
	assert.Equal(t, []string{"r0", "r1"}, keys, "stops when f returns false")

	for name, opts := range map[string][]ttl.ReadOption{
		"bigtable.RowFilter": {bigtable.RowFilter(bigtable.PassAllFilter())},
		"two RowFilters":     {ttl.RowFilter(bigtable.PassAllFilter()), ttl.RowFilter(bigtable.PassAllFilter())},
		"RowFilter(nil)":     {ttl.RowFilter(nil)},
		"nil option":         {nil},
		"WithWriteTimes":     {ttl.WithWriteTimes()}, // the table does not record them
	} {
		_, err := tbl.ReadRow(ctx, "r0", opts...)
		assert.ErrorIs(t, err, ttl.ErrInvalidOption, name)
		err = tbl.ReadRows(ctx, bigtable.RowList{"r0"}, collect, opts...)
		assert.ErrorIs(t, err, ttl.ErrInvalidOption, name)
	}
}

// TestReadFilter checks the filter each kind of table reads through, as
// it prints, and that it works on the emulator.
func TestReadFilter(t *testing.T) {
	now := testkit.Base
	live := "timestamp_range(1903770000001000,0)"    // OneSecond at base
	liveDay := "timestamp_range(1903683600001000,0)" // DefaultExpiration(24h) at base
	for _, tt := range []struct {
		name    string
		managed map[string]ttl.Strategy
		opts    []ttl.Option
		want    string
	}{
		{"undeclared", map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil,
			"((columnRangeFilter(f,,) | " + live + ") + col((?:|[^f](?s:.*)|f(?:(?s:.+))):))"},
		{"declared, one strategy", map[string]ttl.Strategy{"a": ttl.OneSecond(), "b": ttl.OneSecond()}, []ttl.Option{ttl.OtherFamilies()},
			live},
		{"declared, one family", map[string]ttl.Strategy{"f": ttl.SequenceNumbers(2)}, []ttl.Option{ttl.OtherFamilies()},
			"col(*,2)"},
		{"declared, two strategies and another family", map[string]ttl.Strategy{"a": ttl.OneSecond(), "b": ttl.OneSecond(), "d": ttl.DefaultExpiration(24 * time.Hour)},
			[]ttl.Option{ttl.OtherFamilies("meta")},
			"(((columnRangeFilter(a,,) + columnRangeFilter(b,,)) | " + live + ") + (columnRangeFilter(d,,) | " + liveDay + ") + columnRangeFilter(meta,,))"},
		{"declared, one strategy, write times", map[string]ttl.Strategy{"f": ttl.OneSecond()}, []ttl.Option{ttl.OtherFamilies(), ttl.RecordWriteTime()},
			"(columnRangeFilter(f,,\xff\xff) | " + live + ")"},
		{"margin", map[string]ttl.Strategy{"f": ttl.OneSecond()}, []ttl.Option{ttl.OtherFamilies(), ttl.WithReadMargin(time.Second)},
			"timestamp_range(1903770001001000,0)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := ttl.NewTable(&testkit.Recorder{}, tt.managed, tt.opts...)
			require.NoError(t, err)
			got := tbl.ReadFilter(now).String()
			assert.Equal(t, tt.want, got)
			if strings.Contains(tt.name, "declared,") {
				assert.NotRegexp(t, `col\([^*]`, got, "a declared table's filter has no FamilyFilter or ColumnFilter")
			}
		})
	}
}

// TestExpiresAt checks the expiry reported for each kind of cell.
func TestExpiresAt(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"s": ttl.OneSecond(), "d": ttl.DefaultExpiration(time.Hour), "v": ttl.SequenceNumbers(1)}, []string{"u"})
	m := ttl.NewMutation()
	m.Set("s", "for", nil, ttl.For(time.Minute+1500*time.Microsecond))
	m.Set("s", "forever", nil, ttl.Forever)
	m.Set("d", "default", nil, ttl.Default)
	m.Set("d", "until", nil, ttl.Until(testkit.Base.Add(3*time.Hour)))
	m.Set("d", "forever", nil, ttl.Forever)
	m.Set("v", "v", nil, ttl.Version(9))
	m.Set("u", "u", nil, ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	r, err := tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	want := map[string]time.Time{
		"s:for":     testkit.Base.Add(time.Minute + time.Millisecond), // rounded down, never late
		"d:default": testkit.Base.Add(time.Hour),
		"d:until":   testkit.Base.Add(3 * time.Hour),
	}
	var n int
	for _, items := range r {
		for _, it := range items {
			n++
			got, ok := tbl.ExpiresAt(it)
			w, expires := want[it.Column]
			assert.Equal(t, expires, ok, it.Column)
			assert.True(t, got.Equal(w), "ExpiresAt(%s) = %v want %v", it.Column, got, w)
		}
	}
	assert.Equal(t, 7, n)
}

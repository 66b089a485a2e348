package writes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// Writes through a Table: one clock reading per call for every cell,
// Replace against Set, the delete recipes, and ApplyBulk's per-row
// errors.

// TestOneClockReadingPerCall checks that each call reads the clock once and
// uses it for every cell: all cells of a mutation and of a bulk write get
// timestamps from the same instant.
func TestOneClockReadingPerCall(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)}, []string{"u"})

	m := ttl.NewMutation()
	for i := 0; i < 5; i++ {
		m.Set("f", fmt.Sprint(i), nil, ttl.Default)
	}
	m.Set("u", "x", nil, ttl.Default)
	before := clock.Reads()
	require.NoError(t, tbl.Apply(ctx, "r", m))
	assert.Equal(t, 1, clock.Reads()-before, "clock reads in Apply")
	for _, c := range testkit.Cells(testkit.RawRow(t, raw, "r")) {
		assert.Equal(t, testkit.MS(testkit.Base), c.TS, "cell %s", c.Column)
	}

	before = clock.Reads()
	_, err := tbl.ApplyBulk(ctx, []string{"a", "b", "c"}, []*ttl.Mutation{m, m, m})
	require.NoError(t, err)
	assert.Equal(t, 1, clock.Reads()-before, "clock reads in ApplyBulk")

	for name, call := range map[string]func() error{
		"ReadRow": func() error { _, err := tbl.ReadRow(ctx, "r"); return err },
		"ReadRows": func() error {
			return tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { return true })
		},
		"Apply(cond)": func() error { return tbl.Apply(ctx, "r", ttl.NewCondMutation(nil, m, m)) },
		"ApplyReadModifyWrite": func() error {
			rmw := ttl.NewReadModifyWrite()
			rmw.Increment("u", "n", 1)
			_, err := tbl.ApplyReadModifyWrite(ctx, "r", rmw)
			return err
		},
	} {
		before = clock.Reads()
		require.NoError(t, call(), name)
		assert.Equal(t, 1, clock.Reads()-before, "clock reads in %s", name)
	}
}

// TestApplyBulkPerRowErrors checks that bad mutations are reported at
// their own index and not sent, and the others are applied.
func TestApplyBulkPerRowErrors(t *testing.T) {
	ctx := context.Background()
	tbl, rec, _ := testkit.RecordedTable(t)
	good := func(v string) *ttl.Mutation { return testkit.Set("f", "c", v, ttl.For(time.Hour)) }
	rows := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	muts := []*ttl.Mutation{good("0"), testkit.Set("f", "c", "1", ttl.For(-1)), good("2"), nil, ttl.NewCondMutation(nil, good("4"), nil), good("5")}
	errs, err := tbl.ApplyBulk(ctx, rows, muts)
	require.NoError(t, err)
	require.Len(t, errs, 6)
	assert.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], ttl.ErrExpired)
	assert.NoError(t, errs[2])
	assert.ErrorIs(t, errs[3], ttl.ErrInvalidMutation)
	assert.ErrorIs(t, errs[4], ttl.ErrInvalidMutation)
	assert.Contains(t, errs[4].Error(), "cannot be applied in bulk")
	assert.NoError(t, errs[5])
	assert.Equal(t, []string{"ApplyBulk(3)"}, rec.Calls(), "one request with the good rows")

	// Nothing to send: no request at all.
	errs, err = tbl.ApplyBulk(ctx, []string{"x"}, []*ttl.Mutation{nil})
	require.NoError(t, err)
	assert.ErrorIs(t, errs[0], ttl.ErrInvalidMutation)
	errs, err = tbl.ApplyBulk(ctx, nil, nil)
	assert.NoError(t, err)
	assert.Nil(t, errs)
	assert.Equal(t, []string{"ApplyBulk(3)"}, rec.Calls())

	var got []string
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		got = append(got, r.Key()+"="+string(r["f"][0].Value))
		return true
	}))
	assert.Equal(t, []string{"r0=0", "r2=2", "r5=5"}, got)

	// All good: no errors at all.
	errs, err = tbl.ApplyBulk(ctx, []string{"a", "b"}, []*ttl.Mutation{good("a"), good("b")})
	assert.NoError(t, err)
	assert.Nil(t, errs)
}

// TestReplaceLastWriteWins shows the pitfall Replace removes: under a time
// strategy a newer write with a shorter lifetime has a smaller timestamp,
// so with Set the older value stays newest and comes back.
func TestReplaceLastWriteWins(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)}, nil)
	latest := ttl.RowFilter(bigtable.LatestNFilter(1))
	read := func(row string) []string {
		r, err := tbl.ReadRow(ctx, row, latest)
		require.NoError(t, err)
		return testkit.Values(r)
	}
	for _, row := range []string{"set", "replace"} {
		require.NoError(t, tbl.Apply(ctx, row, testkit.Set("f", "c", "old", ttl.For(72*time.Hour))))
	}
	clock.Advance(time.Minute)
	require.NoError(t, tbl.Apply(ctx, "set", testkit.Set("f", "c", "new", ttl.For(time.Hour))))
	m := ttl.NewMutation()
	m.Replace("f", "c", []byte("new"), ttl.For(time.Hour))
	require.NoError(t, tbl.Apply(ctx, "replace", m))

	assert.Equal(t, []string{"f:c=old"}, read("set"), "Set: the older value wins")
	assert.Equal(t, []string{"f:c=new"}, read("replace"), "Replace: the newer value wins")
	assert.Len(t, testkit.Cells(testkit.RawRow(t, raw, "replace")), 1, "Replace deleted the old cell")
	clock.Advance(time.Hour)
	assert.Equal(t, []string{"f:c=old"}, read("set"), "Set: the older value resurfaces")
	assert.Empty(t, read("replace"), "Replace: nothing resurfaces")
}

// TestDeletes checks the delete recipes on managed and unmanaged families.
func TestDeletes(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond(), "g": ttl.SequenceNumbers(2)}, []string{"u"})
	fill := ttl.NewMutation()
	for _, c := range []string{"a", "b"} {
		fill.Set("f", c, []byte(c), ttl.For(time.Hour))
		fill.Set("g", c, []byte(c), ttl.Version(1))
		fill.Set("u", c, []byte(c), ttl.Default)
	}
	read := func() []string {
		r, err := tbl.ReadRow(ctx, "r")
		require.NoError(t, err)
		return testkit.Values(r)
	}
	require.NoError(t, tbl.Apply(ctx, "r", fill))
	del := ttl.NewMutation()
	del.DeleteCellsInColumn("f", "a")
	del.DeleteCellsInColumn("u", "a")
	del.DeleteCellsInFamily("g")
	require.NoError(t, tbl.Apply(ctx, "r", del))
	assert.Equal(t, []string{"f:b=b", "u:b=b"}, read())
	del = ttl.NewMutation()
	del.DeleteCellsInFamily("u")
	require.NoError(t, tbl.Apply(ctx, "r", del))
	assert.Equal(t, []string{"f:b=b"}, read())
	del = ttl.NewMutation()
	del.DeleteRow()
	require.NoError(t, tbl.Apply(ctx, "r", del))
	assert.Empty(t, read())
}

// TestWritesInManyFamilies checks writes on a table of more managed
// families than writes scan for (they look them up in a map): each
// family's cells are stamped by its own strategy, and a family without a
// strategy is still told apart.
func TestWritesInManyFamilies(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	families := map[string]ttl.Strategy{
		"a": ttl.OneSecond(), "b": ttl.DefaultExpiration(time.Hour), "c": ttl.SequenceNumbers(2),
		"d": ttl.OneSecond(), "e": ttl.DefaultExpiration(2 * time.Hour),
	}
	tbl, raw := testkit.NewTable(t, clock, families, []string{"u"})
	require.NoError(t, tbl.ApplyRow(ctx, "r", func(r ttl.RowWriter) {
		r.Set("a", "x", nil, ttl.For(time.Minute))
		r.Set("b", "x", nil, ttl.Default)
		r.Set("c", "x", nil, ttl.Version(9))
		r.Set("d", "x", nil, ttl.For(time.Hour))
		r.Set("e", "x", nil, ttl.For(time.Hour))
		r.Set("u", "x", nil, ttl.Default)
	}))
	assert.Equal(t, []testkit.Cell{
		{Column: "a:x", Value: "", TS: testkit.MS(testkit.Base.Add(time.Minute))},
		{Column: "b:x", Value: "", TS: testkit.MS(testkit.Base)},
		{Column: "c:x", Value: "", TS: bigtable.Timestamp(9000)},
		{Column: "d:x", Value: "", TS: testkit.MS(testkit.Base.Add(time.Hour))},
		{Column: "e:x", Value: "", TS: testkit.MS(testkit.Base.Add(-time.Hour))},
		{Column: "u:x", Value: "", TS: testkit.MS(testkit.Base)},
	}, testkit.Cells(testkit.RawRow(t, raw, "r")))
	err := tbl.Apply(ctx, "r", testkit.Set("u", "x", "v", ttl.For(time.Hour)))
	assert.ErrorIs(t, err, ttl.ErrLifetime, "u has no strategy")
}

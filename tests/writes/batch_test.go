package writes_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// ApplyRow and ApplyBatch: writes built as they are written, at one
// reading of the clock per call; what they refuse, and what their writers
// do once the call has ended. (That they build what Apply and ApplyBulk
// build from the same changes is internal_test.go's, at the module's root.)

// TestApplyRow writes a row whose cells have lifetimes of their own on
// the emulator, at one clock reading, and reads each back until its own
// expiry.
func TestApplyRow(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, []string{"u"})
	before := clock.Reads()
	require.NoError(t, tbl.ApplyRow(ctx, "r", func(r ttl.RowWriter) {
		r.Set("f", "token", []byte("t"), ttl.For(time.Minute))
		r.Set("f", "refresh", []byte("r"), ttl.For(time.Hour))
		r.Set("u", "user", []byte("u"), ttl.Default)
	}))
	assert.Equal(t, 1, clock.Reads()-before, "clock reads in ApplyRow")
	assert.Equal(t, []testkit.Cell{
		{Column: "f:refresh", Value: "r", TS: testkit.MS(testkit.Base.Add(time.Hour))},
		{Column: "f:token", Value: "t", TS: testkit.MS(testkit.Base.Add(time.Minute))},
		{Column: "u:user", Value: "u", TS: testkit.MS(testkit.Base)},
	}, testkit.Cells(testkit.RawRow(t, raw, "r")))

	clock.Advance(time.Minute)
	row, err := tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"f:refresh=r", "u:user=u"}, testkit.Values(row), "the token expired, the refresh token lives")
}

// TestApplyRowRefused checks that ApplyRow sends nothing when a change is
// invalid, reporting the first one, or when the row has no changes, and
// that it refuses a nil function, context or table.
func TestApplyRowRefused(t *testing.T) {
	ctx := context.Background()
	tbl, rec, raw := testkit.RecordedTable(t)
	err := tbl.ApplyRow(ctx, "r", func(r ttl.RowWriter) {
		r.Set("f", "ok", []byte("v"), ttl.For(time.Hour))
		r.Set("f", "late", []byte("v"), ttl.For(-time.Second))
		r.Set("nope", "c", []byte("v"), ttl.For(time.Hour)) // ignored: the row already has an error
	})
	require.ErrorIs(t, err, ttl.ErrExpired)
	assert.Contains(t, err.Error(), `(family "f", column "late")`)

	err = tbl.ApplyRow(ctx, "r", func(r ttl.RowWriter) { r.Set("", "c", nil, ttl.Default) })
	require.ErrorIs(t, err, ttl.ErrUnknownFamily)
	assert.Contains(t, err.Error(), `column "c"`)

	err = tbl.ApplyRow(ctx, "r", func(ttl.RowWriter) {})
	require.ErrorIs(t, err, ttl.ErrInvalidMutation)
	assert.Contains(t, err.Error(), `row "r" has no changes`)

	assert.ErrorIs(t, tbl.ApplyRow(ctx, "r", nil), ttl.ErrNilArgument)
	assert.ErrorIs(t, tbl.ApplyRow(nil, "r", func(ttl.RowWriter) {}), ttl.ErrNilArgument) //lint:ignore SA1012 a nil context is the input under test
	assert.ErrorIs(t, (*ttl.Table)(nil).ApplyRow(ctx, "r", func(ttl.RowWriter) {}), ttl.ErrNilArgument)
	assert.Empty(t, rec.Calls(), "nothing was sent")
	assert.Empty(t, testkit.Cells(testkit.RawRow(t, raw, "r")))
}

// TestRowWriterAfterItsCall checks that a RowWriter kept after its call
// writes nothing, neither to its own row nor to a later call's, and that
// the zero RowWriter does nothing.
func TestRowWriterAfterItsCall(t *testing.T) {
	ctx := context.Background()
	tbl, _, raw := testkit.RecordedTable(t)
	var kept ttl.RowWriter
	require.NoError(t, tbl.ApplyRow(ctx, "a", func(r ttl.RowWriter) {
		r.Set("f", "c", []byte("a"), ttl.For(time.Hour))
		kept = r
	}))
	require.NoError(t, tbl.ApplyRow(ctx, "b", func(r ttl.RowWriter) {
		kept.Set("f", "stale", []byte("x"), ttl.For(time.Hour))
		kept.DeleteRow()
		r.Set("f", "c", []byte("b"), ttl.For(time.Hour))
	}))
	kept.Set("f", "after", []byte("x"), ttl.For(time.Hour))
	var zero ttl.RowWriter
	zero.Set("f", "c", nil, ttl.For(time.Hour))
	zero.Add("f", "c", 1, ttl.Window{Size: time.Minute})

	assert.Equal(t, []testkit.Cell{{Column: "f:c", Value: "a", TS: testkit.MS(testkit.Base.Add(time.Hour))}}, testkit.Cells(testkit.RawRow(t, raw, "a")))
	assert.Equal(t, []testkit.Cell{{Column: "f:c", Value: "b", TS: testkit.MS(testkit.Base.Add(time.Hour))}}, testkit.Cells(testkit.RawRow(t, raw, "b")), "the kept writer wrote nothing into the later call")
}

// TestApplyBatch writes rows on the emulator at one clock reading; a row
// with an invalid change and an empty row are reported at their indexes
// and not sent, the others are written.
func TestApplyBatch(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, []string{"u"})
	before := clock.Reads()
	var order []int
	errs, err := tbl.ApplyBatch(ctx, []string{"r0", "r1", "r2", "r3"}, func(i int, w ttl.RowWriter) {
		order = append(order, i)
		switch i {
		case 0:
			w.Set("f", "c", []byte("0"), ttl.For(time.Minute))
			w.Set("u", "c", []byte("0"), ttl.Default)
		case 1:
			w.Set("f", "c", []byte("1"), ttl.For(time.Hour))
			w.Set("f", "d", []byte("1"), ttl.Until(testkit.Base.Add(-time.Second)))
		case 3:
			w.Replace("f", "c", []byte("3"), ttl.For(time.Hour))
			w.DeleteCellsInColumn("f", "old")
			w.DeleteCellsInFamily("u")
		}
	})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3}, order, "fill is called for each row, in order")
	assert.Equal(t, 1, clock.Reads()-before, "clock reads in ApplyBatch")
	require.Len(t, errs, 4)
	assert.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], ttl.ErrExpired)
	assert.Contains(t, errs[1].Error(), `column "d"`)
	assert.ErrorIs(t, errs[2], ttl.ErrInvalidMutation)
	assert.Contains(t, errs[2].Error(), `row "r2" has no changes`)
	assert.NoError(t, errs[3])

	assert.Equal(t, []testkit.Cell{{Column: "f:c", Value: "0", TS: testkit.MS(testkit.Base.Add(time.Minute))}, {Column: "u:c", Value: "0", TS: testkit.MS(testkit.Base)}}, testkit.Cells(testkit.RawRow(t, raw, "r0")))
	assert.Empty(t, testkit.Cells(testkit.RawRow(t, raw, "r1")), "a row with an invalid change is not sent")
	assert.Equal(t, []testkit.Cell{{Column: "f:c", Value: "3", TS: testkit.MS(testkit.Base.Add(time.Hour))}}, testkit.Cells(testkit.RawRow(t, raw, "r3")))

	errs, err = tbl.ApplyBatch(ctx, []string{"r4"}, func(_ int, w ttl.RowWriter) { w.DeleteRow() })
	require.NoError(t, err)
	assert.Nil(t, errs, "every row written")
}

// TestApplyBatchRefused checks that a nil function, context or table is
// refused, that no rows send nothing, and that a row's writer kept past
// its row writes nothing, neither to its own row nor to a later one.
func TestApplyBatchRefused(t *testing.T) {
	ctx := context.Background()
	tbl, rec, raw := testkit.RecordedTable(t)
	_, err := tbl.ApplyBatch(ctx, []string{"r"}, nil)
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	_, err = tbl.ApplyBatch(nil, []string{"r"}, func(int, ttl.RowWriter) {}) //lint:ignore SA1012 a nil context is the input under test
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	_, err = (*ttl.Table)(nil).ApplyBatch(ctx, []string{"r"}, func(int, ttl.RowWriter) {})
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
	errs, err := tbl.ApplyBatch(ctx, nil, func(int, ttl.RowWriter) { t.Error("fill called for no rows") })
	assert.NoError(t, err)
	assert.Nil(t, errs)
	assert.Empty(t, rec.Calls(), "nothing was sent")

	var kept ttl.RowWriter
	errs, err = tbl.ApplyBatch(ctx, []string{"a", "b"}, func(i int, w ttl.RowWriter) {
		if i == 0 {
			kept = w
		} else {
			kept.Set("f", "stale", []byte("x"), ttl.For(time.Hour))
		}
		w.Set("f", "c", []byte{byte('a' + i)}, ttl.For(time.Hour))
	})
	require.NoError(t, err)
	assert.Nil(t, errs)
	kept.Set("f", "after", []byte("x"), ttl.For(time.Hour))
	assert.Equal(t, []testkit.Cell{{Column: "f:c", Value: "a", TS: testkit.MS(testkit.Base.Add(time.Hour))}}, testkit.Cells(testkit.RawRow(t, raw, "a")))
	assert.Equal(t, []testkit.Cell{{Column: "f:c", Value: "b", TS: testkit.MS(testkit.Base.Add(time.Hour))}}, testkit.Cells(testkit.RawRow(t, raw, "b")), "the kept writer wrote nothing into the next row")
}

// TestApplyBatchGroups checks that ApplyBatch sends rows in the client's
// groups of at most 100,000 changes while the rows are written, as
// ApplyBulk does, and that a group that fails fails only its own rows.
func TestApplyBatchGroups(t *testing.T) {
	ctx := context.Background()
	api := &testkit.FailFirst{}
	tbl, err := ttl.NewTable(api, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	require.NoError(t, err)
	rows := make([]string, 100_003)
	for i := range rows {
		rows[i] = "r"
	}
	sentBefore := -1
	errs, err := tbl.ApplyBatch(ctx, rows, func(i int, w ttl.RowWriter) {
		if i == len(rows)-1 {
			sentBefore = len(api.Calls)
		}
		if i != 7 { // row 7 is empty: not sent, its own error
			w.Set("f", "c", []byte("v"), ttl.For(time.Hour))
		}
	})
	require.NoError(t, err, "one group of two succeeded")
	assert.Equal(t, 1, sentBefore, "the first group was sent while fill ran, before the last row")
	assert.Equal(t, []int{100_000, 2}, api.Calls)
	require.Len(t, errs, len(rows))
	assert.ErrorIs(t, errs[7], ttl.ErrInvalidMutation)
	assert.EqualError(t, errs[0], "unavailable")
	assert.EqualError(t, errs[100_000], "unavailable", "the first group: the 100,000 valid rows through index 100,000")
	assert.NoError(t, errs[100_001])
	assert.NoError(t, errs[100_002])
}

// failAll is a TableAPI whose every ApplyBulk fails whole.
type failAll struct{ bigtable.TableAPI }

func (failAll) ApplyBulk(context.Context, []string, []*bigtable.Mutation, ...bigtable.ApplyOption) ([]error, error) {
	return nil, context.DeadlineExceeded
}

// TestApplyBatchAllFailed checks that when every request fails, the call
// fails, and every row has the error.
func TestApplyBatchAllFailed(t *testing.T) {
	tbl, err := ttl.NewTable(failAll{}, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	require.NoError(t, err)
	errs, err := tbl.ApplyBatch(context.Background(), []string{"a", "b"}, func(_ int, w ttl.RowWriter) {
		w.Set("f", "c", nil, ttl.For(time.Hour))
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, errs, 2)
	assert.ErrorIs(t, errs[0], context.DeadlineExceeded)
	assert.ErrorIs(t, errs[1], context.DeadlineExceeded)
}

package inputs_test

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

// What NewTable takes and refuses: any bigtable.TableAPI, to which every
// call passes once; no invalid configuration; and a Table it did not make
// refuses every call.

// TestNewTableRefuses checks every invalid table configuration.
func TestNewTableRefuses(t *testing.T) {
	api := &testkit.Recorder{}
	one := map[string]ttl.Strategy{"f": ttl.OneSecond()}
	for _, tt := range []struct {
		name     string
		tbl      bigtable.TableAPI
		families map[string]ttl.Strategy
		opts     []ttl.Option
		want     error
		msg      string
	}{
		{"nil table", nil, one, nil, ttl.ErrNilArgument, "nil bigtable.TableAPI"},
		{"nil *bigtable.Table", (*bigtable.Table)(nil), one, nil, ttl.ErrNilArgument, "nil bigtable.TableAPI"},
		{"no families", api, nil, nil, ttl.ErrInvalidStrategy, "no family"},
		{"empty family name", api, map[string]ttl.Strategy{"": ttl.OneSecond()}, nil, ttl.ErrInvalidStrategy, "empty family name"},
		{"bad family name", api, map[string]ttl.Strategy{"a:b": ttl.OneSecond()}, nil, ttl.ErrInvalidStrategy, `"a:b"`},
		{"nil strategy", api, map[string]ttl.Strategy{"f": nil}, nil, ttl.ErrInvalidStrategy, `family "f"`},
		{"zero default", api, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(0)}, nil, ttl.ErrInvalidStrategy, `DefaultExpiration(0s): the default must be a positive whole number of milliseconds (family "f")`},
		{"negative default", api, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(-time.Hour)}, nil, ttl.ErrInvalidStrategy, "DefaultExpiration(-1h0m0s)"},
		{"sub-millisecond default", api, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Microsecond)}, nil, ttl.ErrInvalidStrategy, "DefaultExpiration(1µs)"},
		{"zero versions", api, map[string]ttl.Strategy{"f": ttl.SequenceNumbers(0)}, nil, ttl.ErrInvalidStrategy, "SequenceNumbers(0)"},
		{"nil option", api, one, []ttl.Option{nil}, ttl.ErrInvalidOption, "option 0 is nil"},
		{"nil clock", api, one, []ttl.Option{ttl.WithClock(nil)}, ttl.ErrInvalidOption, "WithClock(nil)"},
		{"negative margin", api, one, []ttl.Option{ttl.WithReadMargin(-time.Second)}, ttl.ErrInvalidOption, "WithReadMargin(-1s)"},
		{"managed family declared other", api, one, []ttl.Option{ttl.OtherFamilies("f")}, ttl.ErrInvalidOption, `family "f" has a strategy`},
		{"other family twice", api, one, []ttl.Option{ttl.OtherFamilies("u", "u")}, ttl.ErrInvalidOption, `"u" is named twice`},
		{"bad other family", api, one, []ttl.Option{ttl.OtherFamilies("-u")}, ttl.ErrInvalidOption, `"-u"`},
	} {
		got, err := ttl.NewTable(tt.tbl, tt.families, tt.opts...)
		assert.Nil(t, got, tt.name)
		if assert.ErrorIs(t, err, tt.want, tt.name) {
			assert.Contains(t, err.Error(), tt.msg, tt.name)
		}
	}
}

// TestAnyTableAPI checks that the table passes every call, once, to the
// bigtable.TableAPI it wraps, as it must for an authorized view.
func TestAnyTableAPI(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil, "u": nil})
	rec := &testkit.Recorder{TableAPI: raw}
	tbl, err := ttl.NewTable(rec, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)}, ttl.WithClock(clock.Now))
	require.NoError(t, err)

	require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("f", "c", "v", ttl.Default)))
	_, err = tbl.ApplyBulk(ctx, []string{"a"}, []*ttl.Mutation{testkit.Set("f", "c", "v", ttl.Default)})
	require.NoError(t, err)
	_, err = tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	require.NoError(t, tbl.ReadRows(ctx, bigtable.RowList{"r"}, func(bigtable.Row) bool { return true }))
	keys, err := tbl.SampleRowKeys(ctx)
	require.NoError(t, err)
	assert.Contains(t, keys, "r", "bttest samples at random but always returns the last key")
	rmw := ttl.NewReadModifyWrite()
	rmw.Increment("u", "n", 1)
	_, err = tbl.ApplyReadModifyWrite(ctx, "r", rmw)
	require.NoError(t, err)
	assert.Equal(t, []string{"Apply", "ApplyBulk(1)", "ReadRow", "ReadRows", "SampleRowKeys", "ApplyReadModifyWrite"}, rec.Calls())
}

// TestZeroTable checks that a Table not made by NewTable refuses every
// call instead of panicking.
func TestZeroTable(t *testing.T) {
	ctx := context.Background()
	for _, tbl := range []*ttl.Table{nil, new(ttl.Table)} {
		assert.ErrorIs(t, tbl.Apply(ctx, "r", testkit.Set("f", "c", "v", ttl.Default)), ttl.ErrNilArgument)
		_, err := tbl.ApplyBulk(ctx, nil, nil)
		assert.ErrorIs(t, err, ttl.ErrNilArgument)
		_, err = tbl.ReadRow(ctx, "r")
		assert.ErrorIs(t, err, ttl.ErrNilArgument)
		assert.ErrorIs(t, tbl.ReadRows(ctx, bigtable.RowList{"r"}, func(bigtable.Row) bool { return true }), ttl.ErrNilArgument)
		_, err = tbl.ApplyReadModifyWrite(ctx, "r", ttl.NewReadModifyWrite())
		assert.ErrorIs(t, err, ttl.ErrNilArgument)
		_, err = tbl.SampleRowKeys(ctx)
		assert.ErrorIs(t, err, ttl.ErrNilArgument)
		_, ok := tbl.ExpiresAt(bigtable.ReadItem{Column: "f:c"})
		assert.False(t, ok)
		assert.Equal(t, bigtable.BlockAllFilter().String(), tbl.ReadFilter(testkit.Base).String())
	}
}

// TestOtherFamiliesTwoCalls checks that a name declared by two calls of
// OtherFamilies is declared once, and that a family neither managed nor
// declared is refused with the nearest name.
func TestOtherFamiliesTwoCalls(t *testing.T) {
	api := &testkit.Recorder{}
	tbl, err := ttl.NewTable(api, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttl.OtherFamilies("meta"), ttl.OtherFamilies("meta", "u"))
	require.NoError(t, err)
	m := ttl.NewMutation()
	m.Set("metaa", "c", []byte("v"), ttl.Default)
	err = tbl.Apply(context.Background(), "r", m)
	assert.ErrorIs(t, err, ttl.ErrUnknownFamily)
	assert.Contains(t, err.Error(), `"metaa" is neither managed nor declared with OtherFamilies (column "c") (did you mean "meta"?)`)
	m = ttl.NewMutation()
	m.Set("zzzzzz", "c", []byte("v"), ttl.Default)
	err = tbl.Apply(context.Background(), "r", m)
	assert.ErrorIs(t, err, ttl.ErrUnknownFamily)
	assert.NotContains(t, err.Error(), "did you mean")
}

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

// Mutations the Table refuses, whole and before anything is sent: every
// invalid change (badMutations, from which docs/errors.md's table of refused
// inputs is also generated), every invalid shape of mutation, and the nil
// arguments of every call.

// TestBadMutationsWriteNothing checks every invalid change: the whole
// mutation is refused with its sentinel and a message naming what is at
// fault, and nothing is sent.
func TestBadMutationsWriteNothing(t *testing.T) {
	ctx := context.Background()
	for _, tt := range badMutations {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(now)
			managed := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(48 * time.Hour), "rev": ttl.SequenceNumbers(3), "hits": ttl.Counter(ttl.OneSecond())}
			fams := map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil, "rev": nil, "meta": nil, "hits": nil}
			raw := emulator.StartForTest(t).TableForTest(t, "t", fams)
			rec := &testkit.Recorder{TableAPI: raw}
			tbl, err := ttl.NewTable(rec, managed, append([]ttl.Option{ttl.WithClock(clock.Now)}, tt.opts...)...)
			require.NoError(t, err)

			m := ttl.NewMutation()
			m.Set("sess", "good", []byte("x"), ttl.For(time.Hour)) // a valid change before the bad one
			tt.mutate(m)
			err = tbl.Apply(ctx, "r", m)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Empty(t, rec.Calls(), "calls sent")
			assert.Empty(t, testkit.Cells(testkit.RawRow(t, raw, "r")), "cells written")

			errs, err := tbl.ApplyBulk(ctx, []string{"r"}, []*ttl.Mutation{m})
			require.NoError(t, err)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], tt.want, "ApplyBulk")
			assert.Empty(t, rec.Calls(), "calls sent by ApplyBulk")
		})
	}
}

// badMutation is one invalid change, the sentinel it gets and a part of
// its message. docs/errors.md's table of refused inputs is checked against this
// list.
type badMutation struct {
	name   string
	opts   []ttl.Option
	mutate func(*ttl.Mutation)
	want   error
	msg    string
}

// now is the instant the tests' clock reads, as a user's time.Now()
// would: docs/errors.md shows the inputs as written here.
var now = testkit.Base

var badMutations = []badMutation{
	{"expired For", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.For(-time.Second)) }, ttl.ErrExpired, `family "sess", column "c"`},
	{"zero For", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.For(0)) }, ttl.ErrExpired, "For(0s)"},
	{"sub-millisecond For", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.For(time.Microsecond)) }, ttl.ErrExpired, "For(1µs)"},
	{"Until now", nil, func(m *ttl.Mutation) { m.Set("clicks", "c", nil, ttl.Until(now)) }, ttl.ErrExpired, `family "clicks", column "c"`},
	{"Until before 1970", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.Until(time.Unix(-1, 0))) }, ttl.ErrExpired, "Until(1969"},
	{"Until after 294,247", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.Until(now.AddDate(300000, 0, 0))) }, ttl.ErrOutOfRange, "year 294,247"},
	{"Default in OneSecond", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.Default) }, ttl.ErrLifetime, "OneSecond() has no default"},
	{"Version in a time family", nil, func(m *ttl.Mutation) { m.Replace("clicks", "c", nil, ttl.Version(1)) }, ttl.ErrLifetime, "Version(1)"},
	{"For in SequenceNumbers", nil, func(m *ttl.Mutation) { m.Set("rev", "c", nil, ttl.For(time.Hour)) }, ttl.ErrLifetime, `family "rev", column "c"`},
	{"Forever in SequenceNumbers", nil, func(m *ttl.Mutation) { m.Set("rev", "c", nil, ttl.Forever) }, ttl.ErrLifetime, "Forever"},
	{"negative Version", nil, func(m *ttl.Mutation) { m.Set("rev", "c", nil, ttl.Version(-1)) }, ttl.ErrOutOfRange, "Version(-1)"},
	{"Version too large", nil, func(m *ttl.Mutation) { m.Set("rev", "c", nil, ttl.Version(1<<62)) }, ttl.ErrOutOfRange, "sequence numbers run from 0"},
	{"For in a family without a strategy", nil, func(m *ttl.Mutation) { m.Set("meta", "c", nil, ttl.For(time.Hour)) }, ttl.ErrLifetime, `family "meta", column "c"`},
	{"empty family", nil, func(m *ttl.Mutation) { m.Set("", "c", nil, ttl.Default) }, ttl.ErrUnknownFamily, `empty family name (column "c")`},
	{"family name Bigtable refuses", nil, func(m *ttl.Mutation) { m.DeleteCellsInColumn("a b", "c") }, ttl.ErrUnknownFamily, `family name "a b" is not`},
	{"undeclared family", []ttl.Option{ttl.OtherFamilies()}, func(m *ttl.Mutation) { m.Set("meta", "c", nil, ttl.Default) }, ttl.ErrUnknownFamily, `"meta" is neither managed nor declared`},
	{"delete in undeclared family", []ttl.Option{ttl.OtherFamilies()}, func(m *ttl.Mutation) { m.DeleteCellsInFamily("meta") }, ttl.ErrUnknownFamily, `"meta"`},
	{"within the read margin", []ttl.Option{ttl.WithReadMargin(time.Minute)}, func(m *ttl.Mutation) { m.Set("clicks", "c", nil, ttl.For(time.Minute)) }, ttl.ErrExpired, "within the read margin of 1m0s"},
	{"reserved column", []ttl.Option{ttl.RecordWriteTime()}, func(m *ttl.Mutation) { m.Set("clicks", "\xff\xffx", nil, ttl.Default) }, ttl.ErrReservedColumn, `column "\xff\xffx"`},
	{"reserved column deleted", []ttl.Option{ttl.RecordWriteTime()}, func(m *ttl.Mutation) { m.DeleteCellsInColumn("sess", "\xff\xffwt:good") }, ttl.ErrReservedColumn, `family "sess"`},
	{"counter in a plain family", nil, func(m *ttl.Mutation) { m.Add("sess", "n", 1, ttl.Window{Size: time.Minute, Keep: time.Hour}) }, ttl.ErrCounter, `Add to "sess"`},
	{"Set in a counter family", nil, func(m *ttl.Mutation) { m.Set("hits", "n", nil, ttl.For(time.Hour)) }, ttl.ErrCounter, `family "hits"`},
	{"window that does not divide a day", nil, func(m *ttl.Mutation) { m.Add("hits", "n", 1, ttl.Window{Size: 7 * time.Minute, Keep: time.Hour}) }, ttl.ErrLifetime, "7m0s"},
	{"window kept a negative time", nil, func(m *ttl.Mutation) { m.Add("hits", "n", 1, ttl.Window{Size: time.Minute, Keep: -time.Second}) }, ttl.ErrLifetime, "-1s"},
	{"counter of a reserved column", []ttl.Option{ttl.RecordWriteTime()}, func(m *ttl.Mutation) { m.Add("hits", "\xff\xffn", 1, ttl.Window{Size: time.Minute, Keep: time.Hour}) }, ttl.ErrReservedColumn, `family "hits"`},
}

// TestInvalidMutations checks the mutations Bigtable cannot take.
func TestInvalidMutations(t *testing.T) {
	ctx := context.Background()
	tbl, rec, _ := testkit.RecordedTable(t)
	good := testkit.Set("f", "c", "v", ttl.For(time.Hour))
	bad := testkit.Set("f", "c", "v", ttl.For(-time.Hour))
	withOwn := ttl.NewCondMutation(nil, good, nil)
	withOwn.Set("f", "c", nil, ttl.For(time.Hour))
	for _, tt := range []struct {
		name string
		m    *ttl.Mutation
		want error
		msg  string
	}{
		{"nil", nil, ttl.ErrInvalidMutation, "nil mutation"},
		{"empty", ttl.NewMutation(), ttl.ErrInvalidMutation, "no changes"},
		{"conditional without branches", ttl.NewCondMutation(nil, nil, ttl.NewMutation()), ttl.ErrInvalidMutation, "either branch"},
		{"nested conditional", ttl.NewCondMutation(nil, ttl.NewCondMutation(nil, good, nil), nil), ttl.ErrInvalidMutation, "branch of another"},
		{"conditional with own changes", withOwn, ttl.ErrInvalidMutation, "put them in its branches"},
		{"bad cell in a branch", ttl.NewCondMutation(nil, good, bad), ttl.ErrExpired, "For(-1h0m0s)"},
	} {
		err := tbl.Apply(ctx, "r", tt.m)
		require.ErrorIs(t, err, tt.want, tt.name)
		assert.Contains(t, err.Error(), tt.msg, tt.name)
	}
	assert.Empty(t, rec.Calls())

	_, err := tbl.ApplyBulk(ctx, []string{"a", "b"}, []*ttl.Mutation{good})
	require.ErrorIs(t, err, ttl.ErrInvalidMutation)
	assert.Contains(t, err.Error(), "2 rows but 1 mutations")

	for name, call := range map[string]func() error{
		"Apply":         func() error { return tbl.Apply(nil, "r", good) },                              //lint:ignore SA1012 a nil context is the input under test
		"ApplyBulk":     func() error { _, err := tbl.ApplyBulk(nil, nil, nil); return err },            //lint:ignore SA1012 as above
		"ReadRow":       func() error { _, err := tbl.ReadRow(nil, "r"); return err },                   //lint:ignore SA1012 as above
		"ReadRows":      func() error { return tbl.ReadRows(nil, bigtable.RowList{"r"}, nil) },          //lint:ignore SA1012 as above
		"RMW":           func() error { _, err := tbl.ApplyReadModifyWrite(nil, "r", nil); return err }, //lint:ignore SA1012 as above
		"SampleRowKeys": func() error { _, err := tbl.SampleRowKeys(nil); return err },                  //lint:ignore SA1012 as above
		"nil row set":   func() error { return tbl.ReadRows(ctx, nil, func(bigtable.Row) bool { return true }) },
		"nil RowList": func() error {
			return tbl.ReadRows(ctx, (*bigtable.RowRange)(nil), func(bigtable.Row) bool { return true })
		},
		"nil callback": func() error { return tbl.ReadRows(ctx, bigtable.RowList{"r"}, nil) },
	} {
		assert.ErrorIs(t, call(), ttl.ErrNilArgument, name)
	}
	assert.Empty(t, rec.Calls())
}

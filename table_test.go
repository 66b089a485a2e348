package ttl_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// recorder is a bigtable.TableAPI that records the calls it passes on, as
// an authorized view or any other implementation would receive them.
type recorder struct {
	bigtable.TableAPI
	mu    sync.Mutex
	calls []string
}

func (r *recorder) record(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *recorder) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	r.record("ReadRows")
	return r.TableAPI.ReadRows(ctx, rs, f, opts...)
}

func (r *recorder) ReadRow(ctx context.Context, row string, opts ...bigtable.ReadOption) (bigtable.Row, error) {
	r.record("ReadRow")
	return r.TableAPI.ReadRow(ctx, row, opts...)
}

func (r *recorder) SampleRowKeys(ctx context.Context) ([]string, error) {
	r.record("SampleRowKeys")
	return r.TableAPI.SampleRowKeys(ctx)
}

func (r *recorder) Apply(ctx context.Context, row string, m *bigtable.Mutation, opts ...bigtable.ApplyOption) error {
	r.record("Apply")
	return r.TableAPI.Apply(ctx, row, m, opts...)
}

func (r *recorder) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	r.record(fmt.Sprintf("ApplyBulk(%d)", len(rows)))
	return r.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
}

func (r *recorder) ApplyReadModifyWrite(ctx context.Context, row string, m *bigtable.ReadModifyWrite) (bigtable.Row, error) {
	r.record("ApplyReadModifyWrite")
	return r.TableAPI.ApplyReadModifyWrite(ctx, row, m)
}

// set returns a mutation of one Set.
func set(family, column, value string, life ttl.Lifetime) *ttl.Mutation {
	m := ttl.NewMutation()
	m.Set(family, column, []byte(value), life)
	return m
}

// TestAprilThirty is the documents' one-second example: a cell that should
// expire on April 30 at 09:00:00 is stamped with that instant and hidden
// from it on.
func TestAprilThirty(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base.Add(-time.Hour))
	tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, nil)
	require.NoError(t, tbl.Apply(ctx, "r", set("sess", "token", "abc", ttl.Until(base))))

	assert.Equal(t, []cell{{"sess:token", "abc", ms(base)}}, cells(rawRow(t, raw, "r")), "stored timestamp is the expiry")
	for _, tt := range []struct {
		at   time.Time
		want []string
	}{
		{base.Add(-time.Millisecond), []string{"sess:token=abc"}},
		{base.Add(-time.Nanosecond), []string{"sess:token=abc"}},
		{base, nil},
		{base.Add(time.Millisecond), nil},
	} {
		clock.Set(tt.at)
		r, err := tbl.ReadRow(ctx, "r")
		require.NoError(t, err)
		assert.Equal(t, tt.want, values(r), "ReadRow at %v", tt.at.Format(time.RFC3339Nano))
	}
}

// TestClickEvents is the documents' default-expiration example: click
// events kept two days, one customer one hour and one three days.
func TestClickEvents(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(48 * time.Hour)}, nil)
	lifeOf := map[int]ttl.Lifetime{3: ttl.For(time.Hour), 7: ttl.For(72 * time.Hour)}
	for i := 0; i < 10; i++ {
		require.NoError(t, tbl.Apply(ctx, fmt.Sprintf("customer%d", i), set("clicks", "home", "1", lifeOf[i])))
	}

	// The stored timestamps: the real write time, earlier, later.
	assert.Equal(t, ms(base), cells(rawRow(t, raw, "customer0"))[0].TS, "Default: the write time")
	assert.Equal(t, ms(base.Add(time.Hour-48*time.Hour)), cells(rawRow(t, raw, "customer3"))[0].TS, "For(1h): 47h earlier")
	assert.Equal(t, ms(base.Add(24*time.Hour)), cells(rawRow(t, raw, "customer7"))[0].TS, "For(72h): 24h later")

	visible := func() []string {
		var got []string
		require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
			got = append(got, r.Key())
			return true
		}))
		return got
	}
	all := []string{"customer0", "customer1", "customer2", "customer3", "customer4", "customer5", "customer6", "customer7", "customer8", "customer9"}
	noThree := append(append([]string(nil), all[:3]...), all[4:]...)
	for _, tt := range []struct {
		after time.Duration
		want  []string
	}{
		{0, all},
		{time.Hour - time.Millisecond, all},
		{time.Hour, noThree},
		{time.Hour + time.Millisecond, noThree},
		{48*time.Hour - time.Millisecond, noThree},
		{48 * time.Hour, []string{"customer7"}},
		{48*time.Hour + time.Millisecond, []string{"customer7"}},
		{72*time.Hour - time.Millisecond, []string{"customer7"}},
		{72 * time.Hour, nil},
		{72*time.Hour + time.Millisecond, nil},
	} {
		clock.Set(base.Add(tt.after))
		assert.Equal(t, tt.want, visible(), "rows visible %v after the write", tt.after)
	}
}

// TestFiveVersions is the documents' sequence-number example: five
// versions under a three-version policy.
func TestFiveVersions(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"rev": ttl.SequenceNumbers(3)}, nil)
	for v := int64(1); v <= 5; v++ {
		require.NoError(t, tbl.Apply(ctx, "doc", set("rev", "body", fmt.Sprintf("v%d", v), ttl.Version(v))))
	}
	assert.Len(t, cells(rawRow(t, raw, "doc")), 5, "all five are stored until GC")
	r, err := tbl.ReadRow(ctx, "doc")
	require.NoError(t, err)
	assert.Equal(t, []cell{{"rev:body", "v5", 5000}, {"rev:body", "v4", 4000}, {"rev:body", "v3", 3000}}, cells(r))

	r, err = tbl.ReadRow(ctx, "doc", ttl.RowFilter(bigtable.LatestNFilter(1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"rev:body=v5"}, values(r))
}

// TestOneClockReadingPerCall checks that each call reads the clock once and
// uses it for every cell: all cells of a mutation and of a bulk write get
// timestamps from the same instant.
func TestOneClockReadingPerCall(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)}, []string{"u"})

	m := ttl.NewMutation()
	for i := 0; i < 5; i++ {
		m.Set("f", fmt.Sprint(i), nil, ttl.Default)
	}
	m.Set("u", "x", nil, ttl.Default)
	before := clock.Reads()
	require.NoError(t, tbl.Apply(ctx, "r", m))
	assert.Equal(t, 1, clock.Reads()-before, "clock reads in Apply")
	for _, c := range cells(rawRow(t, raw, "r")) {
		assert.Equal(t, ms(base), c.TS, "cell %s", c.Column)
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

// TestUnmanagedFamilies checks that families without a strategy are read
// back unchanged and take only Default writes, stamped at the clock's now.
func TestUnmanagedFamilies(t *testing.T) {
	ctx := context.Background()
	for _, declared := range []bool{false, true} {
		t.Run(fmt.Sprintf("declared=%v", declared), func(t *testing.T) {
			clock := newClock(base)
			var opts []ttl.Option
			if declared {
				opts = append(opts, ttl.OtherFamilies("meta"))
			}
			tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, []string{"meta"}, opts...)

			old := bigtable.NewMutation()
			old.Set("meta", "old", 1000, []byte("from 1970")) // written by another client
			require.NoError(t, raw.Apply(ctx, "r", old))
			require.NoError(t, tbl.Apply(ctx, "r", set("meta", "owner", "ann", ttl.Default)))
			for _, life := range []ttl.Lifetime{ttl.For(time.Hour), ttl.Until(base.Add(time.Hour)), ttl.Version(1), ttl.Forever} {
				err := tbl.Apply(ctx, "r", set("meta", "owner", "bob", life))
				require.ErrorIs(t, err, ttl.ErrLifetime, "%v", life)
				assert.Contains(t, err.Error(), `family "meta", column "owner"`)
			}

			clock.Advance(1000 * time.Hour)
			r, err := tbl.ReadRow(ctx, "r")
			require.NoError(t, err)
			assert.Equal(t, []cell{{"meta:old", "from 1970", 1000}, {"meta:owner", "ann", ms(base)}}, cells(r))
		})
	}
}

// TestBadMutationsWriteNothing checks every invalid change: the whole
// mutation is refused with its sentinel and a message naming what is at
// fault, and nothing is sent.
func TestBadMutationsWriteNothing(t *testing.T) {
	ctx := context.Background()
	for _, tt := range badMutations {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock(base)
			managed := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(48 * time.Hour), "rev": ttl.SequenceNumbers(3)}
			fams := map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil, "rev": nil, "meta": nil}
			raw := emulator.StartForTest(t).TableForTest(t, "t", fams)
			rec := &recorder{TableAPI: raw}
			tbl, err := ttl.NewTable(rec, managed, append([]ttl.Option{ttl.WithClock(clock.Now)}, tt.opts...)...)
			require.NoError(t, err)

			m := ttl.NewMutation()
			m.Set("sess", "good", []byte("x"), ttl.For(time.Hour)) // a valid change before the bad one
			tt.mutate(m)
			err = tbl.Apply(ctx, "r", m)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Empty(t, rec.Calls(), "calls sent")
			assert.Empty(t, cells(rawRow(t, raw, "r")), "cells written")

			errs, err := tbl.ApplyBulk(ctx, []string{"r"}, []*ttl.Mutation{m})
			require.NoError(t, err)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], tt.want, "ApplyBulk")
			assert.Empty(t, rec.Calls(), "calls sent by ApplyBulk")
		})
	}
}

// badMutation is one invalid change, the sentinel it gets and a part of
// its message. README.md's table of refused inputs is checked against this
// list.
type badMutation struct {
	name   string
	opts   []ttl.Option
	mutate func(*ttl.Mutation)
	want   error
	msg    string
}

var badMutations = []badMutation{
	{"expired For", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.For(-time.Second)) }, ttl.ErrExpired, `family "sess", column "c"`},
	{"zero For", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.For(0)) }, ttl.ErrExpired, "For(0s)"},
	{"sub-millisecond For", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.For(time.Microsecond)) }, ttl.ErrExpired, "For(1µs)"},
	{"Until now", nil, func(m *ttl.Mutation) { m.Set("clicks", "c", nil, ttl.Until(base)) }, ttl.ErrExpired, `family "clicks", column "c"`},
	{"Until before 1970", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.Until(time.Unix(-1, 0))) }, ttl.ErrExpired, "Until(1969"},
	{"Until after 294,247", nil, func(m *ttl.Mutation) { m.Set("sess", "c", nil, ttl.Until(base.AddDate(300000, 0, 0))) }, ttl.ErrOutOfRange, "year 294,247"},
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
}

// TestInvalidMutations checks the mutations Bigtable cannot take.
func TestInvalidMutations(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	rec := &recorder{TableAPI: raw}
	tbl, err := ttl.NewTable(rec, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(clock.Now))
	require.NoError(t, err)
	good := set("f", "c", "v", ttl.For(time.Hour))
	bad := set("f", "c", "v", ttl.For(-time.Hour))
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

	_, err = tbl.ApplyBulk(ctx, []string{"a", "b"}, []*ttl.Mutation{good})
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

// TestApplyBulkPerRowErrors checks that bad mutations are reported at
// their own index and not sent, and the others are applied.
func TestApplyBulkPerRowErrors(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil})
	rec := &recorder{TableAPI: raw}
	tbl, err := ttl.NewTable(rec, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(clock.Now))
	require.NoError(t, err)
	good := func(v string) *ttl.Mutation { return set("f", "c", v, ttl.For(time.Hour)) }
	rows := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	muts := []*ttl.Mutation{good("0"), set("f", "c", "1", ttl.For(-1)), good("2"), nil, ttl.NewCondMutation(nil, good("4"), nil), good("5")}
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

// TestRowFilterAfterExpiry checks that the caller's filter sees only live
// cells: a per-row limit of one returns the first live cell, where applied
// before expiry filtering it would take the expired one and return
// nothing.
func TestRowFilterAfterExpiry(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, _ := newTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil, ttl.OtherFamilies())
	m := ttl.NewMutation()
	m.Set("f", "a", []byte("soon"), ttl.For(time.Minute))
	m.Set("f", "b", []byte("later"), ttl.For(time.Hour))
	require.NoError(t, tbl.Apply(ctx, "r", m))
	clock.Advance(time.Minute)

	r, err := tbl.ReadRow(ctx, "r", ttl.RowFilter(bigtable.CellsPerRowLimitFilter(1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"f:b=later"}, values(r))
	assert.Equal(t, "(timestamp_range(1903770060001000,0) | cells_per_row_limit(1))",
		bigtable.ChainFilters(tbl.ReadFilter(clock.Now()), bigtable.CellsPerRowLimitFilter(1)).String())
}

// TestReadOptions checks that Bigtable's other read options keep working
// and that no option can drop the expiry filter.
func TestReadOptions(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond()}, nil)
	for i := 0; i < 5; i++ {
		require.NoError(t, tbl.Apply(ctx, fmt.Sprintf("r%d", i), set("f", "c", "live", ttl.For(time.Hour))))
		m := bigtable.NewMutation()
		m.Set("f", "old", ms(base), []byte("expired")) // expires at base
		require.NoError(t, raw.Apply(ctx, fmt.Sprintf("r%d", i), m))
	}
	var keys []string
	collect := func(r bigtable.Row) bool {
		keys = append(keys, r.Key())
		assert.Equal(t, []string{"f:c=live"}, values(r))
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
	now := base
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
			tbl, err := ttl.NewTable(&recorder{}, tt.managed, tt.opts...)
			require.NoError(t, err)
			got := tbl.ReadFilter(now).String()
			assert.Equal(t, tt.want, got)
			if strings.Contains(tt.name, "declared,") {
				assert.NotRegexp(t, `col\([^*]`, got, "a declared table's filter has no FamilyFilter or ColumnFilter")
			}
		})
	}
}

// TestOtherFamilies checks a table whose families are declared: every
// kind of family reads as it should, undeclared families are neither
// returned nor written.
func TestOtherFamilies(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	managed := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(time.Hour), "rev": ttl.SequenceNumbers(1)}
	tbl, raw := newTable(t, clock, managed, []string{"meta", "hidden"}, ttl.OtherFamilies("meta"))
	m := ttl.NewMutation()
	m.Set("sess", "s", []byte("1"), ttl.For(time.Minute))
	m.Set("clicks", "c", []byte("2"), ttl.For(2*time.Hour))
	m.Set("rev", "v", []byte("3"), ttl.Version(1))
	m.Set("rev", "v", []byte("4"), ttl.Version(2))
	m.Set("meta", "m", []byte("5"), ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	h := bigtable.NewMutation()
	h.Set("hidden", "h", bigtable.Now(), []byte("6"))
	require.NoError(t, raw.Apply(ctx, "r", h))

	r, err := tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"clicks:c=2", "meta:m=5", "rev:v=4", "sess:s=1"}, values(r))
	clock.Advance(time.Minute)
	r, err = tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"clicks:c=2", "meta:m=5", "rev:v=4"}, values(r))
	clock.Advance(2 * time.Hour)
	r, err = tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"meta:m=5", "rev:v=4"}, values(r))

	err = tbl.Apply(ctx, "r", set("hidden", "h", "x", ttl.Default))
	assert.ErrorIs(t, err, ttl.ErrUnknownFamily)
}

// TestConditionalLock checks that a conditional mutation's predicate sees
// only live cells: a lock is taken while free, refused while held, and
// taken again once the holder's cell has expired, although it is still
// stored.
func TestConditionalLock(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"lock": ttl.OneSecond()}, nil, ttl.OtherFamilies())
	owner := bigtable.ColumnRangeFilter("lock", "owner", "owner\x00")
	take := func(who string) bool {
		t.Helper()
		var held bool
		m := ttl.NewCondMutation(owner, nil, set("lock", "owner", who, ttl.For(10*time.Second)))
		require.NoError(t, tbl.Apply(ctx, "job", m, bigtable.GetCondMutationResult(&held)))
		return !held
	}
	assert.True(t, take("ann"), "free lock")
	clock.Advance(10*time.Second - time.Millisecond)
	assert.False(t, take("bob"), "held lock")
	clock.Advance(time.Millisecond)
	assert.True(t, take("bob"), "expired lock")
	assert.Len(t, cells(rawRow(t, raw, "job")), 2, "the expired cell is still stored")
	r, err := tbl.ReadRow(ctx, "job")
	require.NoError(t, err)
	assert.Equal(t, []string{"lock:owner=bob"}, values(r))

	// A nil predicate matches any live cell.
	clock.Advance(time.Minute)
	var matched bool
	require.NoError(t, tbl.Apply(ctx, "job", ttl.NewCondMutation(nil, set("lock", "x", "t", ttl.For(time.Hour)), set("lock", "x", "f", ttl.For(time.Hour))),
		bigtable.GetCondMutationResult(&matched)))
	assert.False(t, matched, "only expired cells in the row")
}

// TestReplaceLastWriteWins shows the pitfall Replace removes: under a time
// strategy a newer write with a shorter lifetime has a smaller timestamp,
// so with Set the older value stays newest and comes back.
func TestReplaceLastWriteWins(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, raw := newTable(t, clock, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(48 * time.Hour)}, nil)
	latest := ttl.RowFilter(bigtable.LatestNFilter(1))
	read := func(row string) []string {
		r, err := tbl.ReadRow(ctx, row, latest)
		require.NoError(t, err)
		return values(r)
	}
	for _, row := range []string{"set", "replace"} {
		require.NoError(t, tbl.Apply(ctx, row, set("f", "c", "old", ttl.For(72*time.Hour))))
	}
	clock.Advance(time.Minute)
	require.NoError(t, tbl.Apply(ctx, "set", set("f", "c", "new", ttl.For(time.Hour))))
	m := ttl.NewMutation()
	m.Replace("f", "c", []byte("new"), ttl.For(time.Hour))
	require.NoError(t, tbl.Apply(ctx, "replace", m))

	assert.Equal(t, []string{"f:c=old"}, read("set"), "Set: the older value wins")
	assert.Equal(t, []string{"f:c=new"}, read("replace"), "Replace: the newer value wins")
	assert.Len(t, cells(rawRow(t, raw, "replace")), 1, "Replace deleted the old cell")
	clock.Advance(time.Hour)
	assert.Equal(t, []string{"f:c=old"}, read("set"), "Set: the older value resurfaces")
	assert.Empty(t, read("replace"), "Replace: nothing resurfaces")
}

// TestDeletes checks the delete recipes on managed and unmanaged families.
func TestDeletes(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, _ := newTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond(), "g": ttl.SequenceNumbers(2)}, []string{"u"})
	fill := ttl.NewMutation()
	for _, c := range []string{"a", "b"} {
		fill.Set("f", c, []byte(c), ttl.For(time.Hour))
		fill.Set("g", c, []byte(c), ttl.Version(1))
		fill.Set("u", c, []byte(c), ttl.Default)
	}
	read := func() []string {
		r, err := tbl.ReadRow(ctx, "r")
		require.NoError(t, err)
		return values(r)
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

// TestReadModifyWrite checks where server timestamps are allowed, and that
// an expired counter restarts instead of resurfacing. The emulator stamps
// read-modify-write cells with its real clock, so this test's clock starts
// at the real time.
func TestReadModifyWrite(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	clock := newClock(now)
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"sess": nil, "hits": nil, "rev": nil, "meta": nil})
	rec := &recorder{TableAPI: raw}
	tbl, err := ttl.NewTable(rec, map[string]ttl.Strategy{
		"sess": ttl.OneSecond(), "hits": ttl.DefaultExpiration(48 * time.Hour), "rev": ttl.SequenceNumbers(3),
	}, ttl.WithClock(clock.Now))
	require.NoError(t, err)
	incr := func(family string) (bigtable.Row, error) {
		m := ttl.NewReadModifyWrite()
		m.Increment(family, "n", 1)
		return tbl.ApplyReadModifyWrite(ctx, "r", m)
	}
	for _, family := range []string{"sess", "rev"} {
		_, err := incr(family)
		require.ErrorIs(t, err, ttl.ErrServerTimestamp, family)
		assert.Contains(t, err.Error(), fmt.Sprintf(`family %q, column "n"`, family))
	}
	_, err = tbl.ApplyReadModifyWrite(ctx, "r", ttl.NewReadModifyWrite())
	assert.ErrorIs(t, err, ttl.ErrInvalidMutation)
	assert.Empty(t, rec.Calls(), "refused read-modify-writes send nothing")
	assert.Empty(t, cells(rawRow(t, raw, "r")))

	for _, family := range []string{"hits", "meta"} {
		r, err := incr(family)
		require.NoError(t, err, family)
		assert.Equal(t, uint64(1), binary.BigEndian.Uint64(r[family][0].Value), family)
	}
	app := ttl.NewReadModifyWrite()
	app.AppendValue("meta", "log", []byte("a"))
	app.AppendValue("meta", "log", []byte("b"))
	r, err := tbl.ApplyReadModifyWrite(ctx, "r", app)
	require.NoError(t, err)
	assert.Equal(t, "ab", string(r["meta"][0].Value))

	// A counter written two days and a minute ago has expired: the next
	// increment starts from zero.
	clock.Set(now.Add(-48*time.Hour - time.Minute))
	old := ttl.NewMutation()
	old.Set("hits", "old", binary.BigEndian.AppendUint64(nil, 41), ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", old))
	clock.Set(now)
	m := ttl.NewReadModifyWrite()
	m.Increment("hits", "old", 1)
	r, err = tbl.ApplyReadModifyWrite(ctx, "r", m)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), binary.BigEndian.Uint64(r["hits"][0].Value), "an expired counter restarts")
	r, err = tbl.ReadRow(ctx, "r", ttl.RowFilter(bigtable.ColumnRangeFilter("hits", "old", "old\x00")))
	require.NoError(t, err)
	require.Len(t, r["hits"], 1)
	assert.Equal(t, uint64(1), binary.BigEndian.Uint64(r["hits"][0].Value))
}

// TestNewTableRefuses checks every invalid table configuration.
func TestNewTableRefuses(t *testing.T) {
	api := &recorder{}
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

// TestExpiresAt checks the expiry reported for each kind of cell.
func TestExpiresAt(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, _ := newTable(t, clock, map[string]ttl.Strategy{"s": ttl.OneSecond(), "d": ttl.DefaultExpiration(time.Hour), "v": ttl.SequenceNumbers(1)}, []string{"u"})
	m := ttl.NewMutation()
	m.Set("s", "for", nil, ttl.For(time.Minute+1500*time.Microsecond))
	m.Set("s", "forever", nil, ttl.Forever)
	m.Set("d", "default", nil, ttl.Default)
	m.Set("d", "until", nil, ttl.Until(base.Add(3*time.Hour)))
	m.Set("d", "forever", nil, ttl.Forever)
	m.Set("v", "v", nil, ttl.Version(9))
	m.Set("u", "u", nil, ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "r", m))
	r, err := tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	want := map[string]time.Time{
		"s:for":     base.Add(time.Minute + time.Millisecond), // rounded down, never late
		"d:default": base.Add(time.Hour),
		"d:until":   base.Add(3 * time.Hour),
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

// TestAnyTableAPI checks that the table passes every call, once, to the
// bigtable.TableAPI it wraps, as it must for an authorized view.
func TestAnyTableAPI(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"f": nil, "u": nil})
	rec := &recorder{TableAPI: raw}
	tbl, err := ttl.NewTable(rec, map[string]ttl.Strategy{"f": ttl.DefaultExpiration(time.Hour)}, ttl.WithClock(clock.Now))
	require.NoError(t, err)

	require.NoError(t, tbl.Apply(ctx, "r", set("f", "c", "v", ttl.Default)))
	_, err = tbl.ApplyBulk(ctx, []string{"a"}, []*ttl.Mutation{set("f", "c", "v", ttl.Default)})
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

// TestConcurrentUse runs writers and readers on one Table at once; run it
// with -race.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	clock := newClock(base)
	tbl, _ := newTable(t, clock, map[string]ttl.Strategy{"f": ttl.OneSecond(), "v": ttl.SequenceNumbers(2)}, nil)
	// bttest races when a write adds a column to a row that a read is
	// streaming (it sorts the row's column names in place), so every
	// column exists before the goroutines start.
	for i := 0; i < 5; i++ {
		m := ttl.NewMutation()
		for g := 0; g < 8; g++ {
			m.Set("f", fmt.Sprint(g), []byte("x"), ttl.For(time.Hour))
		}
		m.Set("v", "c", []byte("x"), ttl.Version(0))
		require.NoError(t, tbl.Apply(ctx, fmt.Sprintf("r%d", i), m))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				row := fmt.Sprintf("r%d", i%5)
				m := ttl.NewMutation()
				m.Set("f", fmt.Sprint(g), []byte("x"), ttl.For(time.Duration(i+1)*time.Minute))
				m.Set("v", "c", []byte("x"), ttl.Version(int64(i)))
				if err := tbl.Apply(ctx, row, m); err != nil {
					errs <- err
					return
				}
				if _, err := tbl.ReadRow(ctx, row); err != nil {
					errs <- err
					return
				}
				clock.Advance(time.Millisecond)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rows := 0
	require.NoError(t, tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		rows++
		assert.Len(t, r["v"], 2, "row %s keeps two versions", r.Key())
		assert.Len(t, r["f"], 8*4+8, "row %s has every writer's four cells and the first ones", r.Key())
		return true
	}))
	assert.Equal(t, 5, rows)
}

// TestZeroTable checks that a Table not made by NewTable refuses every
// call instead of panicking.
func TestZeroTable(t *testing.T) {
	ctx := context.Background()
	for _, tbl := range []*ttl.Table{nil, new(ttl.Table)} {
		assert.ErrorIs(t, tbl.Apply(ctx, "r", set("f", "c", "v", ttl.Default)), ttl.ErrNilArgument)
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
		assert.Equal(t, bigtable.BlockAllFilter().String(), tbl.ReadFilter(base).String())
	}
}

// TestOtherFamiliesTwice checks that the names of every OtherFamilies
// option are declared.
func TestOtherFamiliesTwice(t *testing.T) {
	tbl, err := ttl.NewTable(&recorder{}, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.OtherFamilies("a"), ttl.OtherFamilies("b"))
	require.NoError(t, err)
	assert.Contains(t, tbl.ReadFilter(base).String(), "columnRangeFilter(a,,) + columnRangeFilter(b,,)")
	_, err = ttl.NewTable(&recorder{}, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.OtherFamilies("a"), ttl.OtherFamilies("a"))
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
}

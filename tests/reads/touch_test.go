package reads_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// touchFixture is a table with the families sess (OneSecond), clicks
// (DefaultExpiration(1h)), rev (SequenceNumbers(2)) and meta (none),
// written and read through a recorder, so that tests see the requests, and
// through hook, which runs before every Apply the library sends: a writer
// racing it.
type touchFixture struct {
	t     *testing.T
	clock *testkit.Clock
	rec   *testkit.Recorder
	raw   *bigtable.Table
	tbl   *ttl.Table
	hook  func()
}

func newTouchFixture(t *testing.T, opts ...ttl.Option) *touchFixture {
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil, "rev": nil, "meta": nil})
	x := &touchFixture{t: t, clock: testkit.NewClock(testkit.Base), raw: raw}
	x.rec = &testkit.Recorder{TableAPI: testkit.Hooked{TableAPI: raw, Before: func() {
		if x.hook != nil {
			h := x.hook
			x.hook = nil
			h()
		}
	}}}
	tbl, err := ttl.NewTable(x.rec, map[string]ttl.Strategy{
		"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(time.Hour), "rev": ttl.SequenceNumbers(2),
	}, append([]ttl.Option{ttl.WithClock(x.clock.Now), ttl.OtherFamilies("meta")}, opts...)...)
	require.NoError(t, err)
	x.tbl = tbl
	return x
}

// set writes through the table at at.
func (x *touchFixture) set(at time.Duration, family, column, value string, life ttl.Lifetime) {
	x.t.Helper()
	x.clock.Set(testkit.Base.Add(at))
	require.NoError(x.t, x.tbl.Apply(context.Background(), "r", testkit.Set(family, column, value, life)))
}

// stored returns the raw cells of row r as "family:column=value@offset
// from base".
func (x *touchFixture) stored() []string {
	x.t.Helper()
	var out []string
	for _, c := range testkit.Cells(testkit.RawRow(x.t, x.raw, "r")) {
		out = append(out, fmt.Sprintf("%s=%s@%v", c.Column, c.Value, c.TS.Time().Sub(testkit.Base)))
	}
	return out
}

// calls returns the requests sent since the last call.
func (x *touchFixture) calls() []string {
	c := x.rec.Calls()
	x.rec.Reset()
	return c
}

// TestTouch gives a live cell a new lifetime, keeping its value, making the
// column that one cell.
func TestTouch(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t)
	x.set(0, "sess", "tok", "old", ttl.For(2*time.Minute))
	x.set(0, "sess", "tok", "abc", ttl.For(3*time.Minute)) // the newest: the higher timestamp
	x.calls()

	x.clock.Set(testkit.Base.Add(time.Minute))
	touched, err := x.tbl.Touch(ctx, "r", "sess", "tok", ttl.For(time.Hour))
	require.NoError(t, err)
	assert.True(t, touched)
	assert.Equal(t, []string{"ReadRow", "Apply"}, x.calls(), "one read, one conditional write")
	assert.Equal(t, []string{"sess:tok=abc@1h1m0s"}, x.stored(), "the column is the one cell, stored as its new expiry")

	// Shortening is allowed.
	touched, err = x.tbl.Touch(ctx, "r", "sess", "tok", ttl.For(10*time.Second))
	require.NoError(t, err)
	assert.True(t, touched)
	assert.Equal(t, []string{"sess:tok=abc@1m10s"}, x.stored())

	// DefaultExpiration: Default is the default lifetime from now.
	x.set(time.Minute, "clicks", "n", "1", ttl.For(time.Minute))
	touched, err = x.tbl.Touch(ctx, "r", "clicks", "n", ttl.Default)
	require.NoError(t, err)
	assert.True(t, touched)
	assert.Contains(t, x.stored(), "clicks:n=1@1m0s", "stamped at now: it lives the default from now")
}

// TestTouchNothingToTouch: no cell, an expired one, a deleted one: nothing
// is written and nothing comes back.
func TestTouchNothingToTouch(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t)
	x.set(0, "sess", "gone", "x", ttl.For(time.Minute))
	x.calls()
	for _, at := range []time.Duration{time.Minute, time.Hour} {
		x.clock.Set(testkit.Base.Add(at))
		for _, column := range []string{"gone", "never"} {
			touched, err := x.tbl.Touch(ctx, "r", "sess", column, ttl.For(time.Hour))
			require.NoError(t, err)
			assert.False(t, touched, "%s at %v", column, at)
		}
	}
	assert.Equal(t, []string{"ReadRow", "ReadRow", "ReadRow", "ReadRow"}, x.calls(), "nothing written")
	assert.Equal(t, []string{"sess:gone=x@1m0s"}, x.stored(), "the expired cell is not brought back")
}

// TestTouchConflicts races Touch with every kind of write between its read
// and its write: each wins, and Touch writes nothing.
func TestTouchConflicts(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		race  func(x *touchFixture)
		after []string
	}{
		{"a save in the same millisecond", func(x *touchFixture) {
			x.set(0, "sess", "tok", "new", ttl.For(time.Minute)) // the same timestamp, another value
		}, []string{"sess:tok=new@1m0s"}},
		{"a newer cell", func(x *touchFixture) {
			x.set(0, "sess", "tok", "new", ttl.For(2*time.Minute))
		}, []string{"sess:tok=new@2m0s", "sess:tok=v@1m0s"}},
		{"a replace with a shorter life", func(x *touchFixture) {
			m := ttl.NewMutation()
			m.Replace("sess", "tok", []byte("new"), ttl.For(30*time.Second))
			require.NoError(x.t, x.tbl.Apply(ctx, "r", m))
		}, []string{"sess:tok=new@30s"}},
		{"a delete", func(x *touchFixture) {
			m := ttl.NewMutation()
			m.DeleteCellsInColumn("sess", "tok")
			require.NoError(x.t, x.tbl.Apply(ctx, "r", m))
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := newTouchFixture(t)
			x.set(0, "sess", "tok", "v", ttl.For(time.Minute))
			x.hook = func() { tt.race(x) }
			touched, err := x.tbl.Touch(ctx, "r", "sess", "tok", ttl.For(time.Hour))
			assert.ErrorIs(t, err, ttl.ErrConflict)
			assert.False(t, touched)
			assert.Equal(t, tt.after, x.stored(), "the writer's state stands")
		})
	}
}

// TestTouchRefuses checks what Touch refuses, writing nothing.
func TestTouchRefuses(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t, ttl.RecordWriteTime(), ttl.WithReadMargin(time.Minute))
	for _, tt := range []struct {
		family, column string
		life           ttl.Lifetime
		want           error
	}{
		{"rev", "v", ttl.For(time.Hour), ttl.ErrLifetime},
		{"meta", "m", ttl.Default, ttl.ErrLifetime},
		{"nope", "m", ttl.Default, ttl.ErrUnknownFamily},
		{"sess", "\xff\xffwt:c", ttl.For(time.Hour), ttl.ErrReservedColumn},
		{"sess", "c", ttl.For(-time.Second), ttl.ErrExpired},
		{"sess", "c", ttl.For(30 * time.Second), ttl.ErrExpired}, // within the read margin
		{"sess", "c", ttl.Default, ttl.ErrLifetime},
	} {
		touched, err := x.tbl.Touch(ctx, "r", tt.family, tt.column, tt.life)
		assert.ErrorIs(t, err, tt.want, "%s:%s %v", tt.family, tt.column, tt.life)
		assert.False(t, touched)
	}
	assert.Empty(t, x.calls(), "refused before anything is sent")
	_, err := x.tbl.Touch(nil, "r", "sess", "c", ttl.For(time.Hour)) //lint:ignore SA1012 a nil context is the input under test
	assert.ErrorIs(t, err, ttl.ErrNilArgument)
}

// TestTouchKeepsWriteTime: under RecordWriteTime a touched cell keeps the
// time it was written.
func TestTouchKeepsWriteTime(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t, ttl.RecordWriteTime())
	x.set(0, "sess", "tok", "abc", ttl.For(time.Minute))
	x.clock.Set(testkit.Base.Add(30 * time.Second))
	touched, err := x.tbl.Touch(ctx, "r", "sess", "tok", ttl.For(time.Hour))
	require.NoError(t, err)
	require.True(t, touched)
	row, err := x.tbl.ReadRow(ctx, "r", ttl.WithWriteTimes())
	require.NoError(t, err)
	written, ok := ttl.WriteTime(row["sess"][0])
	assert.True(t, ok)
	assert.True(t, written.Equal(testkit.Base), "written at %v, want the original write time %v", written, testkit.Base)
	assert.Equal(t, []string{"sess:tok=abc@1h0m30s", "sess:\xff\xffwt:tok=" + string(encodeMicros(testkit.Base)) + "@1h0m30s"}, x.stored())
}

// encodeMicros is a write-time companion's value.
func encodeMicros(t time.Time) []byte {
	us := t.UnixMicro()
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(us)
		us >>= 8
	}
	return b
}

// TestTouchNoLostUpdates runs a writer saving new values and a toucher at
// the same instant (a save and a touch share a millisecond): the last
// value saved is what stays, whatever the interleaving.
func TestTouchNoLostUpdates(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t)
	x.set(0, "sess", "tok", "v0", ttl.For(time.Hour))
	const saves = 200
	var wg sync.WaitGroup
	wg.Add(2)
	stop := make(chan struct{})
	var touched, conflicts int
	go func() {
		defer wg.Done()
		defer close(stop)
		for i := 1; i <= saves; i++ {
			m := ttl.NewMutation()
			m.Replace("sess", "tok", []byte(fmt.Sprint("v", i)), ttl.For(time.Hour))
			if err := x.tbl.Apply(ctx, "r", m); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ok, err := x.tbl.Touch(ctx, "r", "sess", "tok", ttl.For(2*time.Hour))
			switch {
			case errors.Is(err, ttl.ErrConflict):
				conflicts++
			case err != nil:
				t.Error(err)
				return
			case ok:
				touched++
			}
		}
	}()
	wg.Wait()
	row, err := x.tbl.ReadRow(ctx, "r", ttl.RowFilter(bigtable.LatestNFilter(1)))
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprint("sess:tok=v", saves)}, testkit.Values(row), "no update lost (%d touches, %d conflicts)", touched, conflicts)
}

// TestKeepAlive reads a cell again and again: it is renewed only when due,
// to idle + slack, at most once per slack, and a read that renews nothing
// sends what a plain read sends.
func TestKeepAlive(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t)
	x.set(0, "clicks", "n", "1", ttl.Default) // expires at 1h
	x.calls()
	read := func(at time.Duration) (bigtable.Row, []string) {
		x.clock.Set(testkit.Base.Add(at))
		row, err := x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(30*time.Minute))
		require.NoError(t, err)
		return row, x.calls()
	}
	row, calls := read(20 * time.Minute)
	assert.Equal(t, []string{"ReadRow"}, calls, "not due: expires at 1h, after 20m + 30m")
	exp, _ := x.tbl.ExpiresAt(row["clicks"][0])
	assert.Equal(t, time.Hour, exp.Sub(testkit.Base))

	row, calls = read(50 * time.Minute)
	assert.Equal(t, []string{"ReadRow", "Apply"}, calls, "due: renewed")
	exp, _ = x.tbl.ExpiresAt(row["clicks"][0])
	assert.Equal(t, 50*time.Minute+30*time.Minute+7*time.Minute+30*time.Second, exp.Sub(testkit.Base), "idle + slack (idle/4) after the read")
	assert.Equal(t, []string{"clicks:n=1@27m30s"}, x.stored(), "stored at its new expiry - 1h")

	// Reads every second: renewed when due, once per slack (7.5m): at
	// 57m31s (expiry 95m1s), 65m2s (102m32s) and 72m33s (110m3s).
	renewals := 0
	for at := 50 * time.Minute; at < 80*time.Minute; at += time.Second {
		_, calls = read(at)
		renewals += len(calls) - 1
	}
	assert.Equal(t, 3, renewals, "30 minutes of reads a second apart")
	assert.Equal(t, []string{"clicks:n=1@50m3s"}, x.stored(), "expires at 110m3s, 37m30s after the last renewal")
}

// TestKeepAliveRules checks what KeepAlive renews and what it does not.
func TestKeepAliveRules(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t)
	x.set(0, "sess", "a", "a", ttl.For(time.Minute))
	x.set(0, "sess", "b", "b", ttl.For(time.Minute))
	x.set(0, "sess", "f", "f", ttl.Forever)
	x.set(0, "rev", "v", "v", ttl.Version(1))
	x.set(0, "meta", "m", "m", ttl.Default)
	x.calls()
	x.clock.Set(testkit.Base.Add(30 * time.Second))
	row, err := x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Second), ttl.RowFilter(bigtable.ColumnFilter("[afvm]")))
	require.NoError(t, err)
	assert.Equal(t, []string{"meta:m=m", "rev:v=v", "sess:a=a", "sess:f=f"}, testkit.Values(row))
	assert.Equal(t, []string{"ReadRow"}, x.calls(), "a idle 1s: not due (expires in 30s)")

	x.clock.Set(testkit.Base.Add(59*time.Second + 500*time.Millisecond))
	_, err = x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Second), ttl.RowFilter(bigtable.ColumnFilter("[afvm]")))
	require.NoError(t, err)
	assert.Equal(t, []string{"ReadRow", "Apply"}, x.calls(), "only a: b is hidden by the RowFilter, f is Forever, v a version, m unmanaged")
	st := x.stored()
	assert.Contains(t, st, "sess:a=a@1m0.75s", "renewed to 1s + 250ms after the read: no idle time is too short")
	assert.Contains(t, st, "sess:b=b@1m0s")

	_, err = x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(0))
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
	_, err = x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Second), ttl.KeepAlive(time.Second))
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
}

// TestKeepAliveRaces: a renewal that loses a race is no error and the
// newer state stands; a renewal that fails otherwise is reported, with the
// rows delivered.
func TestKeepAliveRaces(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t)
	x.set(0, "sess", "a", "a", ttl.For(time.Minute))
	x.clock.Set(testkit.Base.Add(50 * time.Second))
	x.hook = func() { x.set(50*time.Second, "sess", "a", "newer", ttl.For(2*time.Minute)) }
	row, err := x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Minute))
	require.NoError(t, err, "a lost race is not an error")
	assert.Equal(t, []string{"sess:a=a"}, testkit.Values(row), "the read's own view")
	assert.Equal(t, []string{"sess:a=newer@2m50s", "sess:a=a@1m0s"}, x.stored(), "the newer write stands, the old cell was not renewed")

	failing := &failApply{TableAPI: x.raw}
	tbl, err := ttl.NewTable(failing, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, ttl.WithClock(x.clock.Now), ttl.OtherFamilies("clicks", "rev", "meta"))
	require.NoError(t, err)
	row, err = tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Hour))
	assert.ErrorIs(t, err, ttl.ErrRenewal)
	assert.NotEmpty(t, row["sess"], "the row is delivered with the error")
	var rows int
	err = tbl.ReadRows(ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { rows++; return true }, ttl.KeepAlive(time.Hour))
	assert.ErrorIs(t, err, ttl.ErrRenewal)
	assert.Equal(t, 1, rows)
}

// failApply fails every Apply.
type failApply struct{ bigtable.TableAPI }

func (failApply) Apply(context.Context, string, *bigtable.Mutation, ...bigtable.ApplyOption) error {
	return errors.New("unavailable")
}

// TestKeepAliveKeepsWriteTimes renews cells of a table that records write
// times, with and without WithWriteTimes: the write time stays.
func TestKeepAliveKeepsWriteTimes(t *testing.T) {
	ctx := context.Background()
	for _, opts := range [][]ttl.ReadOption{{ttl.KeepAlive(time.Hour)}, {ttl.KeepAlive(time.Hour), ttl.WithWriteTimes()}} {
		x := newTouchFixture(t, ttl.RecordWriteTime())
		x.set(0, "sess", "a", "a", ttl.For(time.Minute))
		x.calls()
		x.clock.Set(testkit.Base.Add(30 * time.Second))
		_, err := x.tbl.ReadRow(ctx, "r", opts...)
		require.NoError(t, err)
		if len(opts) == 1 {
			assert.Equal(t, []string{"ReadRow", "ReadRow", "Apply"}, x.calls(), "the write time is read before the renewal")
		} else {
			assert.Equal(t, []string{"ReadRow", "Apply"}, x.calls(), "the write time came with the read")
		}
		row, err := x.tbl.ReadRow(ctx, "r", ttl.WithWriteTimes())
		require.NoError(t, err)
		written, ok := ttl.WriteTime(row["sess"][0])
		assert.True(t, ok && written.Equal(testkit.Base), "written %v %v", written, ok)
		exp, _ := x.tbl.ExpiresAt(row["sess"][0])
		assert.Equal(t, 30*time.Second+time.Hour+15*time.Minute, exp.Sub(testkit.Base))
	}
}

// TestKeepAliveReadMargin: under a read margin m, a kept-alive cell stays
// visible to the table's reads for idle: it is due when it expires before
// now + m + idle.
func TestKeepAliveReadMargin(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t, ttl.WithReadMargin(2*time.Minute))
	x.set(0, "sess", "a", "a", ttl.For(5*time.Minute))
	x.calls()
	_, err := x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(4*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, []string{"ReadRow", "Apply"}, x.calls(), "due: 5m is before 0 + 2m + 4m")
	assert.Equal(t, []string{"sess:a=a@7m0s"}, x.stored(), "now + m + idle + slack (idle/4)")
	x.clock.Set(testkit.Base.Add(4 * time.Minute))
	row, err := x.tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"sess:a=a"}, testkit.Values(row), "still visible idle after the read")
}

// TestKeepAliveStrippedValue: a RowFilter that strips values does not keep
// a due cell from its renewal: the cell is read once more, and rewritten
// with its value.
func TestKeepAliveStrippedValue(t *testing.T) {
	ctx := context.Background()
	x := newTouchFixture(t)
	x.set(0, "sess", "a", "abc", ttl.For(time.Minute))
	x.calls()
	x.clock.Set(testkit.Base.Add(50 * time.Second))
	row, err := x.tbl.ReadRow(ctx, "r", ttl.KeepAlive(time.Minute), ttl.RowFilter(bigtable.StripValueFilter()))
	require.NoError(t, err)
	assert.Equal(t, []string{"sess:a="}, testkit.Values(row))
	assert.Equal(t, []string{"ReadRow", "ReadRow", "Apply"}, x.calls())
	assert.Equal(t, []string{"sess:a=abc@2m5s"}, x.stored(), "renewed with its value to 50s + 1m + 15s")
	exp, _ := x.tbl.ExpiresAt(row["sess"][0])
	assert.Equal(t, 2*time.Minute+5*time.Second, exp.Sub(testkit.Base))
}

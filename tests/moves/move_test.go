package moves_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
)

// moveFixture is a table of one family "f" that holds cells written the old
// way, read and written through a Move.
type moveFixture struct {
	t     *testing.T
	clock *testkit.Clock
	tbl   *ttl.Table
	raw   *bigtable.Table
}

func newMoveFixture(t *testing.T, m ttl.Move) *moveFixture {
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": m}, nil, ttl.OtherFamilies())
	return &moveFixture{t, clock, tbl, raw}
}

// old writes a cell the old way, with a raw timestamp.
func (x *moveFixture) old(column, value string, ts bigtable.Timestamp) {
	x.t.Helper()
	m := bigtable.NewMutation()
	m.Set("f", column, ts, []byte(value))
	require.NoError(x.t, x.raw.Apply(context.Background(), "r", m))
}

// write writes a cell through the move at start+at, and returns its
// timestamp.
func (x *moveFixture) write(at time.Duration, column, value string, life ttl.Lifetime) (bigtable.Timestamp, error) {
	x.t.Helper()
	x.clock.Set(start.Add(at))
	if err := x.tbl.Apply(context.Background(), "r", testkit.Set("f", column, value, life)); err != nil {
		return 0, err
	}
	r := testkit.RawRow(x.t, x.raw, "r")
	for _, it := range r["f"] {
		if string(it.Value) == value {
			return it.Timestamp, nil
		}
	}
	x.t.Fatalf("%s=%s not stored", column, value)
	return 0, nil
}

// visible returns the values a read through the move returns at start+at.
func (x *moveFixture) visible(at time.Duration) []string {
	x.t.Helper()
	x.clock.Set(start.Add(at))
	r, err := x.tbl.ReadRow(context.Background(), "r")
	require.NoError(x.t, err)
	var out []string
	for _, c := range testkit.Cells(r) {
		out = append(out, c.Value)
	}
	return out
}

// expiry returns what ExpiresAt reports for a stored timestamp, "never"
// for none.
func (x *moveFixture) expiry(ts bigtable.Timestamp) string {
	e, ok := x.tbl.ExpiresAt(bigtable.ReadItem{Column: "f:c", Timestamp: ts})
	if !ok {
		return "never"
	}
	return e.Sub(start).String()
}

// TestMoveRealToOneSecond moves a family of real timestamps to OneSecond,
// its old cells living an hour after their write times.
func TestMoveRealToOneSecond(t *testing.T) {
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(time.Hour), Skew: time.Minute}
	x := newMoveFixture(t, m)
	x.old("a", "old-2h", testkit.MS(start.Add(-2*time.Hour)))
	x.old("b", "old-30m", testkit.MS(start.Add(-30*time.Minute)))

	assert.Equal(t, []string{"old-30m"}, x.visible(-10*time.Minute), "the cell written 2h before has expired")
	// Before the start, a cell that expires before the old encoding would
	// cross the boundary is written the old way, at expiry - 1h...
	ts, err := x.write(-10*time.Minute, "c", "before-30m", ttl.For(30*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(20*time.Minute-time.Hour)), ts)
	// ... and a longer one the new way: its expiry, above the boundary.
	ts, err = x.write(-10*time.Minute, "d", "before-2h", ttl.For(2*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(110*time.Minute)), ts)
	assert.Equal(t, "1h50m0s", x.expiry(ts))
	// A plain write before the start is an old cell at now.
	ts, err = x.write(-time.Minute, "e", "before-default", ttl.Default)
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(-time.Minute)), ts)
	assert.Equal(t, "59m0s", x.expiry(ts))

	// After the start, OneSecond's: the expiry itself; Default is gone.
	ts, err = x.write(5*time.Minute, "g", "after-1h", ttl.For(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(65*time.Minute)), ts)
	_, err = x.write(5*time.Minute, "h", "after-default", ttl.Default)
	assert.ErrorIs(t, err, ttl.ErrLifetime)

	assert.Equal(t, []string{"old-30m", "before-30m", "before-2h", "before-default", "after-1h"}, x.visible(10*time.Minute))
	assert.Equal(t, []string{"before-2h", "before-default", "after-1h"}, x.visible(30*time.Minute), "old-30m and before-30m expired at +30m and +20m")
	assert.Equal(t, []string{"before-2h", "after-1h"}, x.visible(59*time.Minute))
	assert.Equal(t, []string{"before-2h"}, x.visible(65*time.Minute))
	assert.Empty(t, x.visible(110*time.Minute))

	assert.Equal(t, "maxage=1h", describe(m))
	end, ok := move.EndsBy(m)
	assert.True(t, ok)
	assert.Equal(t, start.Add(time.Hour+time.Minute), end, "the last old cell, stamped just before the start, expires an hour later; then the skew")
	assert.Equal(t, testkit.MS(start), move.Boundary(m))
}

// TestMoveDefaultToOneSecond moves a DefaultExpiration family to OneSecond,
// the old cells keeping their old rule.
func TestMoveDefaultToOneSecond(t *testing.T) {
	m := ttl.Move{From: ttl.DefaultExpiration(48 * time.Hour), To: ttl.OneSecond(), Start: start}
	x := newMoveFixture(t, m)
	x.old("a", "old", testkit.MS(start.Add(-time.Hour))) // written an hour before, by Default

	assert.Equal(t, "47h0m0s", x.expiry(testkit.MS(start.Add(-time.Hour))))
	// Before the start a cell whose old timestamp would cross the boundary
	// cannot be written either way (see Move.Timestamp).
	_, err := x.write(-time.Minute, "b", "too-long", ttl.For(72*time.Hour))
	assert.ErrorIs(t, err, ttl.ErrLifetime)
	ts, err := x.write(-time.Minute, "c", "before", ttl.Default)
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(-time.Minute)), ts, "Default before the start: the write time")
	ts, err = x.write(time.Minute, "d", "after", ttl.Default)
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(time.Minute+48*time.Hour)), ts, "Default after the start: For(48h), stored as its expiry")
	ts, err = x.write(time.Minute, "e", "after-72h", ttl.For(72*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(time.Minute+72*time.Hour)), ts)

	assert.Equal(t, []string{"old", "before", "after", "after-72h"}, x.visible(2*time.Minute))
	assert.Equal(t, []string{"before", "after", "after-72h"}, x.visible(47*time.Hour))
	assert.Equal(t, []string{"after-72h"}, x.visible(48*time.Hour+time.Minute))
	assert.Equal(t, "maxage=2d", describe(m))
	end, _ := move.EndsBy(m)
	assert.Equal(t, start.Add(48*time.Hour), end)
}

// TestMoveSequenceNumbersToOneSecond keeps the newest old versions a day
// after the start.
func TestMoveSequenceNumbersToOneSecond(t *testing.T) {
	m := ttl.Move{From: ttl.SequenceNumbers(2), To: ttl.OneSecond(), Start: start, Old: ttl.For(24 * time.Hour)}
	x := newMoveFixture(t, m)
	for v := int64(1); v <= 3; v++ {
		x.old("a", "v"+string(rune('0'+v)), bigtable.Timestamp(v*1000))
	}
	ts, err := x.write(-time.Minute, "a", "v4", ttl.Version(4))
	require.NoError(t, err)
	assert.Equal(t, bigtable.Timestamp(4000), ts)
	ts, err = x.write(time.Minute, "a", "new", ttl.For(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(61*time.Minute)), ts)
	_, err = x.write(time.Minute, "a", "v5", ttl.Version(5))
	assert.NoError(t, err, "a version after the start is still a sequence number, read by the old rule")

	assert.Equal(t, []string{"new", "v5", "v4"}, x.visible(2*time.Minute), "the newest two versions, and the new cell above them")
	assert.Equal(t, []string{"v5", "v4"}, x.visible(2*time.Hour))
	assert.Empty(t, x.visible(24*time.Hour), "the old versions live until a day after the start")
	assert.Equal(t, "24h0m0s", x.expiry(4000))
	assert.Equal(t, "never", describe(m))
	assert.Equal(t, bigtable.Timestamp(946_684_800_000_000), move.Boundary(m), "2000-01-01")
}

// TestMoveRealToSequenceNumbers: the first version written after the start
// retires the column's old cells, which would outrank every sequence
// number.
func TestMoveRealToSequenceNumbers(t *testing.T) {
	m := ttl.Move{To: ttl.SequenceNumbers(2), Start: start}
	x := newMoveFixture(t, m)
	x.old("a", "a-old1", testkit.MS(start.Add(-2*time.Hour)))
	x.old("a", "a-old2", testkit.MS(start.Add(-time.Hour)))
	x.old("b", "b-old", testkit.MS(start.Add(-time.Hour)))

	ts, err := x.write(-time.Minute, "b", "b-before", ttl.Version(7))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(-time.Minute)), ts, "before the start, a version is written as the family had it: at now")
	assert.Equal(t, []string{"a-old2", "a-old1", "b-before", "b-old"}, x.visible(0))

	ts, err = x.write(time.Minute, "a", "a-v1", ttl.Version(1))
	require.NoError(t, err)
	assert.Equal(t, bigtable.Timestamp(1000), ts)
	assert.Equal(t, []string{"a-v1", "b-before", "b-old"}, x.visible(2*time.Minute))
	assert.Len(t, testkit.RawRow(t, x.raw, "r")["f"], 3, "a's old cells are deleted, not hidden")
	assert.Equal(t, "never", x.expiry(ts))
	assert.Equal(t, "never", describe(m))
	_, ok := move.EndsBy(m)
	assert.False(t, ok, "old cells that never expire end the move only when rewritten")
}

// TestMoveRealToDefaultExpiration: short lifetimes after the start that
// the new encoding would stamp before the boundary are written the old way.
func TestMoveRealToDefaultExpiration(t *testing.T) {
	m := ttl.Move{To: ttl.DefaultExpiration(time.Hour), Start: start, Old: ttl.For(2 * time.Hour)}
	x := newMoveFixture(t, m)
	x.old("a", "old", testkit.MS(start.Add(-90*time.Minute)))
	ts, err := x.write(time.Minute, "b", "default", ttl.Default)
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(time.Minute)), ts)
	ts, err = x.write(time.Minute, "c", "short", ttl.For(10*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(11*time.Minute-2*time.Hour)), ts, "old encoding: expiry - 2h")
	assert.Equal(t, []string{"old", "default", "short"}, x.visible(5*time.Minute))
	assert.Equal(t, []string{"old", "default"}, x.visible(11*time.Minute))
	assert.Equal(t, []string{"default"}, x.visible(30*time.Minute))
	assert.Equal(t, "maxage=2h", describe(m))
}

// TestMoveReadModifyWrite: read-modify-write follows the side the server's
// now falls on.
func TestMoveReadModifyWrite(t *testing.T) {
	ctx := context.Background()
	incr := ttl.NewReadModifyWrite()
	incr.Increment("f", "n", 1)
	for _, tt := range []struct {
		m             ttl.Move
		before, after error
	}{
		{ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.OneSecond(), Start: start}, nil, ttl.ErrServerTimestamp},
		{ttl.Move{From: ttl.SequenceNumbers(1), To: ttl.DefaultExpiration(time.Hour), Start: start, Old: ttl.For(time.Hour)}, nil, nil},
		{ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(time.Hour)}, nil, ttl.ErrServerTimestamp},
	} {
		clock := testkit.NewClock(start.Add(-time.Minute))
		tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": tt.m}, nil)
		_, err := tbl.ApplyReadModifyWrite(ctx, "r", incr)
		if tt.before == nil {
			// The emulator stamps with the real clock: what matters here
			// is that the library lets the request through.
			assert.False(t, errors.Is(err, ttl.ErrServerTimestamp), "%v before the start: %v", tt.m, err)
		}
		clock.Set(start.Add(time.Minute))
		_, err = tbl.ApplyReadModifyWrite(ctx, "r", incr)
		if tt.after != nil {
			assert.ErrorIs(t, err, tt.after, "%v after the start", tt.m)
		} else {
			assert.False(t, errors.Is(err, ttl.ErrServerTimestamp), "%v after the start: %v", tt.m, err)
		}
	}

	// Within Skew of the boundary the server may stamp the cell on either
	// side: past Start, a move to OneSecond would read it as expired.
	m := ttl.Move{To: ttl.OneSecond(), Start: start, Old: ttl.For(time.Hour), Skew: 2 * time.Minute}
	clock := testkit.NewClock(start.Add(-3 * time.Minute))
	tbl, _ := testkit.NewTable(t, clock, map[string]ttl.Strategy{"f": m}, nil)
	_, err := tbl.ApplyReadModifyWrite(ctx, "r", incr)
	assert.False(t, errors.Is(err, ttl.ErrServerTimestamp), "more than Skew before the start: %v", err)
	clock.Set(start.Add(-time.Minute))
	_, err = tbl.ApplyReadModifyWrite(ctx, "r", incr)
	assert.ErrorIs(t, err, ttl.ErrServerTimestamp, "within Skew before the start")
}

// TestMoveRefused checks every move NewTable refuses.
func TestMoveRefused(t *testing.T) {
	for _, m := range []ttl.Move{
		{},
		{To: ttl.OneSecond()},
		{From: ttl.OneSecond(), To: ttl.DefaultExpiration(time.Hour), Start: start},
		{From: ttl.DefaultExpiration(time.Hour), To: ttl.DefaultExpiration(2 * time.Hour), Start: start},
		{From: ttl.DefaultExpiration(time.Hour), To: ttl.SequenceNumbers(1), Start: start},
		{From: ttl.SequenceNumbers(1), To: ttl.SequenceNumbers(2), Start: start},
		{To: ttl.Move{To: ttl.OneSecond(), Start: start}, Start: start},
		{From: ttl.Move{To: ttl.OneSecond(), Start: start}, To: ttl.OneSecond(), Start: start},
		{To: ttl.DefaultExpiration(0), Start: start},
		{To: ttl.OneSecond(), Start: start.Add(time.Microsecond)},
		{To: ttl.OneSecond(), Start: time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)},
		{To: ttl.OneSecond(), Start: start, Skew: -time.Second},
		{To: ttl.OneSecond(), Start: start, Old: ttl.Version(1)},
		{To: ttl.OneSecond(), Start: start, Old: ttl.For(0)},
		{To: ttl.OneSecond(), Start: start, Old: ttl.Until(start)},
	} {
		_, err := ttl.NewTable(&testkit.Recorder{}, map[string]ttl.Strategy{"f": m})
		assert.ErrorIs(t, err, ttl.ErrInvalidStrategy, "%v", m)
		_, err = m.Timestamp(testkit.Base, ttl.For(time.Hour))
		assert.ErrorIs(t, err, ttl.ErrInvalidStrategy, "%v", m)
		assert.Equal(t, bigtable.BlockAllFilter().String(), m.Filter(testkit.Base).String(), "%v", m)
	}
}

// describe spells a strategy's GC policy as cbt takes it.
func describe(s ttl.Strategy) string { return policy.Describe(s.GCPolicy()) }

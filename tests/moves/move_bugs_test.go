package moves_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// Bugs TestModelMoves found in Move, each reduced to its smallest case:
// DESIGN.md's rule it broke, and what the library did. These four test
// the strategy alone (writes and reads through a ttl.Table, with the root
// package's moveFixture), none of package move.

// TestMoveVersionsBeforeStartAreRealTimes: in a move from real timestamps
// to sequence numbers, "the old encoding ... of a family without a
// strategy stamps now (Default, or a Version written before a move to
// sequence numbers starts)", whatever rule Old gives the old cells. With
// Old: For(d) the library took the old side for a time rule, which has no
// versions, and wrote the version as a sequence number before the start,
// retiring the column's old cells while processes not yet switched still
// write real timestamps. And only a move to sequence numbers takes a
// version: a move from real timestamps to OneSecond stored one as a real
// timestamp that never expires.
func TestMoveVersionsBeforeStartAreRealTimes(t *testing.T) {
	m := ttl.Move{To: ttl.SequenceNumbers(2), Start: start, Old: ttl.For(time.Hour)}
	x := newMoveFixture(t, m)
	x.old("a", "old", testkit.MS(start.Add(-10*time.Minute)))
	ts, err := x.write(-time.Minute, "a", "before", ttl.Version(4))
	require.NoError(t, err)
	assert.Equal(t, testkit.MS(start.Add(-time.Minute)), ts, "a version before the start is written as the family had it: at now")
	assert.Equal(t, []string{"before", "old"}, x.visible(0), "the old cell is still there")
	assert.Equal(t, "59m0s", x.expiry(ts), "an hour after its write, by Old")

	x = newMoveFixture(t, ttl.Move{To: ttl.OneSecond(), Start: start})
	_, err = x.write(-time.Minute, "a", "version", ttl.Version(4))
	assert.ErrorIs(t, err, ttl.ErrLifetime, "OneSecond takes no version, nor do real timestamps")
}

// TestMoveDefaultBeforeStartIsTheOldDefault: "Default is the old
// strategy's default before Start and the new one's after it". Moving a
// family without a strategy to DefaultExpiration(d), the library took
// Default as For(d) before the start too: refused with Old: Default (no
// real timestamp expires by time), and with Old: For(o) stamped d − o
// after now, expiring with the new default instead of living as the old
// cells do.
func TestMoveDefaultBeforeStartIsTheOldDefault(t *testing.T) {
	for _, old := range []ttl.Lifetime{ttl.Default, ttl.For(time.Minute)} {
		x := newMoveFixture(t, ttl.Move{To: ttl.DefaultExpiration(time.Hour), Start: start, Old: old})
		ts, err := x.write(-time.Minute, "a", "before", ttl.Default)
		require.NoError(t, err, "Old: %v", old)
		assert.Equal(t, testkit.MS(start.Add(-time.Minute)), ts, "Old: %v: a write at now, as the family had it", old)
		ts, err = x.write(time.Minute, "b", "after", ttl.Default)
		require.NoError(t, err, "Old: %v", old)
		assert.Equal(t, testkit.MS(start.Add(time.Minute)), ts, "Old: %v: For(1h) stamped with the write time", old)
		assert.Equal(t, "1h1m0s", x.expiry(ts), "Old: %v", old)
	}
}

// TestMoveNoCellBornExpired: "a cell is never born expired", and a write
// "stores each cell in the encoding that puts it on its own rule's side,
// so that its rule gives exactly the requested expiry". A version written
// after the old versions' Until (or Start + For) was stored among them,
// hidden at once; it is refused, as no side can hold it.
func TestMoveNoCellBornExpired(t *testing.T) {
	x := newMoveFixture(t, ttl.Move{From: ttl.SequenceNumbers(2), To: ttl.OneSecond(), Start: start, Old: ttl.For(time.Hour)})
	_, err := x.write(30*time.Minute, "a", "live", ttl.Version(4))
	require.NoError(t, err, "the old versions live until an hour after the start")
	_, err = x.write(2*time.Hour, "a", "born-expired", ttl.Version(5))
	assert.ErrorIs(t, err, ttl.ErrLifetime, "OneSecond takes no version, and the old versions' rule has ended")

	x = newMoveFixture(t, ttl.Move{From: ttl.SequenceNumbers(2), To: ttl.OneSecond(), Start: start, Old: ttl.Until(start.Add(-time.Hour))})
	_, err = x.write(-time.Minute, "a", "born-expired", ttl.Version(5))
	assert.ErrorIs(t, err, ttl.ErrExpired, "before the start, in the old encoding, whose rule has ended")
}

// TestMoveOldRuleKeepsTheExpiry: moving DefaultExpiration(d) to OneSecond
// with Old: Until(t) or Forever, a write before the start (the old
// encoding only) was stamped as DefaultExpiration stamps it and then lived
// by Old: a For(1m) cell until t, or for ever. Neither side can hold it
// with its expiry, so it is refused; Forever under Old: Forever too, since
// DefaultExpiration's Forever lies on the new side.
func TestMoveOldRuleKeepsTheExpiry(t *testing.T) {
	for _, old := range []ttl.Lifetime{ttl.Until(start.Add(time.Hour)), ttl.Forever} {
		x := newMoveFixture(t, ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.OneSecond(), Start: start, Old: old})
		for _, life := range []ttl.Lifetime{ttl.For(time.Minute), ttl.Default, ttl.Forever} {
			_, err := x.write(-time.Minute, "a", "before", life)
			assert.ErrorIs(t, err, ttl.ErrLifetime, "Old: %v, %v", old, life)
		}
		ts, err := x.write(time.Minute, "a", "after", ttl.For(time.Minute))
		require.NoError(t, err, "Old: %v", old)
		assert.Equal(t, "2m0s", x.expiry(ts), "Old: %v: after the start, OneSecond's", old)
	}
	x := newMoveFixture(t, ttl.Move{From: ttl.DefaultExpiration(2 * time.Hour), To: ttl.OneSecond(), Start: start, Old: ttl.Until(start.Add(time.Hour))})
	ts, err := x.write(-time.Minute, "a", "exactly", ttl.Until(start.Add(time.Hour)))
	require.NoError(t, err, "a cell that expires when the old rule ends keeps its expiry")
	assert.Equal(t, "1h0m0s", x.expiry(ts))
}

package counters_test

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
)

// TestCounterBeforeEpoch is issue 28's stumble 12: at
// 1969-12-31T23:59:59.5Z an Add in windows of a second counted toward the
// window after the one that holds now ([0s, 1s), its cell stamped
// 11,000,000 µs under Window{1s, 10s}) instead of [−1s, 0s), stamped
// 10,000,000. A window before 1970 is as good as any other while its
// expiry is not; one whose expiry is before 1970 needs a negative
// timestamp and is refused with ErrOutOfRange, as a Set's would be.
func TestCounterBeforeEpoch(t *testing.T) {
	ctx := context.Background()
	now := time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC)
	clock := testkit.NewClock(now)
	tbl, raw := counterTable(t, clock)
	w := ttl.Window{Size: time.Second, Keep: 10 * time.Second}

	require.NoError(t, tbl.Apply(ctx, "u", testkit.Add("hits", "req", 1, w)))
	require.Equal(t, []testkit.Cell{{Column: "hits:req", Value: "\x00\x00\x00\x00\x00\x00\x00\x01", TS: bigtable.Timestamp(10_000_000)}}, testkit.Cells(testkit.RawRow(t, raw, "u")),
		"the window [−1s, 0s) ends at 0 and expires 10s later")
	got, err := tbl.ReadCounter(ctx, "u", "hits", "req", w)
	require.NoError(t, err)
	epoch := time.Unix(0, 0).UTC()
	assert.Equal(t, []ttl.WindowCount{{Start: epoch.Add(-time.Second), End: epoch, Expires: epoch.Add(10 * time.Second), Sum: 1}}, got)

	// Half a second on, the window [0s, 1s): a cell of its own.
	clock.Advance(500 * time.Millisecond)
	require.NoError(t, tbl.Apply(ctx, "u", testkit.Add("hits", "req", 2, w)))
	sum, err := tbl.SumCounter(ctx, "u", "hits", "req", w, 2)
	require.NoError(t, err)
	assert.Equal(t, int64(3), sum, "both windows summed")
	assert.Len(t, testkit.Cells(testkit.RawRow(t, raw, "u")), 2)

	// At −5.5s, the last 11 windows reach back to [−16s, −15s), which
	// expired at −5s and can hold no cell: the sum is of those that can.
	clock.Set(epoch.Add(-5500 * time.Millisecond))
	require.NoError(t, tbl.Apply(ctx, "w", testkit.Add("hits", "req", 4, w)))
	assert.Equal(t, []testkit.Cell{{Column: "hits:req", Value: "\x00\x00\x00\x00\x00\x00\x00\x04", TS: bigtable.Timestamp(5_000_000)}}, testkit.Cells(testkit.RawRow(t, raw, "w")))
	sum, err = tbl.SumCounter(ctx, "w", "hits", "req", w, 11)
	require.NoError(t, err)
	assert.Equal(t, int64(4), sum)

	// Twelve seconds before the epoch, the window [−12s, −11s) expires at
	// −1s: no timestamp holds it.
	clock.Set(epoch.Add(-12 * time.Second))
	err = tbl.Apply(ctx, "v", testkit.Add("hits", "req", 1, w))
	require.True(t, errors.Is(err, ttl.ErrOutOfRange), "got %v", err)
	assert.Contains(t, err.Error(), "1969-12-31T23:59:48Z", "the message names the window's start")
	assert.Empty(t, testkit.Cells(testkit.RawRow(t, raw, "v")), "nothing written")
}

package docexamples_test

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

// The documentation's worked examples, one per strategy, run on the
// emulator: the session token that expires on April 30 at 09:00:00, the
// click events kept two days, and five versions under a three-version
// policy.

// TestAprilThirty is the documents' one-second example: a cell that should
// expire on April 30 at 09:00:00 is stamped with that instant and hidden
// from it on.
func TestAprilThirty(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base.Add(-time.Hour))
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, nil)
	require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("sess", "token", "abc", ttl.Until(testkit.Base))))

	assert.Equal(t, []testkit.Cell{{Column: "sess:token", Value: "abc", TS: testkit.MS(testkit.Base)}}, testkit.Cells(testkit.RawRow(t, raw, "r")), "stored timestamp is the expiry")
	for _, tt := range []struct {
		at   time.Time
		want []string
	}{
		{testkit.Base.Add(-time.Millisecond), []string{"sess:token=abc"}},
		{testkit.Base.Add(-time.Nanosecond), []string{"sess:token=abc"}},
		{testkit.Base, nil},
		{testkit.Base.Add(time.Millisecond), nil},
	} {
		clock.Set(tt.at)
		r, err := tbl.ReadRow(ctx, "r")
		require.NoError(t, err)
		assert.Equal(t, tt.want, testkit.Values(r), "ReadRow at %v", tt.at.Format(time.RFC3339Nano))
	}
}

// TestClickEvents is the documents' default-expiration example: click
// events kept two days, one customer one hour and one three days.
func TestClickEvents(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(48 * time.Hour)}, nil)
	lifeOf := map[int]ttl.Lifetime{3: ttl.For(time.Hour), 7: ttl.For(72 * time.Hour)}
	for i := 0; i < 10; i++ {
		require.NoError(t, tbl.Apply(ctx, fmt.Sprintf("customer%d", i), testkit.Set("clicks", "home", "1", lifeOf[i])))
	}

	// The stored timestamps: the real write time, earlier, later.
	assert.Equal(t, testkit.MS(testkit.Base), testkit.Cells(testkit.RawRow(t, raw, "customer0"))[0].TS, "Default: the write time")
	assert.Equal(t, testkit.MS(testkit.Base.Add(time.Hour-48*time.Hour)), testkit.Cells(testkit.RawRow(t, raw, "customer3"))[0].TS, "For(1h): 47h earlier")
	assert.Equal(t, testkit.MS(testkit.Base.Add(24*time.Hour)), testkit.Cells(testkit.RawRow(t, raw, "customer7"))[0].TS, "For(72h): 24h later")

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
		clock.Set(testkit.Base.Add(tt.after))
		assert.Equal(t, tt.want, visible(), "rows visible %v after the write", tt.after)
	}
}

// TestFiveVersions is the documents' sequence-number example: five
// versions under a three-version policy.
func TestFiveVersions(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"rev": ttl.SequenceNumbers(3)}, nil)
	for v := int64(1); v <= 5; v++ {
		require.NoError(t, tbl.Apply(ctx, "doc", testkit.Set("rev", "body", fmt.Sprintf("v%d", v), ttl.Version(v))))
	}
	assert.Len(t, testkit.Cells(testkit.RawRow(t, raw, "doc")), 5, "all five are stored until GC")
	r, err := tbl.ReadRow(ctx, "doc")
	require.NoError(t, err)
	assert.Equal(t, []testkit.Cell{{Column: "rev:body", Value: "v5", TS: 5000}, {Column: "rev:body", Value: "v4", TS: 4000}, {Column: "rev:body", Value: "v3", TS: 3000}}, testkit.Cells(r))

	r, err = tbl.ReadRow(ctx, "doc", ttl.RowFilter(bigtable.LatestNFilter(1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"rev:body=v5"}, testkit.Values(r))
}

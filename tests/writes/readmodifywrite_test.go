package writes_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// Read-modify-writes: allowed only where the server's timestamp means what
// the family's strategy says, and an expired counter restarts instead of
// resurfacing.

// TestReadModifyWrite checks where server timestamps are allowed, and that
// an expired counter restarts instead of resurfacing. The emulator stamps
// read-modify-write cells with its real clock, so this test's clock starts
// at the real time.
func TestReadModifyWrite(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	clock := testkit.NewClock(now)
	raw := emulator.StartForTest(t).TableForTest(t, "t", map[string]bigtable.GCPolicy{"sess": nil, "hits": nil, "rev": nil, "meta": nil})
	rec := &testkit.Recorder{TableAPI: raw}
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
	assert.Empty(t, testkit.Cells(testkit.RawRow(t, raw, "r")))

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

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

// Conditional mutations: the predicate sees only live cells.

// TestConditionalLock checks that a conditional mutation's predicate sees
// only live cells: a lock is taken while free, refused while held, and
// taken again once the holder's cell has expired, although it is still
// stored.
func TestConditionalLock(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"lock": ttl.OneSecond()}, nil, ttl.OtherFamilies())
	owner := bigtable.ColumnRangeFilter("lock", "owner", "owner\x00")
	take := func(who string) bool {
		t.Helper()
		var held bool
		m := ttl.NewCondMutation(owner, nil, testkit.Set("lock", "owner", who, ttl.For(10*time.Second)))
		require.NoError(t, tbl.Apply(ctx, "job", m, bigtable.GetCondMutationResult(&held)))
		return !held
	}
	assert.True(t, take("ann"), "free lock")
	clock.Advance(10*time.Second - time.Millisecond)
	assert.False(t, take("bob"), "held lock")
	clock.Advance(time.Millisecond)
	assert.True(t, take("bob"), "expired lock")
	assert.Len(t, testkit.Cells(testkit.RawRow(t, raw, "job")), 2, "the expired cell is still stored")
	r, err := tbl.ReadRow(ctx, "job")
	require.NoError(t, err)
	assert.Equal(t, []string{"lock:owner=bob"}, testkit.Values(r))

	// A nil predicate matches any live cell.
	clock.Advance(time.Minute)
	var matched bool
	require.NoError(t, tbl.Apply(ctx, "job", ttl.NewCondMutation(nil, testkit.Set("lock", "x", "t", ttl.For(time.Hour)), testkit.Set("lock", "x", "f", ttl.For(time.Hour))),
		bigtable.GetCondMutationResult(&matched)))
	assert.False(t, matched, "only expired cells in the row")
}

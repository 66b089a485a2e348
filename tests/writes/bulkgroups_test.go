package writes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestApplyBulkGroups checks that ApplyBulk sends rows in the client's
// groups of at most 100,000 changes, and that a group that fails fails
// only its own rows.
func TestApplyBulkGroups(t *testing.T) {
	ctx := context.Background()
	api := &testkit.FailFirst{}
	tbl, err := ttl.NewTable(api, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.WithClock(testkit.NewClock(testkit.Base).Now))
	require.NoError(t, err)
	m := testkit.Set("f", "c", "v", ttl.For(time.Hour))
	rows, muts := make([]string, 100_002), make([]*ttl.Mutation, 100_002)
	for i := range rows {
		rows[i], muts[i] = "r", m
	}
	muts[7] = ttl.NewMutation() // invalid: not sent, its own error
	errs, err := tbl.ApplyBulk(ctx, rows, muts)
	require.NoError(t, err, "one group of two succeeded")
	assert.Equal(t, []int{100_000, 1}, api.Calls)
	require.Len(t, errs, len(rows))
	assert.ErrorIs(t, errs[7], ttl.ErrInvalidMutation)
	assert.EqualError(t, errs[0], "unavailable")
	assert.EqualError(t, errs[100_000], "unavailable", "the first group: the 100,000 valid rows through index 100,000")
	assert.NoError(t, errs[len(rows)-1])
}

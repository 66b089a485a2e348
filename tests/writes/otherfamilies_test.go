package writes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
)

// Families without a strategy: passed through when undeclared, and, once
// declared with OtherFamilies, read as they are while undeclared ones are
// neither returned nor written.

// TestUnmanagedFamilies checks that families without a strategy are read
// back unchanged and take only Default writes, stamped at the clock's now.
func TestUnmanagedFamilies(t *testing.T) {
	ctx := context.Background()
	for _, declared := range []bool{false, true} {
		t.Run(fmt.Sprintf("declared=%v", declared), func(t *testing.T) {
			clock := testkit.NewClock(testkit.Base)
			var opts []ttl.Option
			if declared {
				opts = append(opts, ttl.OtherFamilies("meta"))
			}
			tbl, raw := testkit.NewTable(t, clock, map[string]ttl.Strategy{"sess": ttl.OneSecond()}, []string{"meta"}, opts...)

			old := bigtable.NewMutation()
			old.Set("meta", "old", 1000, []byte("from 1970")) // written by another client
			require.NoError(t, raw.Apply(ctx, "r", old))
			require.NoError(t, tbl.Apply(ctx, "r", testkit.Set("meta", "owner", "ann", ttl.Default)))
			for _, life := range []ttl.Lifetime{ttl.For(time.Hour), ttl.Until(testkit.Base.Add(time.Hour)), ttl.Version(1), ttl.Forever} {
				err := tbl.Apply(ctx, "r", testkit.Set("meta", "owner", "bob", life))
				require.ErrorIs(t, err, ttl.ErrLifetime, "%v", life)
				assert.Contains(t, err.Error(), `family "meta", column "owner"`)
			}

			clock.Advance(1000 * time.Hour)
			r, err := tbl.ReadRow(ctx, "r")
			require.NoError(t, err)
			assert.Equal(t, []testkit.Cell{{Column: "meta:old", Value: "from 1970", TS: 1000}, {Column: "meta:owner", Value: "ann", TS: testkit.MS(testkit.Base)}}, testkit.Cells(r))
		})
	}
}

// TestOtherFamilies checks a table whose families are declared: every
// kind of family reads as it should, undeclared families are neither
// returned nor written.
func TestOtherFamilies(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(testkit.Base)
	managed := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(time.Hour), "rev": ttl.SequenceNumbers(1)}
	tbl, raw := testkit.NewTable(t, clock, managed, []string{"meta", "hidden"}, ttl.OtherFamilies("meta"))
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
	assert.Equal(t, []string{"clicks:c=2", "meta:m=5", "rev:v=4", "sess:s=1"}, testkit.Values(r))
	clock.Advance(time.Minute)
	r, err = tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"clicks:c=2", "meta:m=5", "rev:v=4"}, testkit.Values(r))
	clock.Advance(2 * time.Hour)
	r, err = tbl.ReadRow(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, []string{"meta:m=5", "rev:v=4"}, testkit.Values(r))

	err = tbl.Apply(ctx, "r", testkit.Set("hidden", "h", "x", ttl.Default))
	assert.ErrorIs(t, err, ttl.ErrUnknownFamily)
}

// TestOtherFamiliesTwice checks that the names of every OtherFamilies
// option are declared, a name given by two options once (ttltest's Env
// declares its families beside a test's own), and that a name given
// twice in one option is refused.
func TestOtherFamiliesTwice(t *testing.T) {
	tbl, err := ttl.NewTable(&testkit.Recorder{}, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.OtherFamilies("a"), ttl.OtherFamilies("b"))
	require.NoError(t, err)
	assert.Contains(t, tbl.ReadFilter(testkit.Base).String(), "columnRangeFilter(a,,) + columnRangeFilter(b,,)")
	tbl, err = ttl.NewTable(&testkit.Recorder{}, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.OtherFamilies("a"), ttl.OtherFamilies("a"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(tbl.ReadFilter(testkit.Base).String(), "columnRangeFilter(a,,)"), "a declared once")
	_, err = ttl.NewTable(&testkit.Recorder{}, map[string]ttl.Strategy{"f": ttl.OneSecond()}, ttl.OtherFamilies("a", "a"))
	assert.ErrorIs(t, err, ttl.ErrInvalidOption)
}

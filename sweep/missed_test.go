package sweep_test

import (
	"encoding/json"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// TestSweepMissed: a round that reads a family later than its GC keeps
// expired cells says which expiries GC may have deleted first, and is not
// Complete; a grace that covers the lag makes it complete. With an admin
// client the sweep judges by the family's policy as the table has it.
func TestSweepMissed(t *testing.T) {
	f := newFixture(t, map[string]ttl.Strategy{
		"plain":  ttl.OneSecond(),
		"graced": ttl.Grace(ttl.OneSecond(), hour),
		"daily":  ttl.Grace(ttl.DefaultExpiration(24*hour), 10*time.Minute),
	})
	f.set(t, "u", "plain", "c", "v", ttl.For(10*time.Second))
	f.set(t, "u", "graced", "c", "v", ttl.For(10*time.Second))
	f.set(t, "u", "daily", "c", "v", ttl.For(10*time.Second))
	f.clock.Set(base.Add(30 * time.Minute))
	var c collector
	s, err := sweep.New(nil, f.raw, "t", f.fams, sweep.Options{Since: base, Margin: time.Second, Scan: scan.Options{Now: f.clock.Now}})
	require.NoError(t, err)
	r, err := s.Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Len(t, c.take(), 3, "the cells are still there: GC is late, as it often is")
	assert.False(t, r.Complete())
	assert.True(t, r.Read.Complete())
	assert.Equal(t, []sweep.Missed{
		{Family: "daily", From: base, Until: base.Add(20 * time.Minute), Keep: 10 * time.Minute},
		{Family: "plain", From: base, Until: base.Add(30*time.Minute - time.Second), Keep: time.Second},
	}, r.Missed)
	assert.Contains(t, r.String(), `: complete, but GC may have deleted some expired cells of families "daily", "plain" first; `)
	assert.NotContains(t, r.String(), "\n", "one line: the cellttl command prints each span")
	var decoded map[string]any
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &decoded))
	assert.Equal(t, false, decoded["complete"])
	assert.Equal(t, "cell", decoded["granularity"])

	// The family as the table has it: a grace of 2h on "plain".
	require.NoError(t, f.e.Admin.SetGCPolicy(ctx, "t", "plain", bigtable.MaxAgePolicy(2*hour)))
	require.NoError(t, f.e.Admin.SetGCPolicy(ctx, "t", "daily", bigtable.MaxAgePolicy(26*hour)))
	f.clock.Set(base.Add(time.Hour))
	r, err = f.sweeper(t, sweep.Options{Margin: time.Second}).Once(ctx, c.deliver)
	require.NoError(t, err)
	assert.Empty(t, r.Missed)
	assert.True(t, r.Complete())
}

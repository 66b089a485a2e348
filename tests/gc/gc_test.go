package gc_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// TestGCRemovesOnlyExpired is the one test on the real clock: with each
// strategy's GC policy on its family, the emulator's GC loop (every 0.5 to
// 1.5 s) physically removes the expired cells and the surplus versions, and
// never a live cell. Meanwhile reads through the Table never return an
// expired cell.
func TestGCRemovesOnlyExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("waits a few seconds for the emulator's GC")
	}
	ctx := context.Background()
	managed := map[string]ttl.Strategy{
		"sess":   ttl.OneSecond(),
		"clicks": ttl.DefaultExpiration(2 * time.Second),
		"rev":    ttl.SequenceNumbers(2),
	}
	policies := map[string]bigtable.GCPolicy{}
	for f, s := range managed {
		policies[f] = s.GCPolicy()
	}
	raw := emulator.StartForTest(t).TableForTest(t, "t", policies)
	tbl, err := ttl.NewTable(raw, managed, ttl.OtherFamilies())
	require.NoError(t, err)

	m := ttl.NewMutation()
	m.Set("sess", "short", []byte("x"), ttl.For(300*time.Millisecond))
	m.Set("sess", "long", []byte("x"), ttl.For(time.Hour))
	m.Set("sess", "forever", []byte("x"), ttl.Forever)
	m.Set("clicks", "short", []byte("x"), ttl.For(300*time.Millisecond))
	m.Set("clicks", "long", []byte("x"), ttl.For(time.Hour))
	m.Set("clicks", "forever", []byte("x"), ttl.Forever)
	for v := int64(1); v <= 4; v++ {
		m.Set("rev", "doc", []byte{byte('0' + v)}, ttl.Version(v))
	}
	require.NoError(t, tbl.Apply(ctx, "r", m))
	// The expiry of every managed time cell, from the raw read.
	expiry := map[string]time.Time{}
	for _, items := range testkit.RawRow(t, raw, "r") {
		for _, it := range items {
			if at, ok := tbl.ExpiresAt(it); ok {
				expiry[it.Column] = at
			}
		}
	}
	require.Len(t, expiry, 4)

	gone := func(stored []testkit.Cell) bool {
		for _, c := range stored {
			if c.Column == "sess:short" || c.Column == "clicks:short" || c.Column == "rev:doc" && c.TS < 3000 {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		now := time.Now()
		stored := testkit.Cells(testkit.RawRow(t, raw, "r"))
		kept := map[string]int{}
		for _, c := range stored {
			kept[c.Column]++
		}
		for _, col := range []string{"sess:long", "sess:forever", "clicks:long", "clicks:forever"} {
			require.Equal(t, 1, kept[col], "GC removed the live cell %s", col)
		}
		require.GreaterOrEqual(t, kept["rev:doc"], 2, "GC removed one of the newest versions")
		for col, at := range expiry {
			if at.After(now) {
				require.Equal(t, 1, kept[col], "GC removed %s before its expiry", col)
			}
		}

		r, err := tbl.ReadRow(ctx, "r")
		require.NoError(t, err)
		after := time.Now()
		for _, items := range r {
			for _, it := range items {
				if at, ok := tbl.ExpiresAt(it); ok {
					require.True(t, at.After(now), "read returned %s, expired at %v", it.Column, at)
				}
			}
		}
		require.Len(t, r["rev"], 2)

		if gone(stored) {
			break
		}
		if after.After(deadline) {
			require.Failf(t, "GC had not removed the expired cells after 15s", "stored: %v", stored)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

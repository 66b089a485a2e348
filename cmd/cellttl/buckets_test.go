package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatsBuckets is part of issue 21's fourth finding: stats -format
// json printed open bucket bounds as 0001-01-01T00:00:00Z and every empty
// bucket of every family. Now it prints the buckets that hold cells,
// without zero times, and -all-buckets lists the empty ones too.
func TestStatsBuckets(t *testing.T) {
	_, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Second)})
	base := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	put(t, raw, "u1", "sess", "token", base.Add(time.Hour)) // OneSecond: expires at base+1h
	buckets := func(extra ...string) []map[string]any {
		args := append([]string{"-family", "sess=onesecond", "-now", "2030-04-30T09:00:00Z", "-format", "json"}, extra...)
		stdout, stderr, code := cellttl(with("stats", args...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.NotContains(t, stdout, "0001-01-01", "no zero time")
		var a struct {
			Families []struct {
				Expiring []map[string]any `json:"expiring"`
			} `json:"families"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &a), stdout)
		require.Len(t, a.Families, 1)
		return a.Families[0].Expiring
	}
	got := buckets()
	require.Len(t, got, 1, "only the bucket that holds the cell: %v", got)
	assert.EqualValues(t, 1, got[0]["cells"])
	all := buckets("-all-buckets")
	assert.Greater(t, len(all), 1, "-all-buckets lists the empty buckets too")
	empty := 0
	for _, b := range all {
		if b["cells"] == float64(0) {
			empty++
		}
	}
	assert.Equal(t, len(all)-1, empty)
}

// TestStatsBucketsHelp: the flag is listed with the command's usage.
func TestStatsBucketsHelp(t *testing.T) {
	var out strings.Builder
	printHelp(&out, lookup("stats"))
	assert.Contains(t, out.String(), "-all-buckets")
	assert.Contains(t, out.String(), "list every bucket of the expiry histograms")
}

package main

import (
	"bytes"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/scan"
)

// TestRenderEstimate prints a sample's estimate with its 95% interval:
// on the first line, the ranges and shards; on its own line, the cells
// and rows the table holds and the factor the counts are scaled by.
func TestRenderEstimate(t *testing.T) {
	read := scan.Stats{Reads: 2048, Shards: 1024, Sampled: 2048, ShardsRead: 2048, RowsSeen: 10_030, CellsSeen: 50_150,
		Estimates: &scan.Estimates{
			CellsSeen: scan.Interval{Estimate: 1_003_000, Low: 999_311, High: 1_006_689},
			RowsSeen:  scan.Interval{Estimate: 200_600, Low: 199_862, High: 201_338},
			Scale:     20,
		}}
	var b bytes.Buffer
	renderAudit(&b, &audit.Report{Table: "t", Now: renderNow, Read: read})
	assert.Contains(t, b.String(), `table "t" at 2030-04-30T09:00:00.000Z: estimates from a sample of 2048 ranges of 1024 shards; bytes without values`)
	assert.Contains(t, b.String(), "\n  estimate: the table holds about 1003000 cells (95% interval 999311 to 1006689, ±0.4%) and 200600 rows (199862 to 201338), from 50150 cells read; counts above ×20.00\n")

	// A read that is not a sample's says nothing of estimates.
	b.Reset()
	renderAudit(&b, &audit.Report{Table: "t", Now: renderNow, Read: scan.Stats{Reads: 1, Shards: 1, ShardsRead: 1}})
	assert.NotContains(t, b.String(), "estimate")
}

// TestStatsFamilyWithoutStrategy is issue 28's fifth stumble: stats
// without -family judges a family without a strategy, whose cells are
// live until GC deletes them: it says when GC may delete them, due now
// for those past the policy's age, never that live cells expired.
func TestStatsFamilyWithoutStrategy(t *testing.T) {
	_, raw := startEmulator(t, map[string]bigtable.GCPolicy{"s": bigtable.MaxAgePolicy(time.Hour)})
	now := time.Now()
	put(t, raw, "old", "s", "c", now.Add(-90*time.Minute)) // past the age: GC may delete it now
	put(t, raw, "new", "s", "c", now.Add(-30*time.Minute))
	stdout, stderr, code := cellttl(with("stats", "-now", now.UTC().Format(time.RFC3339Nano))...)
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "live cells expire")
	assert.Regexp(t, `\n  s: no strategy, its cells are live until GC deletes them: GC may delete them now, due less than 1h ago: 1 cell \(\d+ B\); within 1h: 1 cell \(\d+ B\)\n`, stdout)
}

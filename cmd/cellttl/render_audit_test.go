package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

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

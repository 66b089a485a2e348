package sweep_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// TestReportString: the one line a report sums itself up in, for a round
// complete, stopped, or complete but with spans GC may have deleted.
func TestReportString(t *testing.T) {
	from := time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	r := &sweep.Report{Table: "sessions", Granularity: sweep.Row, From: from, Until: from.Add(time.Minute),
		Events: 3, Expired: scan.Count{Cells: 5, Bytes: 100}, Deleted: 3, Read: scan.Stats{Shards: 2, ShardsRead: 2}}
	assert.Equal(t, `sweep of table "sessions", expiries after 2030-05-01T00:00:00.000Z up to 2030-05-01T00:01:00.000Z: complete; 3 row events, 5 cells expired, deleted in 3 rows`, r.String())

	r.Read.ShardsRead, r.Deleted, r.Unscheduled, r.Events, r.Granularity = 1, 0, 2, 1, sweep.Cell
	assert.Equal(t, `sweep of table "sessions", expiries after 2030-05-01T00:00:00.000Z up to 2030-05-01T00:01:00.000Z: stopped after 1 of 2 shards; run again to resume; 1 cell event, 5 cells expired, 2 with no entry in the schedule`, r.String())

	r.Read.ShardsRead, r.Unscheduled = 2, 0
	r.Missed = []sweep.Missed{{Family: "a", From: from, Until: from.Add(time.Second), Keep: time.Second}}
	assert.Contains(t, r.String(), `: complete, but GC may have deleted some expired cells of family "a" first; `)
	r.Missed = append(r.Missed, sweep.Missed{Family: "b"}, sweep.Missed{Family: "a"})
	assert.Contains(t, r.String(), `: complete, but GC may have deleted some expired cells of families "a", "b" first; `, "each family once")
	assert.False(t, strings.Contains(r.String(), "\n"), "one line")
}

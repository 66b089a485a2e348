package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// TestRenderSweep: a round's report, as cellttl sweep prints it, in the
// states a real run reaches only by timing: resumed, stopped, with events
// no entry scheduled, and with spans GC may have deleted first.
func TestRenderSweep(t *testing.T) {
	base := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	r := &sweep.Report{Table: "t", Granularity: sweep.Row, From: base, Until: base.Add(30 * time.Minute), Resumed: true,
		Events: 2, Expired: scan.Count{Cells: 3, Bytes: 60}, Unscheduled: 1, Deleted: 2,
		Read:   scan.Stats{Shards: 2, ShardsRead: 2, Reads: 2, CellsReturned: 3, CellsSeen: 4},
		Missed: []sweep.Missed{{Family: "plain", From: base, Until: base.Add(30*time.Minute - time.Second), Keep: time.Second}}}
	var b bytes.Buffer
	require.NoError(t, renderSweep(&b, r))
	assert.Equal(t, `sweep of table "t", expiries after 2030-04-30T09:00:00.000Z up to 2030-04-30T09:30:00.000Z: complete, but GC may have deleted some expired cells first
  resumed a round an earlier run began
  2 row events delivered; 3 cells expired (60 B), 1 with no entry in the schedule, deleted in 2 rows
  read 3 cells returned of 4 cells seen, in 2 requests
  family "plain": cells that expired after 2030-04-30T09:00:00.000Z up to 2030-04-30T09:29:59.000Z may have been deleted by GC (it keeps them 1s after expiry) before the sweep read them
`, b.String())

	r.Read.ShardsRead = 1
	b.Reset()
	require.NoError(t, renderSweep(&b, r))
	assert.Contains(t, b.String(), ": stopped after 1 of 2 shards; run again to resume\n")
}

// TestRenderMoveState: the move commands print the state the report
// carries, a dry run labelled, and the policies as policy.Describe spells
// them.
func TestRenderMoveState(t *testing.T) {
	m := ttl.Move{To: ttl.OneSecond(), Start: time.Date(2030, 5, 1, 9, 0, 0, 0, time.UTC), Old: ttl.For(time.Hour)}
	for state, want := range map[move.State]string{move.NotStarted: ": not started\n", move.Started: ": started\n", move.Finished: ": finished\n"} {
		r := &move.Report{Table: "t", Family: "f", Move: m, State: state, Window: m.GCPolicy(), Final: m.To.GCPolicy()}
		var b bytes.Buffer
		renderMove(&b, r)
		assert.Contains(t, b.String(), want)
		assert.Contains(t, b.String(), "\n  "+m.String()+"\n")
		assert.Contains(t, b.String(), "  GC policy: missing now, maxage=1h during the move, maxage=1s after it\n")

		r.DryRun = true
		b.Reset()
		renderDryRun(&b, r)
		assert.Contains(t, b.String(), ": "+state.String()+"; dry run, nothing changed\n")
	}
}

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
)

// TestScheduleToolsTogether runs the tools on one schedule, as an operator
// would: ensure -schedule sets it up, writers given ttl.WithSchedule fill
// it, stats -schedule counts their entries, and sweep -schedule reports
// the expired cells by reading them.
func TestScheduleToolsTogether(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour)})
	ctx := context.Background()
	fams := []string{"-family", "sess=grace:1h:onesecond", "-schedule", "sched"}
	_, stderr, code := cellttl(with("ensure", append(fams, "-create", "-apply", "-quiet")...)...)
	require.Equal(t, exitOK, code, stderr)

	base := sweepBase
	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), time.Hour)},
		ttl.WithSchedule(e.Client.Open("sched")), ttl.WithClock(func() time.Time { return base }))
	require.NoError(t, err)
	for i, row := range []string{"u0", "u1", "u2"} {
		m := ttl.NewMutation()
		m.Set("sess", "token", []byte("v"), ttl.For(time.Duration(i+1)*10*time.Second))
		require.NoError(t, tbl.Apply(ctx, row, m))
	}
	m := ttl.NewMutation()
	m.Set("sess", "token", []byte("v"), ttl.For(2*time.Hour))
	require.NoError(t, tbl.Apply(ctx, "u3", m))

	stdout, stderr, code := cellttl(with("stats", append(fams, "-now", base.Add(time.Minute).Format(time.RFC3339), "-quiet")...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "  entries: 4 (3 behind, due before now: their cells have expired; 1 ahead)\n")

	sweepClock(t, base.Add(time.Minute))
	stdout, stderr, code = cellttl(with("sweep", append(fams, "-since", base.Format(time.RFC3339), "-format", "json", "-quiet")...)...)
	require.Equal(t, exitOK, code, stderr)
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), line)
		if row, ok := v["row"].(string); ok {
			rows = append(rows, row)
		}
	}
	assert.ElementsMatch(t, []string{"u0", "u1", "u2"}, rows)

	_, stderr, code = cellttl(with("check", fams...)...)
	assert.Equal(t, exitOK, code, stderr)
}

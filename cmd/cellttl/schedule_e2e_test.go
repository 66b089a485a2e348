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

// TestScheduleWithMovingFamily (issue 33.3): ensure -schedule, then sweep
// -schedule, for sess, with a grace, and mv, in a move from no strategy,
// whose GC keeps its cells until deleted: the schedule then keeps its
// entries until deleted too, check -schedule says so, and a scheduled
// sweep of each family reports its cell.
func TestScheduleWithMovingFamily(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Hour), "mv": bigtable.NoGcPolicy()})
	ctx := context.Background()
	base := sweepBase
	start := base.Add(-time.Hour)
	move := []string{"-move", "mv", "-from", "none", "-start", start.Format(time.RFC3339)}
	fams := append([]string{"-family", "sess=grace:1h:onesecond", "-family", "mv=onesecond", "-schedule", "sched"}, move...)
	_, stderr, code := cellttl(with("ensure", append(fams, "-create", "-apply", "-quiet")...)...)
	require.Equal(t, exitOK, code, stderr)
	info, err := e.Admin.TableInfo(ctx, "sched")
	require.NoError(t, err)
	require.Len(t, info.FamilyInfos, 1)
	assert.Equal(t, "", info.FamilyInfos[0].GCPolicy, "no GC: mv keeps its cells until deleted")
	_, stderr, code = cellttl(with("check", fams...)...)
	require.Equal(t, exitOK, code, stderr)

	tbl, err := ttl.NewTable(raw, map[string]ttl.Strategy{
		"sess": ttl.Grace(ttl.OneSecond(), time.Hour),
		"mv":   ttl.Move{To: ttl.OneSecond(), Start: start},
	}, ttl.WithSchedule(e.Client.Open("sched")), ttl.WithClock(func() time.Time { return base }))
	require.NoError(t, err)
	m := ttl.NewMutation()
	m.Set("sess", "token", []byte("v"), ttl.For(10*time.Second))
	m.Set("mv", "m", []byte("v"), ttl.For(20*time.Second))
	require.NoError(t, tbl.Apply(ctx, "u0", m))

	sweepClock(t, base.Add(time.Minute))
	for _, family := range []string{"sess", "mv"} {
		args := []string{"-family", "sess=grace:1h:onesecond", "-schedule", "sched"}
		if family == "mv" {
			args = append([]string{"-family", "mv=onesecond", "-schedule", "sched"}, move...)
		}
		stdout, stderr, code := cellttl(with("sweep", append(args, "-since", base.Format(time.RFC3339), "-format", "json", "-quiet")...)...)
		require.Equal(t, exitOK, code, "%s: %s", family, stderr)
		assert.Contains(t, stdout, `"family":"`+family+`"`, family)
	}
}

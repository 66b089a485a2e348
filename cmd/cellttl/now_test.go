package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/audit"
)

// TestNow is issue 21's fifth finding: one -now on every command that
// judges cells, the same instant everywhere: stats, ensure, inspect (and
// its old -at), the move's steps and sweep judge the cells at it.
func TestNow(t *testing.T) {
	_, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Second)})
	base := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	put(t, raw, "u1", "sess", "token", base.Add(time.Hour)) // OneSecond: expires at base+1h
	const before, after = "2030-04-30T09:30:00Z", "2030-04-30T10:30:00Z"

	live := func(at string) int64 {
		stdout, stderr, code := cellttl(with("stats", "-family", "sess=onesecond", "-now", at, "-format", "json")...)
		require.Equal(t, exitOK, code, stderr)
		var a auditJSON
		require.NoError(t, json.Unmarshal([]byte(stdout), &a), stdout)
		require.Len(t, a.Families, 1)
		return a.Families[0].Live.Cells
	}
	assert.Equal(t, int64(1), live(before))
	assert.Equal(t, int64(0), live(after))

	for _, flag := range []string{"-now", "-at"} {
		stdout, stderr, code := cellttl(with("inspect", "-family", "sess=onesecond", flag, after, "u1")...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "at 2030-04-30T10:30:00.000Z\n", flag)
		assert.Regexp(t, `\nsess +token .* expired 30m0s ago +no: expired`, stdout, flag)
	}

	stdout, stderr, code := cellttl(with("ensure", "-family", "sess=onesecond", "-now", after)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `table "t" at 2030-04-30T10:30:00.000Z: every family matches`)

	start := base.Add(-time.Hour)
	stdout, stderr, code = cellttl(append(moveArgs("plan", start, "-now", after, "-format", "json"), "-from", "default:1h")...)
	require.Equal(t, exitOK, code, stderr)
	var r struct{ Now time.Time }
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	assert.Equal(t, base.Add(90*time.Minute), r.Now.UTC())

	// Judged at -now, the cell expired half an hour before the round read
	// it, and GC keeps it a second: the sweep reports it, and that it may
	// have missed others.
	stdout, stderr, code = cellttl(with("sweep", "-family", "sess=onesecond", "-since", before, "-now", after, "-margin", "1s")...)
	require.Equal(t, exitMismatch, code, stderr)
	assert.Equal(t, "cell expired 2030-04-30T10:00:00Z: table \"t\" row \"u1\" sess:\"token\"\n", stdout)
	assert.Contains(t, stderr, "2030-04-30T10:29:59")

	// The help says it once, the same way everywhere.
	for _, cmd := range commands {
		stdout, _, _ := cellttl(append(strings.Fields(cmd.name), "-h")...)
		if cmd == checkCommand {
			assert.NotContains(t, stdout, "-now", "check judges no cell")
			continue
		}
		assert.Contains(t, stdout, "  -now time\n    \tjudge the cells at this time (RFC 3339) instead of the clock's now\n", cmd.name)
	}
}

// TestNowTimesProgress: -now fixes the instant cells are judged at, not the
// clock the scan times its progress with. The clock stopped at -now made
// every progress line read no elapsed time and no rate.
func TestNowTimesProgress(t *testing.T) {
	_, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Second)})
	at := time.Date(2030, 4, 30, 10, 30, 0, 0, time.UTC)
	put(t, raw, "u1", "sess", "token", at.Add(time.Hour))
	c, err := parse(statsCommand, append(append([]string{}, on...), "-family", "sess=onesecond", "-now", at.Format(time.RFC3339)))
	require.NoError(t, err)
	strategies, err := c.strategies()
	require.NoError(t, err)
	ctx := context.Background()
	admin, err := adminClient(ctx, c)
	require.NoError(t, err)
	defer admin.Close()
	client, err := dataClient(ctx, c)
	require.NoError(t, err)
	defer client.Close()

	var term bytes.Buffer
	progress := &progressLine{w: &term, terminal: true}
	auditor, err := audit.New(admin, client.Open(c.table), c.table, strategies, audit.Options{Scan: progress.options(c)})
	require.NoError(t, err)
	report, err := auditor.Run(ctx)
	require.NoError(t, err)
	progress.end()

	assert.True(t, report.Now.Equal(at), "judged at -now: %s", report.Now)
	assert.Equal(t, int64(1), report.Families[0].Live.Cells, "live at -now")
	assert.Positive(t, progress.last.Elapsed, "the scan's progress times the work")
	assert.Contains(t, term.String(), " rows/s", "and shows its rate")

	// Each tool's clock starts at -now; the sweep's stays there, since it
	// reads its clock for its window too.
	for i := 0; i < 2; i++ {
		assert.Equal(t, at, c.clock()(), "a new tool's first reading")
		assert.Equal(t, at, c.sweepClock()())
	}
}

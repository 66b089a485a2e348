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
)

// movingArgs are the flags of check or ensure for family sess of table t
// in the move moveArgs describes: real timestamps to onesecond, the old
// cells living 30 minutes after their write times, as "cellttl move"
// takes them.
func movingArgs(cmd string, start time.Time, extra ...string) []string {
	return append(with(cmd, "-from", "none", "-start", start.UTC().Format(time.RFC3339), "-old", "for:30m", "-skew", "1s"), extra...)
}

// setPolicy sets family's GC policy of table t, as "cellttl move start"
// and "finish" do.
func setPolicy(t *testing.T, admin *bigtable.AdminClient, family string, p bigtable.GCPolicy) {
	t.Helper()
	require.NoError(t, admin.SetGCPolicy(context.Background(), "t", family, p))
}

// TestCheckInMove checks a family in a move: a mismatch without the move,
// ok with it, in the move's window and once finished, given as the move
// commands take it, alone or among other families.
func TestCheckInMove(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(30 * time.Minute), "clicks": bigtable.MaxAgePolicy(48 * time.Hour)})
	now := time.Now()
	put(t, raw, "u1", "sess", "token", now.Add(-10*time.Minute))
	start := now.Add(-time.Minute).Truncate(time.Second)

	// Without the move, the window's policy is a mismatch.
	stdout, stderr, code := cellttl(with("check", "-family", "sess=onesecond")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "mismatch")
	assert.Contains(t, stderr, "found maxage=30m, want maxage=1s")

	// With it, alone: -move is the one family given.
	move := "Move{From: nil, To: OneSecond(), Start: " + start.UTC().Format(time.RFC3339) + ", Old: For(30m0s), Skew: 1s}"
	stdout, stderr, code = cellttl(movingArgs("check", start, "-family", "sess=onesecond")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, `table "t"
FAMILY  STRATEGY`+strings.Repeat(" ", len(move)-len("STRATEGY"))+`  FOUND       WANT                     STATUS
sess    `+move+`  maxage=30m  maxage=30m or maxage=1s  ok (in a move)
`, stdout)

	// Among other families, named with -move; as JSON.
	args := movingArgs("check", start, "-family", "sess=onesecond", "-family", "clicks=default:2d", "-move", "sess", "-format", "json")
	stdout, stderr, code = cellttl(args...)
	assert.Equal(t, exitOK, code, stderr)
	var report struct {
		Families []struct {
			Family, Strategy, Found, Want, Finished string
			Matches                                 bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &report), stdout)
	require.Len(t, report.Families, 2)
	clicks, sess := report.Families[0], report.Families[1]
	assert.Equal(t, "clicks", clicks.Family)
	assert.True(t, clicks.Matches)
	assert.Empty(t, clicks.Finished, "clicks is in no move")
	assert.Equal(t, "sess", sess.Family)
	assert.Equal(t, move, sess.Strategy)
	assert.True(t, sess.Matches)
	assert.Equal(t, "maxage=30m", sess.Want)
	assert.Equal(t, "maxage=1s", sess.Finished)
	assert.NotEqual(t, sess.Finished, sess.Found, "not finished yet")

	// Finished: OneSecond's policy matches too, and says so.
	setPolicy(t, e.Admin, "sess", bigtable.MaxAgePolicy(time.Second))
	stdout, stderr, code = cellttl(movingArgs("check", start, "-family", "sess=onesecond", "-family", "clicks=default:2d", "-move", "sess")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "  maxage=1s  maxage=30m or maxage=1s  ok (move finished)\n")
	assert.Contains(t, stdout, "clicks  DefaultExpiration(48h0m0s)")
	stdout, _, code = cellttl(movingArgs("check", start, "-family", "sess=onesecond", "-format", "json")...)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, `"found": "maxage=1s"`)
	assert.Contains(t, stdout, `"finished": "maxage=1s"`)
	assert.Contains(t, stdout, `"matches": true`)

	// Any other policy is a mismatch still.
	setPolicy(t, e.Admin, "sess", bigtable.MaxAgePolicy(time.Hour))
	stdout, stderr, code = cellttl(movingArgs("check", start, "-family", "sess=onesecond")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "  maxage=1h  maxage=30m or maxage=1s  mismatch\n")
	assert.Contains(t, stderr, "found maxage=1h, want maxage=30m (or maxage=1s once the move is finished)")
}

// TestEnsureInMove checks that ensure, given the move, keeps the window's
// policy and the finished one, sets the window's on a family without it
// losing nothing (not even counting the cells the old rule already treats
// as expired), where without the move it refuses.
func TestEnsureInMove(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	now := time.Now()
	put(t, raw, "u1", "sess", "token", now.Add(-10*time.Minute)) // live under the old rule
	put(t, raw, "u2", "sess", "token", now.Add(-2*time.Hour))    // expired under it
	start := now.Add(-time.Minute).Truncate(time.Second)

	// Without the move: OneSecond would hide both rows.
	stdout, _, code := cellttl(with("ensure", "-family", "sess=onesecond")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "refused  2\n")

	// With it: the move's policy, nothing lost, nothing refused.
	stdout, stderr, code := cellttl(movingArgs("ensure", start, "-family", "sess=onesecond")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	assert.Regexp(t, `\nsess +Move\{From: nil, To: OneSecond\(\), .*\} +never +maxage=30m +would change +0\n`, stdout)
	assert.NotContains(t, stdout, "rows hold")
	assert.NotContains(t, stdout, "refused")
	assert.Equal(t, "", policies(t, e.Admin)["sess"], "a dry run")
	stdout, stderr, code = cellttl(movingArgs("ensure", start, "-family", "sess=onesecond", "-apply")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, ": 1 change made\n")
	assert.Equal(t, "age() > 30m", policies(t, e.Admin)["sess"])

	// In the window: without the move, ensure would end it early and
	// hide u1; with it, nothing to change.
	stdout, _, code = cellttl(with("ensure", "-family", "sess=onesecond", "-apply")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "maxage=30m  maxage=1s  refused  1\n")
	for _, extra := range [][]string{nil, {"-apply"}} {
		stdout, stderr, code = cellttl(movingArgs("ensure", start, append([]string{"-family", "sess=onesecond", "-family", "meta=default:1d", "-move", "sess", "-create"}, extra...)...)...)
		assert.Equal(t, exitOK, code, stderr)
		assert.Regexp(t, `\nsess +Move\{.*\} +maxage=30m +maxage=30m +keep +-\n`, stdout)
		assert.NotContains(t, stdout, "rows hold")
		assert.Equal(t, "age() > 30m", policies(t, e.Admin)["sess"], "the window's policy is kept")
	}
	// Finished: OneSecond's policy is not reverted to the window's.
	setPolicy(t, e.Admin, "sess", bigtable.MaxAgePolicy(time.Second))
	stdout, stderr, code = cellttl(movingArgs("ensure", start, "-family", "sess=onesecond", "-apply")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, ": every family matches its strategy, nothing to change\n")
	assert.Regexp(t, `\nsess +Move\{.*\} +maxage=1s +maxage=30m +keep +-\n`, stdout)
	assert.Equal(t, "age() > 1000000", policies(t, e.Admin)["sess"])
}

// TestMovingCommandLine checks the move flags of check and ensure: bad
// ones exit 2 and change nothing; help lists them.
func TestMovingCommandLine(t *testing.T) {
	e, _ := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	start := time.Now().Add(time.Hour).Truncate(time.Second)
	for _, cmd := range []string{"check", "ensure"} {
		help, _, code := cellttl("help", cmd)
		assert.Equal(t, exitOK, code)
		for _, f := range []string{"-move", "-from", "-start", "-old", "-skew"} {
			assert.Regexp(t, "\n  "+f+"[ \n]", help, "help %s: flag %s", cmd, f)
		}
		assert.Contains(t, help, "A family in a move")
		for _, tt := range []struct {
			args []string
			msg  string
		}{
			{movingArgs(cmd, start, "-family", "sess=onesecond", "-family", "b=onesecond"), "name the family in it with -move NAME"},
			{with(cmd, "-family", "sess=onesecond", "-old", "for:30m"), `family "sess" in a move: missing -from SPEC or -from none`},
			{with(cmd, "-family", "sess=onesecond", "-move", "sess", "-from", "none"), `family "sess" in a move: missing -start TIME`},
			{movingArgs(cmd, start, "-family", "sess=onesecond", "-move", "other"), "-move other: give the family with -family other=SPEC too"},
			{movingArgs(cmd, start, "-family", "sess=onesecond", "-from", "onesecond"), "moves go from a family without a strategy"},
			{movingArgs(cmd, start, "-family", "sess=onesecond", "-old", "later"), "want default, for:DURATION, until:TIME or forever"},
		} {
			if cmd == "ensure" {
				tt.args = append(tt.args, "-apply")
			}
			stdout, stderr, code := cellttl(tt.args...)
			assert.Equal(t, exitUsage, code, tt.args)
			assert.Empty(t, stdout, tt.args)
			assert.Contains(t, stderr, tt.msg, tt.args)
		}
	}
	assert.Equal(t, "", policies(t, e.Admin)["sess"])
}

// TestStatsInMove audits a family in a move: cells written before the start
// with real timestamps are judged by the old rule (live for 30 minutes
// after their write), not read as OneSecond expiries long past.
func TestStatsInMove(t *testing.T) {
	_, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(30 * time.Minute)})
	now := time.Now()
	put(t, raw, "u1", "sess", "token", now.Add(-10*time.Minute))
	put(t, raw, "u2", "sess", "token", now.Add(-40*time.Minute))
	start := now.Add(-time.Minute).Truncate(time.Second)

	stats := func(args ...string) (live, expired int64) {
		t.Helper()
		stdout, stderr, code := cellttl(args...)
		require.Equal(t, exitOK, code, stderr)
		var a auditJSON
		require.NoError(t, json.Unmarshal([]byte(stdout), &a), stdout)
		require.Len(t, a.Families, 1)
		return a.Families[0].Live.Cells, a.Families[0].Expired.Cells
	}
	live, expired := stats(with("stats", "-family", "sess=onesecond", "-format", "json")...)
	assert.Equal(t, [2]int64{0, 2}, [2]int64{live, expired}, "under OneSecond alone both real timestamps are past expiries")
	live, expired = stats(movingArgs("stats", start, "-family", "sess=onesecond", "-format", "json")...)
	assert.Equal(t, [2]int64{1, 1}, [2]int64{live, expired}, "in the move: written 10 minutes ago, live; 40 minutes ago, expired")
}

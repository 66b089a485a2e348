package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moveArgs are the flags of a move of family sess of table t from real
// timestamps to onesecond, started a minute ago, the old cells living 30
// minutes after their write times.
func moveArgs(step string, start time.Time, extra ...string) []string {
	args := append([]string{"move", step}, on...)
	args = append(args, "-family", "sess=onesecond", "-from", "none", "-start", start.UTC().Format(time.RFC3339),
		"-old", "for:30m", "-skew", "1s")
	return append(args, extra...)
}

// TestMove takes a family of real timestamps through a whole move with
// the command line: plan, start (a dry run, then applied), rewrite,
// finish, and a check that the family now has OneSecond's policy.
func TestMove(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	now := time.Now()
	for i := 0; i < 3; i++ {
		put(t, raw, fmt.Sprintf("user#%d", i), "sess", "token", now.Add(-10*time.Minute))
	}
	start := now.Add(-time.Minute).Truncate(time.Second)

	stdout, stderr, code := cellttl(moveArgs("plan", start)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `family "sess" of table "t" at `)
	assert.Contains(t, stdout, ": started\n")
	assert.Contains(t, stdout, "  GC policy: never now, maxage=30m during the move, maxage=1s after it\n")
	assert.Contains(t, stdout, "  old cells: 3 cells (")
	assert.Contains(t, stdout, "  blocked: 3 cells of the old rule live until ")

	stdout, _, code = cellttl(moveArgs("start", start)...)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, ": started; dry run, nothing changed\n")
	assert.Contains(t, stdout, "  would do: GC policy never → maxage=30m\n")
	assert.Contains(t, stdout, "dry run: nothing changed; run again with -apply\n")
	assert.Equal(t, "", policies(t, e.Admin)["sess"])
	_, stderr, code = cellttl(moveArgs("start", start, "-apply")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "age() > 30m", policies(t, e.Admin)["sess"])

	_, stderr, code = cellttl(moveArgs("finish", start, "-apply")...)
	assert.Equal(t, exitMismatch, code, "old cells are live")
	assert.Contains(t, stderr, "3 cells of the old rule are live")
	assert.Equal(t, "age() > 30m", policies(t, e.Admin)["sess"])

	stdout, stderr, code = cellttl(moveArgs("rewrite", start, "-apply", "-checkpoint", t.TempDir()+"/rewrite.json")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "  done: rewrote 3 old cells in the new encoding")

	stdout, _, code = cellttl(moveArgs("status", start, "-format", "json")...)
	assert.Equal(t, exitOK, code)
	var status struct {
		OldLive struct{ Cells int } `json:"old_live"`
		New     struct{ Cells int } `json:"new"`
		Actions []string            `json:"actions"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &status), stdout)
	assert.Equal(t, 0, status.OldLive.Cells)
	assert.Equal(t, 3, status.New.Cells)
	assert.Contains(t, status.Actions, "finish: no cell of the old rule is live; GC policy maxage=30m → maxage=1s")

	_, stderr, code = cellttl(moveArgs("finish", start, "-apply")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "age() > 1000000", policies(t, e.Admin)["sess"])
	_, _, code = cellttl(with("check", "-family", "sess=onesecond")...)
	assert.Equal(t, exitOK, code)
}

// TestMoveCommandLine checks the move commands' bad command lines: each
// exits 2 and changes nothing.
func TestMoveCommandLine(t *testing.T) {
	_, _ = startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	start := time.Now().Add(time.Hour).Truncate(time.Second)
	stdout, _, code := cellttl("help", "move")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, moveUsage, stdout)
	_, stderr, code := cellttl("move")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, moveUsage, stderr)
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"move", "frob"}, `unknown command "move frob"`},
		{append([]string{"move", "plan"}, on...), "missing -family"},
		{append(append([]string{"move", "plan"}, on...), "-family", "sess=onesecond"), "missing -from"},
		{append(append([]string{"move", "plan"}, on...), "-family", "sess=onesecond", "-from", "none"), "missing -start"},
		{moveArgs("plan", start, "-old", "later"), "want default, for:DURATION, until:TIME or forever"},
		{moveArgs("plan", start, "-from", "sometimes"), `strategy "sometimes"`},
		{moveArgs("plan", start, "-family", "other=onesecond"), "give the one family to move"},
		{moveArgs("plan", start, "-from", "onesecond"), "moves go from a family without a strategy"},
		{moveArgs("plan", start, "-start", "2030-01-01T00:00:00.0005Z"), "Start must be a whole millisecond"},
	} {
		stdout, stderr, code := cellttl(tt.args...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Empty(t, stdout, tt.args)
		assert.Contains(t, stderr, tt.msg, tt.args)
	}
}

// TestMoveOptionsAppProfile: the -app-profile the client reads and writes
// with is the one the move's errors name when the profile refuses the
// rewrite's single-row transactions.
func TestMoveOptionsAppProfile(t *testing.T) {
	c := &config{appProfile: "replicated", apply: true}
	if o := c.moveOptions(nil); o.AppProfile != "replicated" || o.DryRun {
		t.Errorf("moveOptions: AppProfile %q, DryRun %v; want %q, false", o.AppProfile, o.DryRun, "replicated")
	}
}

// TestMoveStepsRefuseWhatTheirApplyWould is issue 28's second and third
// stumbles: a dry run of start refuses what -apply refuses (misplaced
// cells without -checkpoint) instead of inviting -apply, and a rewrite
// given start's checkpoint is refused before anything says done.
func TestMoveStepsRefuseWhatTheirApplyWould(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(48 * time.Hour)})
	start := time.Now().Add(time.Hour).Truncate(time.Second)
	put(t, raw, "u1", "sess", "long", start.Add(23*time.Hour)) // a longer lifetime: stamped above the boundary
	args := func(step string, extra ...string) []string {
		a := append([]string{"move", step}, on...)
		return append(append(a, "-family", "sess=onesecond", "-from", "default:48h", "-start", start.Format(time.RFC3339)), extra...)
	}
	const refusal = "1 old cell stamped above the boundary must be rewritten, and that needs a checkpoint: a rewritten cell cannot be told from one still to rewrite (allow it with -checkpoint)"
	for _, apply := range [][]string{nil, {"-apply"}} {
		stdout, stderr, code := cellttl(args("start", apply...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", apply, stderr)
		assert.Contains(t, stderr, refusal, apply)
		assert.NotContains(t, stdout, "run again with -apply", apply)
		assert.NotContains(t, stdout, "done:", apply)
		assert.Equal(t, "age() > 2d", policies(t, e.Admin)["sess"], apply)
	}
	_, stderr, _ := cellttl(args("start")...)
	assert.Contains(t, stderr, "cellttl move start: dry run: with -apply this step would be refused; nothing changed\n")

	dir := t.TempDir()
	startCP, rewriteCP := dir+"/start.json", dir+"/rewrite.json"
	stdout, stderr, code := cellttl(args("start", "-checkpoint", startCP)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "would do: rewrite 1 old cell stamped at or above the boundary")
	_, stderr, code = cellttl(args("start", "-checkpoint", startCP, "-apply")...)
	require.Equal(t, exitOK, code, stderr)

	after := []string{"-now", start.Add(time.Hour).Format(time.RFC3339)}
	for _, apply := range [][]string{nil, {"-apply"}} {
		stdout, stderr, code = cellttl(args("rewrite", append(append(after, "-checkpoint", startCP), apply...)...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", apply, stderr)
		assert.NotContains(t, stdout, "done:", "%v: nothing says done before a refusal", apply)
		assert.NotContains(t, stdout, "rewrote", apply)
		assert.Contains(t, stderr, "the checkpoint records other work (start table", apply)
		assert.Contains(t, stderr, "give each step a checkpoint of its own", apply)
	}
	_, stderr, code = cellttl(args("status", append(after, "-checkpoint", startCP)...)...)
	assert.Equal(t, exitOK, code, "status reads start's checkpoint: %s", stderr)
	stdout, stderr, code = cellttl(args("rewrite", append(after, "-checkpoint", rewriteCP, "-apply")...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "done: rewrote")
}

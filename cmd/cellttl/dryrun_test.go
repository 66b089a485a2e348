package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
)

// TestDryRuns is issue 21's third finding: a dry run says what it would
// do and is labelled; a step run before the move's start is "not yet"
// (exit 4), not a bad command line; messages name flags, not the
// library's fields.
func TestDryRuns(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	now := time.Now()
	for i := 0; i < 3; i++ {
		put(t, raw, fmt.Sprintf("user#%d", i), "sess", "token", now.Add(-10*time.Minute))
	}
	start := now.Add(-time.Minute).Truncate(time.Second)

	stdout, stderr, code := cellttl(moveArgs("rewrite", start)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, ": started; dry run, nothing changed\n")
	assert.Contains(t, stdout, "  would rewrite: 3 cells; would keep: 0 cells\n")
	assert.Contains(t, stdout, "  would rewrite 3 old cells in the new encoding")
	assert.NotContains(t, stdout, "rewritten")
	assert.NotContains(t, stdout, "done:")
	assert.True(t, strings.HasSuffix(stdout, "dry run: nothing changed; run again with -apply\n"), stdout)

	stdout, stderr, code = cellttl(moveArgs("finish", start)...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "; dry run, nothing changed\n")
	assert.Contains(t, stderr, "3 cells of the old rule are live")
	assert.Contains(t, stderr, "rewrite them or wait (allow it with -allow-data-loss)", "the flag, not the Go field")
	assert.NotContains(t, stderr, "move.Family", "steps, not Go methods")
	assert.Contains(t, stderr, "cellttl move finish: dry run: with -apply this step would be refused; nothing changed\n")
	assert.Equal(t, "", policies(t, e.Admin)["sess"])

	// Before the start: not yet.
	later := now.Add(time.Hour).Truncate(time.Second)
	for _, step := range []string{"rewrite", "finish"} {
		stdout, stderr, code = cellttl(moveArgs(step, later, "-apply")...)
		assert.Equal(t, exitNotReady, code, step)
		assert.Empty(t, stdout, step)
		assert.Contains(t, stderr, "cellttl move "+step+": not yet: the move starts at "+later.UTC().Format("2006-01-02T15:04:05.000Z")+", it is ", step)
	}
	// -now judges the step at another instant: after the start, ready.
	_, stderr, code = cellttl(moveArgs("rewrite", later, "-now", later.Add(time.Minute).UTC().Format(time.RFC3339))...)
	assert.Equal(t, exitOK, code, stderr)

	// Flags, not fields.
	stdout, stderr, code = cellttl(with("ensure", "-family", "sess=onesecond", "-apply")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "refused")
	assert.NotContains(t, stderr, "AllowDataLoss")
	assert.Contains(t, stderr, "(allow it with -allow-data-loss)")
	// A refusal is recognised by its type, wrapped or not; other errors
	// print as they are.
	refusal := &policy.OptionError{Err: errors.New("refused"), Option: move.Checkpoint}
	assert.Equal(t, "cellttl x: refused (allow it with -checkpoint)\n", func() string {
		var b strings.Builder
		fail(&b, "x", fmt.Errorf("move.Family.Start: %w", refusal))
		return b.String()
	}())
	assert.Equal(t, "plain AllowDataLoss", message(errors.New("plain AllowDataLoss")))
	assert.Equal(t, "refused (allow it with Elsewhere)", message(&policy.OptionError{Err: errors.New("refused"), Option: "Elsewhere"}))
}

// TestFlagHelp checks that every flag's help reads as English: a value's
// placeholder is a noun, and -progress says how to turn it off.
func TestFlagHelp(t *testing.T) {
	line := regexp.MustCompile(`(?m)^  -([a-z-]+)(?: (\S+))?$`)
	nouns := map[string]bool{"project": true, "instance": true, "table": true, "NAME=SPEC": true, "duration": true, "format": true,
		"profile": true, "N": true, "fraction": true, "NAME": true, "SPEC": true, "TIME": true, "RULE": true, "DURATION": true,
		"time": true, "file": true, "family": true, "KIND": true, "period": true, "address": true}
	for _, cmd := range commands {
		stdout, _, code := cellttl(append(strings.Fields(cmd.name), "-h")...)
		require.Equal(t, exitOK, code)
		for _, m := range line.FindAllStringSubmatch(stdout, -1) {
			if m[2] != "" {
				assert.True(t, nouns[m[2]], "cellttl %s: -%s %s", cmd.name, m[1], m[2])
			}
		}
		if cmd.scans {
			assert.Contains(t, stdout, "-progress=false or -quiet turns it off", cmd.name)
		}
	}
	for args, want := range map[string]bool{"": true, "-quiet": false, "-quiet=false": true, "-progress=false": false} {
		c, err := parse(statsCommand, append(with("")[1:], strings.Fields(args)...))
		require.NoError(t, err, args)
		assert.Equal(t, want, c.progress, args)
	}
	_, err := parse(statsCommand, append(with("")[1:], "-quiet=maybe"))
	assert.Error(t, err)
}

// TestEnsureTakesOffAGrace is issue 28's fourth stumble: taking the grace
// off a OneSecond family moves no live cell's expiry, so its live cells
// are not rows lost; the expired cells the grace still keeps are, worded
// as what they are: collectable at once, before a sweep reads them.
func TestEnsureTakesOffAGrace(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"s": bigtable.MaxAgePolicy(time.Hour)})
	now := time.Now()
	for i := 0; i < 3; i++ {
		put(t, raw, fmt.Sprintf("live#%d", i), "s", "token", now.Add(time.Duration(i+1)*time.Hour))
	}
	args := with("ensure", "-family", "s=onesecond", "-now", now.UTC().Format(time.RFC3339Nano))
	stdout, stderr, code := cellttl(args...)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `\ns +OneSecond\(\) +maxage=1h +maxage=1s +would change +0\n`, stdout, "no row lost")
	assert.Contains(t, stdout, "  s: not lost: 3 rows hold live cells whose expiries OneSecond() keeps: GC deletes each 1h sooner once expired (maxage=1h, a grace, taken off)\n")
	assert.NotContains(t, stdout, "earlier")

	// An expired cell the grace keeps is lost to a sweep that has not
	// read it: that needs consent.
	put(t, raw, "expired", "s", "token", now.Add(-10*time.Minute))
	stdout, stderr, code = cellttl(args...)
	assert.Equal(t, exitMismatch, code)
	assert.Regexp(t, `refused +1\n`, stdout)
	assert.Contains(t, stdout, "which OneSecond() reads as expired and maxage=1h keeps stored: GC deletes them at once; written under maxage=1h as a default, they are live cells, hidden at once; kept by a grace, they are lost to a sweep that has not read them")
	assert.Contains(t, stdout, "  s: not lost: 3 rows hold live cells")
	assert.Contains(t, stderr, "run again with -allow-data-loss")
	assert.Equal(t, "age() > 1h", policies(t, e.Admin)["s"])
}

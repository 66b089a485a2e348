package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/lease"
	"github.com/cellttl/ttl/scan"
)

// TestSweepCheckpointInBigtable keeps a sweep's checkpoint in a row of a
// table of the instance: a second run resumes from it as from a file. A
// missing table is refused with the line that creates it; -lease needs
// such a checkpoint and -every.
func TestSweepCheckpointInBigtable(t *testing.T) {
	w, _ := startSweep(t, seeded)
	cp := "bigtable:sweeps/t"
	_, stderr, code := cellttl(sweepArgs(append(since, "-checkpoint", cp)...)...)
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, stderr, "cbt createtable sweeps families=cp:maxversions=1")

	_, err := w.e.CreateTable(context.Background(), "sweeps", map[string]bigtable.GCPolicy{"cp": bigtable.MaxVersionsPolicy(1)})
	require.NoError(t, err)
	first, stderr, code := cellttl(sweepArgs(append(since, "-checkpoint", cp)...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, cellEvents, first)
	second, stderr, code := cellttl(sweepArgs("-checkpoint", cp)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, second, "the watermark kept in the row: nothing twice")
	assert.Contains(t, stderr, "the watermark is at 2030-04-30T09:00:50.000Z")

	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-checkpoint", "bigtable:sweeps", "-every", "1m"}, "-checkpoint bigtable:sweeps: want bigtable:TABLE/KEY"},
		{[]string{"-lease", "30s", "-every", "1m"}, "-lease needs -checkpoint bigtable:TABLE/KEY"},
		{[]string{"-lease", "30s", "-checkpoint", cp}, "-lease needs -checkpoint bigtable:TABLE/KEY, the row its replicas share, and -every PERIOD"},
		{[]string{"-lease", "-30s", "-every", "1m"}, "-lease -30s"},
	} {
		stdout, stderr, code := cellttl(sweepArgs(tt.args...)...)
		assert.NotEqual(t, exitOK, code, tt.args)
		assert.Empty(t, stdout, tt.args)
		assert.Contains(t, stderr, "cellttl sweep: "+tt.msg, tt.args)
	}
	help, _, _ := cellttl("help", "sweep")
	assert.Regexp(t, "\n  -lease[ \n]", help)
	assert.Contains(t, help, "bigtable:TABLE/KEY")
}

// TestMoveRewriteCheckpointInBigtable records a move's rewrite in a row
// of a table of the instance, as in a file; a missing table is refused
// with the line that creates it, and nothing is rewritten.
func TestMoveRewriteCheckpointInBigtable(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil})
	now := time.Now()
	for i := 0; i < 3; i++ {
		put(t, raw, fmt.Sprintf("user#%d", i), "sess", "token", now.Add(-10*time.Minute))
	}
	start := now.Add(-time.Minute).Truncate(time.Second)
	_, stderr, code := cellttl(moveArgs("start", start, "-apply")...)
	require.Equal(t, exitOK, code, stderr)

	_, stderr, code = cellttl(moveArgs("rewrite", start, "-apply", "-checkpoint", "bigtable:moves/rewrite")...)
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, stderr, "cbt createtable moves families=cp:maxversions=1")

	_, err := e.CreateTable(context.Background(), "moves", map[string]bigtable.GCPolicy{"cp": bigtable.MaxVersionsPolicy(1)})
	require.NoError(t, err)
	stdout, stderr, code := cellttl(moveArgs("rewrite", start, "-apply", "-checkpoint", "bigtable:moves/rewrite")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "  done: rewrote 3 old cells in the new encoding")
	cp, err := lease.Open(context.Background(), e.Admin, e.Client.Open("moves"), "moves", "rewrite", lease.Options{})
	require.NoError(t, err)
	rec, err := cp.Load(context.Background())
	require.NoError(t, err)
	require.NotNil(t, rec, "the rewrite recorded its progress in the row")
	assert.True(t, scan.Finished(context.Background(), cp, rec.Work))
}

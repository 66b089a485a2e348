//go:build unix

package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepTerminated stops sweep -every with SIGTERM, as a service
// manager does, once its first round is reported: it stops between
// rounds, cleanly, and exits 0.
func TestSweepTerminated(t *testing.T) {
	startSweep(t, seeded)
	out := &watchedOut{each: func(int) {
		// The sweep waits on its context until it returns: its handler of
		// SIGTERM is installed.
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}}
	var errs bytes.Buffer
	code := execute(sweepArgs(append(since, "-every", "1h", "-timeout", "30s", "-format", "json")...), out, &errs)
	assert.Equal(t, exitOK, code, errs.String())
	assert.Equal(t, "cellttl sweep: stopped after 1 round: terminated signal received\n", unwarned(errs.String()))
	events, reports := decodeSweep(t, out.String())
	require.Len(t, reports, 1)
	assert.True(t, reports[0].Report.Complete)
	assert.Equal(t, cellEvents, eventLines(events))
}

// TestSweepInterrupted is issue 28's Ctrl-C: sweep -every interrupted by
// SIGINT exits 1, an interrupted run, as every command does, although its
// rounds may have missed cells (exit 3 before); SIGTERM, a service
// manager's stop, exits as the rounds did.
func TestSweepInterrupted(t *testing.T) {
	startSweep(t, map[string]bigtable.GCPolicy{"sess": bigtable.MaxAgePolicy(time.Second), "clicks": nil, "meta": nil})
	sweepClock(t, sweepBase.Add(time.Hour))
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: exitFailed, syscall.SIGTERM: exitMismatch} {
		out := &watchedOut{each: func(int) { syscall.Kill(os.Getpid(), sig) }}
		var errs bytes.Buffer
		code := execute(sweepArgs(append(since, "-every", "1h", "-timeout", "30s", "-format", "json")...), out, &errs)
		assert.Equal(t, want, code, "%v: %s", sig, errs.String())
		assert.Contains(t, errs.String(), "cellttl sweep: GC may have deleted cells", sig)
		_, reports := decodeSweep(t, out.String())
		require.Len(t, reports, 1, sig)
		assert.NotEmpty(t, reports[0].Report.Missed, sig)
		if sig == syscall.SIGINT {
			assert.Contains(t, errs.String(), "cellttl sweep: stopped after 1 round: interrupted\n")
			assert.True(t, strings.HasSuffix(errs.String(), "cellttl sweep: interrupted: it did not finish\n"), errs.String())
		}
	}
}

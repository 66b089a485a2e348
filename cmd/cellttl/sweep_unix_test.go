//go:build unix

package main

import (
	"bytes"
	"os"
	"syscall"
	"testing"

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
	assert.Equal(t, "cellttl sweep: stopped after 1 round: context canceled\n", errs.String())
	events, reports := decodeSweep(t, out.String())
	require.Len(t, reports, 1)
	assert.True(t, reports[0].Report.Complete)
	assert.Equal(t, cellEvents, eventLines(events))
}

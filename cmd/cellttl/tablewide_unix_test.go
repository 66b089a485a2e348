//go:build unix

package main

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestScanInterrupted interrupts stats and ensure, as Ctrl-C does, while
// the last shard's read is stalled: each prints the four shards' counts
// labelled partial, decides nothing and exits 1. One worker reads the
// shards in order: the stalled one is the last.
func TestScanInterrupted(t *testing.T) {
	w := startWatched(t, seeded)
	w.seed(t, time.Now())
	w.stall = "r8"
	w.stalled = make(chan struct{}, 1)
	for _, args := range [][]string{statsArgs("-workers", "1", "-timeout", "30s"), ensureArgs("-workers", "1", "-timeout", "30s", "-apply")} {
		go func() {
			select {
			case <-w.stalled:
				// The command waits on its context: its interrupt handler is
				// installed until it returns.
				syscall.Kill(os.Getpid(), syscall.SIGINT)
			case <-time.After(20 * time.Second):
			}
		}()
		stdout, stderr, code := cellttl(args...)
		assert.Equal(t, exitFailed, code, args)
		assert.Contains(t, stdout, ": the scan stopped after 4 of 5 shards:", args)
		assert.Contains(t, stdout, "partial", args)
		assert.Contains(t, stderr, "Canceled", "interrupted, not timed out")
		assert.Contains(t, stderr, "the scan did not finish", args)
		if args[0] == "ensure" {
			assert.Contains(t, stdout, "undecided")
			assert.NotContains(t, stdout, "refused")
			assert.Equal(t, map[string]string{"sess": "", "clicks": "", "meta": ""}, policies(t, w.e.Admin), "nothing changed")
		}
	}
}

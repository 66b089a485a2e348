package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cellttl/ttl/sweep"
)

// A round that -round-timeout ended before it began (Bigtable out of
// reach while the round reads the policies) says so on stderr and counts
// as a round that failed; one that the command's own end cancelled (an
// interrupt, SIGTERM) says nothing.
func TestSweepRoundTimeoutSaysSo(t *testing.T) {
	c := &config{}
	c.sweep.every = 3 * time.Second
	var stdout, stderr bytes.Buffer
	o := newSweepOutput(c, &stdout, &stderr)
	timedOut := fmt.Errorf("%w of 5s (Options.RoundTimeout); the next resumes it: %w", sweep.ErrRoundTimeout, context.DeadlineExceeded)
	o.round(nil, timedOut)
	if !strings.Contains(stderr.String(), "did not finish within its timeout of 5s") || o.rounds != 1 || o.err == nil {
		t.Errorf("a round that timed out: stderr %q, rounds %d, err %v", stderr.String(), o.rounds, o.err)
	}
	stderr.Reset()
	o.round(nil, context.Canceled)
	if stderr.Len() != 0 || o.rounds != 1 {
		t.Errorf("a round the command's end cancelled: stderr %q, rounds %d", stderr.String(), o.rounds)
	}
}
